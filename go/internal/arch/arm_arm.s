//go:build linux

#include "textflag.h"

// Go's arm assembler has no mnemonics for these coprocessor and barrier
// instructions, so each is written as its A32 encoding (cond AL), with the
// instruction in the comment beside it. They name fixed registers: R0 and
// R1 receive the counter, low word first.
//
// Which kernels grant access: Linux's arch timer driver sets CNTKCTL.PL0VCTEN
// (user access to the virtual counter) on every CPU it brings up, in the same
// step that may enable the timer's event stream and advertise it as
// HWCAP_EVTSTRM; see arm.go for the rule the callers apply.

// func Cntvct() uint64
// MRRC p15, 1, R0, R1, c14 reads the 64-bit virtual count, CNTVCT, into
// R0 (bits 0-31) and R1 (bits 32-63) in one access, so the two halves
// always belong to the same count (no torn read to retry, unlike reading
// two 32-bit registers). Register output only; not ordered with earlier
// loads: the CPU may execute it early.
TEXT ·Cntvct(SB), NOSPLIT, $0-8
	WORD $0xec510f1e        // MRRC p15, 1, R0, R1, c14
	MOVW R0, ret_lo+0(FP)
	MOVW R1, ret_hi+4(FP)
	RET

// func IsbCntvct() uint64
// The ordered read, built as on arm64 (aarch64_arm64.s).
//
// Before: the Arm architecture lets a read of the counter occur
// speculatively, out of order with other instructions, like RDTSC. ISB
// waits for every earlier instruction to complete, so every earlier load
// has its value, and refetches what follows, so the MRRC executes after
// them.
//
// After: a coprocessor register read is not a memory access, so a later
// release store (DMB; STR) would not wait for it, and another goroutine
// could be handed this reading before the counter was read. A load whose
// address depends on the value closes that: EOR of the low word with
// itself is zero but exists only once the MRRC has written R0; added to
// the stack pointer (R13) it gives an address that is always mapped and
// readable; the load cannot be performed before the MRRC completes, and,
// being a load, it is ordered before every later DMB and store.
TEXT ·IsbCntvct(SB), NOSPLIT, $0-8
	WORD $0xf57ff06f        // ISB SY
	WORD $0xec510f1e        // MRRC p15, 1, R0, R1, c14
	EOR  R0, R0, R2         // R2 = 0, dependent on the counter value
	ADD  R13, R2, R2        // R2 = the stack pointer, dependent on the value
	MOVW (R2), R3           // the dependent load (value unused)
	MOVW R0, ret_lo+0(FP)
	MOVW R1, ret_hi+4(FP)
	RET

// func Cntfrq() uint32
// MRC p15, 0, R0, c14, c0, 0 reads CNTFRQ, the frequency firmware wrote
// at boot (32 bits). User space may read it when it may read either
// counter. Register output only.
TEXT ·Cntfrq(SB), NOSPLIT, $0-4
	WORD $0xee1e0f10        // MRC p15, 0, R0, c14, c0, 0
	MOVW R0, ret+0(FP)
	RET
