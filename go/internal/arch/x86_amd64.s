#include "textflag.h"

// func Rdtsc() uint64
// The bare counter read: RDTSC puts the counter in EDX:EAX. Not ordered with
// earlier loads (see OrderedNanotime); touches no memory.
TEXT ·Rdtsc(SB), NOSPLIT, $0-8
	RDTSC
	SHLQ $32, DX
	ORQ  DX, AX
	MOVQ AX, ret+0(FP)
	RET

// func Rdtscp() uint64
// RDTSCP waits for all earlier instructions (and so loads) to complete before
// reading the counter; it also writes the processor ID to ECX, discarded here.
// Only called after cpuid showed RDTSCP (CPUID.80000001H:EDX[27]).
TEXT ·Rdtscp(SB), NOSPLIT, $0-8
	RDTSCP
	SHLQ $32, DX
	ORQ  DX, AX
	MOVQ AX, ret+0(FP)
	RET

// func LfenceRdtsc() uint64
// LFENCE (SSE2, present on every amd64 CPU) keeps RDTSC from executing
// before earlier loads complete; used when RDTSCP is hidden.
TEXT ·LfenceRdtsc(SB), NOSPLIT, $0-8
	LFENCE
	RDTSC
	SHLQ $32, DX
	ORQ  DX, AX
	MOVQ AX, ret+0(FP)
	RET

// func Cpuid(leaf, sub uint32) (eax, ebx, ecx, edx uint32)
// CPUID is unprivileged on every amd64 CPU; leaves above the maximum return
// harmless data, and callers check the maximum first.
TEXT ·Cpuid(SB), NOSPLIT, $0-24
	MOVL leaf+0(FP), AX
	MOVL sub+4(FP), CX
	CPUID
	MOVL AX, eax+8(FP)
	MOVL BX, ebx+12(FP)
	MOVL CX, ecx+16(FP)
	MOVL DX, edx+20(FP)
	RET
