#include "textflag.h"
#include "go_asm.h"

// BootNanotime's fast path: Nanotime's (read_amd64.s, whose reasoning holds
// here: one atomic pointer load, an immutable state, a nil pointer or a zero
// span to the slow path before the counter is read, lineShift 64 so the
// line's value is offset + the high half of t * slope), plus the same
// state's boot offset, added with wrap-around as the Go code does
// (boot_generic.go; the tests hold the two to each other).

// func bootNanotimeCounter() int64
TEXT ·bootNanotimeCounter(SB), NOSPLIT, $0-8
	MOVQ  ·proc+timekeeper_view(SB), SI
	TESTQ SI, SI
	JZ    slow
	MOVQ  state_span(SI), R8
	TESTQ R8, R8
	JZ    slow
	RDTSC
	SHLQ  $32, DX
	ORQ   DX, AX
	MOVQ  AX, BX
	SUBQ  state_takeover(SI), BX
	CMPQ  BX, R8
	JAE   slow
	MULQ  (state_line+line_Slope)(SI)
	ADDQ  (state_line+line_Offset)(SI), DX
	ADDQ  state_bootOffset(SI), DX
	MOVQ  DX, ret+0(FP)
	RET

slow:
	JMP ·bootNanotimeSlow(SB)
