//go:build linux

package counter

// Implemented in counter_ppc64le.s.

// Mftb is the bare read of the time base (MFTB), not ordered with earlier
// loads.
func Mftb() uint64

// SyncMftb reads the time base after every earlier load and store has been
// performed (SYNC), and makes a load that depends on the value, so that the
// read completes before any later store (see counter_ppc64le.s).
func SyncMftb() uint64
