#include "textflag.h"
#include "go_asm.h"

// The read base's fast path (read.go) for Nanotime, OrderedNanotime,
// BootNanotime and UnixNano, one call each (read_generic.go is the same in
// Go, and the tests hold these to it).
//
// SAFETY: proc.view (and proc.state, for the *Real variants at the end)
// is an atomic.Pointer[state] whose only word is the pointer (the tests
// check its size and the offsets below), and a plain MOVQ is the atomic
// load sync/atomic performs on amd64. A published state is immutable, so
// every field read through the pointer belongs to that one state, the
// offset words included. proc.view is nil unless its state is a counter
// state (timekeeper.view), so a nil view (nothing published yet, the OS
// source, a test's ManualClock) is all its fast paths check before they
// read the counter; proc.state may hold any state, so the *Real variants
// also send a zero span (the OS source) to the slow path first. A zero
// offset word (0: read the system clock) goes there too. lineShift is 64 on
// amd64, so a line's value at t is offset + the high half of t * slope:
// MULQ leaves it in DX. The additions wrap, as line.At and the Go code do.
// Anything off the fast path tail-calls the Go slow path, which writes the
// result slot of this frame.

// The fast paths are built from these pieces. Everything off the fast path
// jumps to the label slow, which tail-calls slowfn.
//
// LOAD_VIEW(src): SI = the state pointer at src; to slow if nil. For
// proc.view, whose state is always a counter state.
#define LOAD_VIEW(src) \
	MOVQ  src, SI; \
	TESTQ SI, SI; \
	JZ    slow

// LOAD_STATE(src): LOAD_VIEW, and to slow if the span is zero (not a
// counter state). For proc.state. (The view's fast paths leave this
// check out because it costs them a measurable share of the read on
// Intel cores: BENCHMARKS.md, "Intel Xeon (this release)".)
#define LOAD_STATE(src) \
	LOAD_VIEW(src); \
	CMPQ  state_span(SI), $0; \
	JE    slow

// LOAD_OFFSET(field): R9 = the state's offset word at field; to slow if
// zero.
#define LOAD_OFFSET(field) \
	MOVQ  field(SI), R9; \
	TESTQ R9, R9; \
	JZ    slow

// ON_PIECE: with the counter in DX:AX, DX = the current piece's value
// when start <= t < trigger, start being the larger of the take-over point
// and the floor (one unsigned compare: t - start < span; a counter that
// went back below the floor wraps to a large value, and a zero span sends
// every value to slow). MULQ takes AX, so the difference is taken in BX.
#define ON_PIECE \
	SHLQ  $32, DX; \
	ORQ   DX, AX; \
	MOVQ  AX, BX; \
	SUBQ  state_start(SI), BX; \
	CMPQ  BX, state_span(SI); \
	JAE   slow; \
	MULQ  (state_line+line_Slope)(SI); \
	ADDQ  (state_line+line_Offset)(SI), DX

// RETURN(slowfn): returns DX.
#define RETURN(slowfn) \
	MOVQ  DX, ret+0(FP); \
	RET; \
slow: \
	JMP slowfn(SB)

// BASE(load, src, slowfn): the precise reading through the state pointer
// at src, loaded with load (LOAD_VIEW or LOAD_STATE).
#define BASE(load, src, slowfn) \
	load(src); \
	RDTSC; \
	ON_PIECE; \
	RETURN(slowfn)

// BASE_PLUS(load, src, field, slowfn): BASE plus the same state's offset word at
// field (offsets.go).
#define BASE_PLUS(load, src, field, slowfn) \
	load(src); \
	LOAD_OFFSET(field); \
	RDTSC; \
	ON_PIECE; \
	ADDQ  R9, DX; \
	RETURN(slowfn)

// ORDERED_BASE(load, src, slowfn): BASE with the ordered read (RDTSCP, or
// LFENCE;RDTSC where orderedAlt says so; both wait for every earlier
// instruction), taken BEFORE the state is loaded, so that the loads overlap
// the read instead of being waited for (read_generic.go says why the result
// is the same). Only proc.counterRead comes first: until the counter has
// been the source, reading it may fault.
#define ORDERED_BASE(load, src, slowfn) \
	CMPL  ·proc+timekeeper_counterRead(SB), $0; \
	JE    slow; \
	CMPB  ·orderedAlt(SB), $0; \
	JNE   alt; \
	RDTSCP; \
	JMP   read; \
alt: \
	LFENCE; \
	RDTSC; \
read: \
	load(src); \
	ON_PIECE; \
	RETURN(slowfn)

// On proc.view: what a test's ManualClock can take over (UseClock).

// func nanotimeCounter() int64
TEXT ·nanotimeCounter(SB), NOSPLIT, $0-8
	BASE(LOAD_VIEW, ·proc+timekeeper_view(SB), ·nanotimeSlow)

// func orderedNanotimeCounter() int64
TEXT ·orderedNanotimeCounter(SB), NOSPLIT, $0-8
	ORDERED_BASE(LOAD_VIEW, ·proc+timekeeper_view(SB), ·orderedNanotimeSlow)

// func bootNanotimeCounter() int64
TEXT ·bootNanotimeCounter(SB), NOSPLIT, $0-8
	BASE_PLUS(LOAD_VIEW, ·proc+timekeeper_view(SB), state_bootOffset, ·bootNanotimeSlow)

// func unixNanoCounter() int64
TEXT ·unixNanoCounter(SB), NOSPLIT, $0-8
	BASE_PLUS(LOAD_VIEW, ·proc+timekeeper_view(SB), state_wallOffset, ·unixNanoSlow)

// On proc.state: the real clocks, whatever a test's ManualClock says (for
// the high-water mark and the coarse tier's cache).

// func nanotimeReal() int64
TEXT ·nanotimeReal(SB), NOSPLIT, $0-8
	BASE(LOAD_STATE, ·proc+timekeeper_state(SB), ·nanotimeRealSlow)

// func orderedNanotimeReal() int64
TEXT ·orderedNanotimeReal(SB), NOSPLIT, $0-8
	ORDERED_BASE(LOAD_STATE, ·proc+timekeeper_state(SB), ·orderedNanotimeRealSlow)

// func unixNanoReal() int64
TEXT ·unixNanoReal(SB), NOSPLIT, $0-8
	BASE_PLUS(LOAD_STATE, ·proc+timekeeper_state(SB), state_wallOffset, ·unixNanoRealSlow)

// func asmLayout() (stateField, viewField, start, span, lineOffset, lineSlope, bootOffset, wallOffset uintptr)
TEXT ·asmLayout(SB), NOSPLIT, $0-64
	MOVQ $timekeeper_state, AX
	MOVQ AX, stateField+0(FP)
	MOVQ $timekeeper_view, AX
	MOVQ AX, viewField+8(FP)
	MOVQ $state_start, AX
	MOVQ AX, start+16(FP)
	MOVQ $state_span, AX
	MOVQ AX, span+24(FP)
	MOVQ $(state_line+line_Offset), AX
	MOVQ AX, lineOffset+32(FP)
	MOVQ $(state_line+line_Slope), AX
	MOVQ AX, lineSlope+40(FP)
	MOVQ $state_bootOffset, AX
	MOVQ AX, bootOffset+48(FP)
	MOVQ $state_wallOffset, AX
	MOVQ AX, wallOffset+56(FP)
	RET
