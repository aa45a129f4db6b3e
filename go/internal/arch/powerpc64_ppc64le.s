//go:build linux

#include "textflag.h"

// func Mftb() uint64
// The time base, read with mfspr from SPR 268 (TBR, the 64-bit time base,
// readable in problem state): the form of MFTB the Power ISA recommends
// since version 2.06 (Go's assembler writes it as a MOVD from SPR(268)).
// Register output only; not ordered with earlier loads.
TEXT ·Mftb(SB), NOSPLIT, $0-8
	MOVD SPR(268), R3
	MOVD R3, ret+0(FP)
	RET

// func SyncMftb() uint64
// The ordered read.
//
// Before: the time base is not storage, so neither LWSYNC nor the acquire
// idiom (a dependent branch then ISYNC) orders its read after earlier loads.
// ISYNC alone does not either: the Power ISA says it waits for earlier
// instructions to complete but "may complete before storage accesses
// associated with instructions preceding the isync instruction have been
// performed". SYNC (heavyweight, L=0) does: it completes only once every
// earlier load and store has been performed, and no later instruction is
// initiated until it completes, so the MFTB after it reads the time base
// once every earlier load has its value.
//
// After: a later release store (LWSYNC; STD) waits for earlier loads and
// stores, not for the MFTB, so another goroutine could be handed this
// reading before the time base was read. A load whose address depends on
// the value closes that: XOR of the value with itself is zero but exists
// only once the value does; added to the stack pointer (R1) it gives an
// address that is always mapped and readable; the load cannot be performed
// before the MFTB completes, and as a load it is ordered before every later
// LWSYNC or SYNC.
TEXT ·SyncMftb(SB), NOSPLIT, $0-8
	SYNC
	MOVD SPR(268), R3
	XOR  R3, R3, R4         // R4 = 0, dependent on the value
	ADD  R1, R4, R4         // R4 = SP, dependent on the value
	MOVD 0(R4), R5          // the dependent load (value unused)
	MOVD R3, ret+0(FP)
	RET
