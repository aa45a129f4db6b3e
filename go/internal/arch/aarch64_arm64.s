//go:build !windows

#include "textflag.h"

// func Cntvct() uint64
// The generic timer's virtual counter, readable from EL0 on Linux; register
// output only, no memory touched.
TEXT ·Cntvct(SB), NOSPLIT, $0-8
	MRS  CNTVCT_EL0, R0
	MOVD R0, ret+0(FP)
	RET

// func IsbCntvct() uint64
// The ordered read: the counter is read after every earlier load, and the
// read is complete before any later store can become visible.
//
// Before: MRS CNTVCT_EL0 may execute early, like RDTSC. ISB waits for every
// earlier instruction to complete (so every earlier load has its value) and
// refetches what follows, so the MRS runs after them.
//
// After: a system-register read is not a memory access, so the barriers and
// acquire/release rules that order memory accesses do not apply to it. A
// later release store (publishing this reading to another goroutine) waits
// for earlier loads and stores, not for the MRS, so it could become visible
// while the MRS has not yet read the counter, and the other goroutine could
// then read a smaller counter value than the one published: the ordered
// clocks' guarantee would break. So one memory access is made to depend on
// the value: EOR of the value with itself is zero but cannot be computed
// before the value exists; added to the stack pointer it gives an address
// that is always mapped and readable; the load from it cannot be performed
// before the MRS completes, and, being a load, it is ordered before every
// later release store and barrier. (Linux's vDSO orders its counter reads
// the same way.)
TEXT ·IsbCntvct(SB), NOSPLIT, $0-8
	ISB  $15
	MRS  CNTVCT_EL0, R0
	EOR  R0, R0, R1      // R1 = 0, dependent on the counter value
	MOVD RSP, R2
	ADD  R1, R2, R2      // R2 = RSP, dependent on the counter value
	MOVD (R2), R3        // the dependent load (value unused)
	MOVD R0, ret+0(FP)
	RET

// func Cntfrq() uint64
// The counter frequency firmware published, readable from EL0.
TEXT ·Cntfrq(SB), NOSPLIT, $0-8
	MRS  CNTFRQ_EL0, R0
	MOVD R0, ret+0(FP)
	RET
