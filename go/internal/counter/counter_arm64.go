package counter

// Implemented in counter_arm64.s.

// Cntvct is the bare generic-timer virtual counter read (MRS CNTVCT_EL0).
func Cntvct() uint64

// IsbCntvct reads the counter after an ISB, so after every earlier load,
// and makes a load that depends on the value, so that the read completes
// before any later store (see counter_arm64.s).
func IsbCntvct() uint64

// Cntfrq is the counter frequency firmware published (CNTFRQ_EL0), 0 if unset.
func Cntfrq() uint64
