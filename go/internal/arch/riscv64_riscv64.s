//go:build linux

#include "textflag.h"

// func Rdtime() uint64
// RDTIME is CSRRS rd, time, x0: the Zicntr time counter, which Linux lets
// user space read. Register output only.
TEXT ·Rdtime(SB), NOSPLIT, $0-8
	RDTIME X10
	MOV    X10, ret+0(FP)
	RET

// func FenceRdtime() uint64
// The ordered read.
//
// Before: the Zicsr extension leaves CSR reads unordered with memory
// accesses, except through syntactic dependencies and FENCE, for which it
// counts a CSR read as device input (I). So a FENCE whose predecessor set
// is R (earlier loads) and whose successor set is I (later input, the CSR
// read among it) makes RDTIME wait until every earlier load has its value.
// The assembler's FENCE mnemonic is the full fence (IORW, IORW); the
// narrower FENCE R,I is written as its encoding: fm 0, pred 0b0010 (R),
// succ 0b1000 (I), rs1 = rd = x0, funct3 0, opcode MISC-MEM (0x0f).
//
// After: a CSR read is not a memory access, so a later release store
// (FENCE RW,W before it) would not wait for it, and another hart could be
// handed this reading before the counter was read. A load whose address
// depends on the value closes that: XOR of the value with itself is zero
// but exists only once the value does; added to the stack pointer it gives
// an address that is always mapped and readable; the load cannot be
// performed before RDTIME completes, and as a load it is ordered before
// every later FENCE R,W / RW,W. (Linux's vDSO uses no fence here: the first
// RISC-V systems trapped RDTIME into firmware, itself a serialisation; a
// hardware time CSR gives no such guarantee.)
TEXT ·FenceRdtime(SB), NOSPLIT, $0-8
	WORD   $0x0280000f      // FENCE R,I
	RDTIME X10
	XOR    X10, X10, X11    // X11 = 0, dependent on the value
	ADD    X2, X11, X11     // X11 = SP, dependent on the value
	MOV    0(X11), X12      // the dependent load (value unused)
	MOV    X10, ret+0(FP)
	RET
