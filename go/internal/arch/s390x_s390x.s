//go:build linux

#include "textflag.h"

// func Stckf() uint64
// STORE CLOCK FAST stores bits 0-63 of the TOD clock, the one time-of-day
// clock every CPU of the configuration reads, into the result slot. It
// performs no serialization, so it is not ordered with earlier loads; bits
// to the right of the one the clock increments are stored as zeros.
// Unprivileged; every machine Go supports (z13 and later) has the
// store-clock-fast facility.
TEXT ·Stckf(SB), NOSPLIT, $0-8
	STCKF ret+0(FP)
	RET

// func SyncStckf() uint64
// The ordered read: STORE CLOCK FAST between two serializations (SYNC is
// BCR 14,0, fast-BCR serialization, which every machine Go supports has). A
// serialization completes every conceptually earlier storage access before
// any later instruction is fetched: the clock is read once every earlier
// load has its value, and every later storage access, a store publishing
// this reading among them, comes after the value was stored. It is what
// STORE CLOCK does around its own fetch, without what STORE CLOCK adds: to
// make each value unique it may set bits right of the one the clock
// increments, where STORE CLOCK FAST stores zeros, and so exceed a STORE
// CLOCK FAST value read after it in the same increment. Both reads store
// the clock alone here, so an ordered value is never above a bare one read
// after it.
TEXT ·SyncStckf(SB), NOSPLIT, $0-8
	SYNC
	STCKF ret+0(FP)
	SYNC
	RET

// func StckfState() (tod uint64, cc uint8)
// STORE CLOCK FAST, then IPM, which copies the condition code into bits
// 34-35 of R1 (numbering from the left, so 29-28 from the right), beside
// the program mask: shifted down and masked, the code alone.
TEXT ·StckfState(SB), NOSPLIT, $0-9
	STCKF tod+0(FP)
	IPM   R1
	SRD   $28, R1
	AND   $3, R1
	MOVB  R1, cc+8(FP)
	RET
