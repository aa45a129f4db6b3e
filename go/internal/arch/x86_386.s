//go:build linux

#include "textflag.h"

// The amd64 functions (x86_amd64.s) for 32-bit x86: the instructions
// are the same; a uint64 result is returned in two words, the low one first
// (RDTSC's EAX, then EDX), where amd64 joins them in one register.

// func Rdtsc() uint64
// The bare counter read: RDTSC puts the counter in EDX:EAX. Not ordered with
// earlier loads; touches no memory.
TEXT ·Rdtsc(SB), NOSPLIT, $0-8
	RDTSC
	MOVL AX, ret_lo+0(FP)
	MOVL DX, ret_hi+4(FP)
	RET

// func Rdtscp() uint64
// RDTSCP waits for all earlier instructions (and so loads) to complete
// before reading the counter; it also writes the processor ID to ECX,
// discarded here. Only called after CPUID showed RDTSCP.
TEXT ·Rdtscp(SB), NOSPLIT, $0-8
	RDTSCP
	MOVL AX, ret_lo+0(FP)
	MOVL DX, ret_hi+4(FP)
	RET

// func LfenceRdtsc() uint64
// LFENCE keeps RDTSC from executing before earlier loads complete; used
// when RDTSCP is missing. Unlike on amd64, LFENCE is not part of every
// 32-bit x86 CPU (it came with SSE2), so this is only called after CPUID
// showed SSE2.
TEXT ·LfenceRdtsc(SB), NOSPLIT, $0-8
	LFENCE
	RDTSC
	MOVL AX, ret_lo+0(FP)
	MOVL DX, ret_hi+4(FP)
	RET

// func Cpuid(leaf, sub uint32) (eax, ebx, ecx, edx uint32)
// CPUID is unprivileged; every CPU Go runs on has it. Leaves above the
// maximum return harmless data, and callers check the maximum first. BX is
// an ordinary register in Go's 386 assembly (no PIC base to preserve).
TEXT ·Cpuid(SB), NOSPLIT, $0-24
	MOVL leaf+0(FP), AX
	MOVL sub+4(FP), CX
	CPUID
	MOVL AX, eax+8(FP)
	MOVL BX, ebx+12(FP)
	MOVL CX, ecx+16(FP)
	MOVL DX, edx+20(FP)
	RET
