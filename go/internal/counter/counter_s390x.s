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

// func Stck() uint64
// The ordered read: the Principles of Operation specify that for STORE
// CLOCK "a serialization function is performed before the value of the
// clock is fetched and again after the value is placed in storage". So the
// clock is read once every earlier storage access has completed (every
// earlier load has its value), and every later storage access, a store
// publishing this reading among them, comes after the value was stored.
// No barrier or dependent load is needed. STORE CLOCK may fill the bits
// right of the one the clock increments with a value that makes each
// reading unique; they are in the same units as STORE CLOCK FAST's, so the
// two reads compare (less than one increment apart).
TEXT ·Stck(SB), NOSPLIT, $0-8
	STCK ret+0(FP)
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
