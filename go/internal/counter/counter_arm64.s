#include "textflag.h"

// func Cntvct() uint64
// The generic timer's virtual counter, readable from EL0 on Linux; register
// output only, no memory touched.
TEXT ·Cntvct(SB), NOSPLIT, $0-8
	MRS  CNTVCT_EL0, R0
	MOVD R0, ret+0(FP)
	RET

// func IsbCntvct() uint64
// ISB makes the counter read wait for every earlier instruction (and so load).
TEXT ·IsbCntvct(SB), NOSPLIT, $0-8
	ISB  $15
	MRS  CNTVCT_EL0, R0
	MOVD R0, ret+0(FP)
	RET

// func Cntfrq() uint64
// The counter frequency firmware published, readable from EL0.
TEXT ·Cntfrq(SB), NOSPLIT, $0-8
	MRS  CNTFRQ_EL0, R0
	MOVD R0, ret+0(FP)
	RET
