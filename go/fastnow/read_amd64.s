#include "textflag.h"
#include "go_asm.h"

// The read fast paths of Nanotime, OrderedNanotime and UnixNano, one call
// each
// (read_generic.go is the same in Go, and the tests hold these to it).
//
// Reasoning: proc.view (and proc.state, for the *Real variants at the end)
// is an atomic.Pointer[state] whose only word is the pointer (the tests
// check its size and the offsets below), and a plain MOVQ is the atomic
// load sync/atomic performs on amd64. A published state is
// immutable, so every field read through the pointer belongs to that one
// state. A nil pointer (nothing published yet) and a zero span or deadline
// (the OS source, or a wall line that must not be used) go to the slow path
// before the counter is read. lineShift is 64 on amd64, so a line's value
// at t is offset + the high half of t * slope: MULQ leaves it in DX. The
// addition wraps, as line.At does. Anything off the fast path tail-calls
// the Go slow path, which writes the result slot of this frame.

// The fast paths are built from three pieces. Everything off the fast path
// jumps to the label slow, which tail-calls slowfn.
//
// STATE_WORD(src, field): SI = the state pointer at src, R8 = its word at
// field; to slow if either is zero (nothing published yet; the OS source,
// or a wall line that must not be used). R8 because RDTSCP writes ECX.
#define STATE_WORD(src, field) \
	MOVQ  src, SI; \
	TESTQ SI, SI; \
	JZ    slow; \
	MOVQ  field(SI), R8; \
	TESTQ R8, R8; \
	JZ    slow

// VALUE_AT(line, slowfn): returns the line's value at t (in AX):
// MULQ leaves DX = (t * slope) >> 64; then the offset is added.
#define VALUE_AT(line, slowfn) \
	MULQ  (line+line_Slope)(SI); \
	ADDQ  (line+line_Offset)(SI), DX; \
	MOVQ  DX, ret+0(FP); \
	RET; \
slow: \
	JMP slowfn(SB)

// ON_PIECE(slowfn): with the counter in DX:AX and span in R8, returns the
// current piece's value when takeover <= t < trigger (one unsigned
// compare: t - takeover < span).
#define ON_PIECE(slowfn) \
	SHLQ  $32, DX; \
	ORQ   DX, AX; \
	MOVQ  AX, BX; \
	SUBQ  state_takeover(SI), BX; \
	CMPQ  BX, R8; \
	JAE   slow; \
	VALUE_AT(state_line, slowfn)

// NANOTIME(src, slowfn): the bare read through the state pointer at src.
#define NANOTIME(src, slowfn) \
	STATE_WORD(src, state_span); \
	RDTSC; \
	ON_PIECE(slowfn)

// ORDERED_NANOTIME(src, slowfn): NANOTIME with the ordered read (RDTSCP,
// or LFENCE;RDTSC where orderedAlt says so; both wait for every earlier
// instruction), taken BEFORE the state is loaded, so that the loads overlap
// the read instead of being waited for (read_generic.go says why the result
// is the same). Only proc.counterRead comes first: until the counter has
// been the source, reading it may fault.
#define ORDERED_NANOTIME(src, slowfn) \
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
	STATE_WORD(src, state_span); \
	ON_PIECE(slowfn)

// UNIX_NANO(src, slowfn): the wall line while t < wallDeadline; wall values
// lie within [0, MaxInt64] there (the line is published only well inside
// that range).
#define UNIX_NANO(src, slowfn) \
	STATE_WORD(src, state_wallDeadline); \
	RDTSC; \
	SHLQ  $32, DX; \
	ORQ   DX, AX; \
	CMPQ  AX, R8; \
	JAE   slow; \
	VALUE_AT(state_wall, slowfn)

// On proc.view: what a test's ManualClock can take over (UseClock).

// func nanotimeCounter() int64
TEXT ·nanotimeCounter(SB), NOSPLIT, $0-8
	NANOTIME(·proc+timekeeper_view(SB), ·nanotimeSlow)

// func orderedNanotimeCounter() int64
TEXT ·orderedNanotimeCounter(SB), NOSPLIT, $0-8
	ORDERED_NANOTIME(·proc+timekeeper_view(SB), ·orderedNanotimeSlow)

// func unixNanoCounter() int64
TEXT ·unixNanoCounter(SB), NOSPLIT, $0-8
	UNIX_NANO(·proc+timekeeper_view(SB), ·unixNanoSlow)

// On proc.state: the real clocks, whatever a test's ManualClock says (for
// the high-water mark and the coarse tier's cache).

// func nanotimeReal() int64
TEXT ·nanotimeReal(SB), NOSPLIT, $0-8
	NANOTIME(·proc+timekeeper_state(SB), ·nanotimeRealSlow)

// func orderedNanotimeReal() int64
TEXT ·orderedNanotimeReal(SB), NOSPLIT, $0-8
	ORDERED_NANOTIME(·proc+timekeeper_state(SB), ·orderedNanotimeRealSlow)

// func unixNanoReal() int64
TEXT ·unixNanoReal(SB), NOSPLIT, $0-8
	UNIX_NANO(·proc+timekeeper_state(SB), ·unixNanoRealSlow)

// func asmLayout() (stateField, viewField, takeover, span, lineOffset, lineSlope, wallOffset, wallSlope, wallDeadline uintptr)
TEXT ·asmLayout(SB), NOSPLIT, $0-72
	MOVQ $timekeeper_state, AX
	MOVQ AX, stateField+0(FP)
	MOVQ $timekeeper_view, AX
	MOVQ AX, viewField+8(FP)
	MOVQ $state_takeover, AX
	MOVQ AX, takeover+16(FP)
	MOVQ $state_span, AX
	MOVQ AX, span+24(FP)
	MOVQ $(state_line+line_Offset), AX
	MOVQ AX, lineOffset+32(FP)
	MOVQ $(state_line+line_Slope), AX
	MOVQ AX, lineSlope+40(FP)
	MOVQ $(state_wall+line_Offset), AX
	MOVQ AX, wallOffset+48(FP)
	MOVQ $(state_wall+line_Slope), AX
	MOVQ AX, wallSlope+56(FP)
	MOVQ $state_wallDeadline, AX
	MOVQ AX, wallDeadline+64(FP)
	RET
