#include "textflag.h"
#include "go_asm.h"

// func rdtsc() uint64
// The bare counter read: RDTSC puts the counter in EDX:EAX. Not ordered with
// earlier loads (see OrderedNanotime); touches no memory.
TEXT ·rdtsc(SB), NOSPLIT, $0-8
	RDTSC
	SHLQ $32, DX
	ORQ  DX, AX
	MOVQ AX, ret+0(FP)
	RET

// func rdtscp() uint64
// RDTSCP waits for all earlier instructions (and so loads) to complete before
// reading the counter; it also writes the processor ID to ECX, discarded here.
// Only called after cpuid showed RDTSCP (CPUID.80000001H:EDX[27]).
TEXT ·rdtscp(SB), NOSPLIT, $0-8
	RDTSCP
	SHLQ $32, DX
	ORQ  DX, AX
	MOVQ AX, ret+0(FP)
	RET

// func lfenceRdtsc() uint64
// LFENCE (SSE2, present on every amd64 CPU) keeps RDTSC from executing
// before earlier loads complete; used when RDTSCP is hidden.
TEXT ·lfenceRdtsc(SB), NOSPLIT, $0-8
	LFENCE
	RDTSC
	SHLQ $32, DX
	ORQ  DX, AX
	MOVQ AX, ret+0(FP)
	RET

// func cpuid(leaf, sub uint32) (eax, ebx, ecx, edx uint32)
// CPUID is unprivileged on every amd64 CPU; leaves above the maximum return
// harmless data, and callers check the maximum first.
TEXT ·cpuid(SB), NOSPLIT, $0-24
	MOVL leaf+0(FP), AX
	MOVL sub+4(FP), CX
	CPUID
	MOVL AX, eax+8(FP)
	MOVL BX, ebx+12(FP)
	MOVL CX, ecx+16(FP)
	MOVL DX, edx+20(FP)
	RET
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
