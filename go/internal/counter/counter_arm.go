//go:build linux

package counter

// Implemented in counter_arm.s. On 32-bit Arm the generic timer is reached
// through coprocessor 15, and only where the kernel granted user space
// access to it: every function here is UNDEFINED (SIGILL) otherwise, so
// callers decide first, from what the kernel says, and call none of them
// when access is not known to be granted (fastnow's arch_arm.go).

// Cntvct is the bare read of the generic timer's virtual counter (MRRC p15,
// 1, Rt, Rt2, c14: CNTVCT), not ordered with earlier loads.
func Cntvct() uint64

// IsbCntvct reads the counter after an ISB, so after every earlier load,
// and makes a load that depends on the value, so that the read completes
// before any later store (see counter_arm.s).
func IsbCntvct() uint64

// Cntfrq is the counter frequency firmware published (MRC p15, 0, Rt, c14,
// c0, 0: CNTFRQ), 0 if unset. User space may read it whenever it may read
// the counter.
func Cntfrq() uint32
