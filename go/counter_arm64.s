#include "textflag.h"

// func cntvct() uint64
// The generic timer's virtual counter, readable from EL0 on Linux; register
// output only, no memory touched.
TEXT ·cntvct(SB), NOSPLIT, $0-8
	MRS  CNTVCT_EL0, R0
	MOVD R0, ret+0(FP)
	RET

// func isbCntvct() uint64
// ISB makes the counter read wait for every earlier instruction (and so load).
TEXT ·isbCntvct(SB), NOSPLIT, $0-8
	ISB  $15
	MRS  CNTVCT_EL0, R0
	MOVD R0, ret+0(FP)
	RET

// func cntfrq() uint64
// The counter frequency firmware published, readable from EL0.
TEXT ·cntfrq(SB), NOSPLIT, $0-8
	MRS  CNTFRQ_EL0, R0
	MOVD R0, ret+0(FP)
	RET
