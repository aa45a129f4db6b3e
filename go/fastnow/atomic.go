package fastnow

import (
	"sync/atomic"
	"time"
)

// AtomicInstant is an Instant that goroutines load and update without a
// lock: the "last seen" stamp of a cache entry, a connection or a
// rate-limit bucket. The zero value holds the zero Instant. It must not be
// copied after first use (go vet reports copies).
//
// StoreIfNewer and StoreMax only ever move the stamp forward, so a stamp
// written late by a slow goroutine never hides a newer one.
type AtomicInstant struct {
	v atomic.Int64
}

// Load returns the stamp.
func (a *AtomicInstant) Load() Instant { return Instant{a.v.Load()} }

// Store sets the stamp to i.
func (a *AtomicInstant) Store(i Instant) { a.v.Store(i.ns) }

// Swap sets the stamp to i and returns the one it replaced.
func (a *AtomicInstant) Swap(i Instant) (old Instant) { return Instant{a.v.Swap(i.ns)} }

// CompareAndSwap sets the stamp to new if it is old, and reports whether it
// did.
func (a *AtomicInstant) CompareAndSwap(old, new Instant) bool {
	return a.v.CompareAndSwap(old.ns, new.ns)
}

// StoreIfNewer sets the stamp to i if i is after it, and reports whether
// the stamp moved.
func (a *AtomicInstant) StoreIfNewer(i Instant) bool { return storeMax(&a.v, i.ns) < i.ns }

// StoreMax sets the stamp to the later of itself and i, and returns the
// stamp it held before.
func (a *AtomicInstant) StoreMax(i Instant) (old Instant) { return Instant{storeMax(&a.v, i.ns)} }

// StoreMin sets the stamp to the earlier of itself and i, and returns the
// stamp it held before.
func (a *AtomicInstant) StoreMin(i Instant) (old Instant) { return Instant{storeMin(&a.v, i.ns)} }

// String formats the stamp as Instant.String does.
func (a *AtomicInstant) String() string { return a.Load().String() }

// AtomicUnixTime is a Unix time in nanoseconds (a UnixNano or
// RecentUnixNano reading) that goroutines load and update without a lock,
// with the same operations as AtomicInstant. The zero value holds 0
// (1970-01-01 UTC). It must not be copied after first use.
//
// Unix time can step back when the system clock is set, so "newer" here
// means a larger value, not a later event; use AtomicInstant to order
// events.
type AtomicUnixTime struct {
	v atomic.Int64
}

// AtomicUnixNano is AtomicUnixTime, under its earlier name.
//
// Deprecated: use AtomicUnixTime, the name the Rust crate gives the same
// stamp.
type AtomicUnixNano = AtomicUnixTime

// Load returns the stamp.
func (a *AtomicUnixTime) Load() int64 { return a.v.Load() }

// LoadTime returns the stamp as a time.Time (in the local zone, without a
// monotonic reading).
func (a *AtomicUnixTime) LoadTime() time.Time { return time.Unix(0, a.v.Load()) }

// Store sets the stamp to ns.
func (a *AtomicUnixTime) Store(ns int64) { a.v.Store(ns) }

// Swap sets the stamp to ns and returns the one it replaced.
func (a *AtomicUnixTime) Swap(ns int64) (old int64) { return a.v.Swap(ns) }

// CompareAndSwap sets the stamp to new if it is old, and reports whether it
// did.
func (a *AtomicUnixTime) CompareAndSwap(old, new int64) bool { return a.v.CompareAndSwap(old, new) }

// StoreIfNewer sets the stamp to ns if ns is larger, and reports whether
// the stamp moved.
func (a *AtomicUnixTime) StoreIfNewer(ns int64) bool { return storeMax(&a.v, ns) < ns }

// StoreMax sets the stamp to the larger of itself and ns, and returns the
// stamp it held before.
func (a *AtomicUnixTime) StoreMax(ns int64) (old int64) { return storeMax(&a.v, ns) }

// StoreMin sets the stamp to the smaller of itself and ns, and returns the
// stamp it held before.
func (a *AtomicUnixTime) StoreMin(ns int64) (old int64) { return storeMin(&a.v, ns) }

// String formats the stamp as an RFC 3339 UTC time with nanoseconds.
func (a *AtomicUnixTime) String() string {
	return a.LoadTime().UTC().Format(time.RFC3339Nano)
}

// storeMax raises v to at least x and returns the value it held before. A
// value already at least x is only loaded, never written, so readers of a
// busy stamp do not pull its cache line away from each other.
func storeMax(v *atomic.Int64, x int64) int64 {
	for {
		old := v.Load()
		if old >= x || v.CompareAndSwap(old, x) {
			return old
		}
	}
}

// storeMin lowers v to at most x and returns the value it held before.
func storeMin(v *atomic.Int64, x int64) int64 {
	for {
		old := v.Load()
		if old <= x || v.CompareAndSwap(old, x) {
			return old
		}
	}
}
