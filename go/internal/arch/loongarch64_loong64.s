//go:build linux

#include "textflag.h"

// func Rdtimed() uint64
// RDTIME.D rd, rj reads the 64-bit Stable Counter into rd and the counter's
// ID into rj (here R0, discarded); unprivileged, register output only.
// (Go's operand order: RDTIMED rj, rd.)
TEXT ·Rdtimed(SB), NOSPLIT, $0-8
	RDTIMED R0, R4
	MOVV    R4, ret+0(FP)
	RET

// func BarrierRdtimed() uint64
// The ordered read.
//
// Before: the LoongArch manual does not say how RDTIME is ordered against
// memory accesses, so this takes the strongest barriers there are. DBAR 0
// completes every earlier load and store; IBAR 0 then keeps every later
// instruction, RDTIME.D among them, from executing before everything ahead
// of it (the barrier included) has completed, as Arm's ISB does. The
// assembler's DBAR with no operand is DBAR 0; IBAR 0 has no mnemonic and
// is written as its encoding (0x38728000: opcode 0x070e5 << 15, hint 0).
//
// After: the counter read is not a memory access, so a later release store
// would not wait for it; a load whose address depends on the value (XOR of
// the value with itself, added to the stack pointer: zero, and always a
// mapped, readable address) cannot be performed before the read completes,
// and orders it before every later barrier. Linux's vDSO reads the counter
// with no barrier at all. This reasoning has only run under emulation
// (qemu-user executes in order), never on LoongArch hardware.
TEXT ·BarrierRdtimed(SB), NOSPLIT, $0-8
	DBAR
	WORD    $0x38728000     // IBAR 0
	RDTIMED R0, R4
	XOR     R4, R4, R5      // R5 = 0, dependent on the value
	ADDV    R3, R5, R5      // R5 = SP (R3), dependent on the value
	MOVV    0(R5), R6       // the dependent load (value unused)
	MOVV    R4, ret+0(FP)
	RET

// func Cpucfg(word uint32) uint32
TEXT ·Cpucfg(SB), NOSPLIT, $0-12
	MOVWU  word+0(FP), R5
	CPUCFG R5, R4
	MOVW   R4, ret+8(FP)
	RET
