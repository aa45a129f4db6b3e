#include "textflag.h"
#include "go_asm.h"

// func nanotimeCounter() int64
// Nanotime in one call: the state check, RDTSC, and params.inRange's
// multiply and shift (nanotime_generic.go is the same in Go, and the tests
// hold this to it). Anything off the fast path (not the counter, or a value
// outside [baseTicks, baseTicks+span)) tail-calls nanotimeSlowCounter.
//
// Reasoning: state and cur are read with plain MOVs, which on amd64 are the
// atomic loads sync/atomic performs (the tests check that their value
// word is at offset 0). cur is non-nil whenever state is stateCounter (it is
// stored first). Within the span the product shifted fits in 64 bits. For
// shift >= 64 the hardware masks the count to 6 bits, giving shift-64 (shift
// is at most 96). Touches no memory but those loads and the result slot.
TEXT ·nanotimeCounter(SB), NOSPLIT, $0-8
	MOVL ·state(SB), AX
	CMPL AX, $const_stateCounter
	JNE  slow
	MOVQ ·cur(SB), SI
	RDTSC
	SHLQ $32, DX
	ORQ  DX, AX
	SUBQ params_baseTicks(SI), AX
	CMPQ AX, params_span(SI)
	JAE  slow
	MOVL (params_scale+Scale_Shift)(SI), CX
	MULQ (params_scale+Scale_Mult)(SI) // DX:AX = (t - baseTicks) * mult
	CMPL CX, $64
	JB   short
	SHRQ CX, DX
	MOVQ DX, AX
	JMP  done
short:
	SHRQ CX, DX, AX // AX = (DX:AX) >> CL
done:
	ADDQ params_baseNs(SI), AX
	MOVQ AX, ret+0(FP)
	RET
slow:
	JMP ·nanotimeSlowCounter(SB)
