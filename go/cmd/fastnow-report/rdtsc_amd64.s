#include "textflag.h"

// func rdtsc() uint64 — the bare counter read, the floor the report compares
// fastnow.Nanotime against (an assembly function call, as Go requires).
TEXT ·rdtsc(SB), NOSPLIT, $0-8
	RDTSC
	SHLQ $32, DX
	ORQ  DX, AX
	MOVQ AX, ret+0(FP)
	RET
