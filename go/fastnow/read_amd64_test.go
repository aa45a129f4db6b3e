package fastnow

import (
	"sync/atomic"
	"testing"
	"unsafe"
)

// The assembly (read_amd64.s) loads proc.view and
// proc.state with a plain MOVQ at proc+timekeeper_view and
// proc+timekeeper_state, so atomic.Pointer's pointer must be its only word,
// and reads the state's fields at the go_asm.h offsets, which must be the Go
// layout's. The fields a fast path loads (start, span, the line, the boot
// and wall offsets) come first and adjacent, within one 64-byte cache line
// of the state's start.
func TestAssemblyLayout(t *testing.T) {
	if unsafe.Sizeof(atomic.Pointer[state]{}) != unsafe.Sizeof(uintptr(0)) {
		t.Fatalf("atomic.Pointer is %d bytes", unsafe.Sizeof(atomic.Pointer[state]{}))
	}
	var s state
	want := []uintptr{
		unsafe.Offsetof(proc.state), unsafe.Offsetof(proc.view), unsafe.Offsetof(s.start), unsafe.Offsetof(s.span),
		unsafe.Offsetof(s.line) + unsafe.Offsetof(s.line.Offset), unsafe.Offsetof(s.line) + unsafe.Offsetof(s.line.Slope),
		unsafe.Offsetof(s.bootOffset), unsafe.Offsetof(s.wallOffset),
	}
	a, b, c, d, e, f, g, h := asmLayout()
	got := []uintptr{a, b, c, d, e, f, g, h}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("offset %d: assembly %d, Go %d", i, got[i], want[i])
		}
	}
	// The fast paths' words, in the order the state declares them: each
	// follows the one before, from the state's first byte.
	for i, off := range got[2:] {
		if off != uintptr(i)*8 {
			t.Fatalf("fast-path word %d at offset %d, not %d: the fast paths' words must come first, adjacent", i, off, i*8)
		}
	}
	if lineShift != 64 {
		t.Fatal("the assembly takes the high half of the product: lineShift must be 64")
	}
}
