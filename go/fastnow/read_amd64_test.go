package fastnow

import (
	"sync/atomic"
	"testing"
	"unsafe"
)

// The assembly (read_amd64.s) loads proc.view and proc.state with a
// plain MOVQ at proc+timekeeper_view and proc+timekeeper_state, so atomic.Pointer's pointer must be its only word,
// and reads the state's fields at the go_asm.h offsets, which must be the
// Go layout's.
func TestAssemblyLayout(t *testing.T) {
	if unsafe.Sizeof(atomic.Pointer[state]{}) != unsafe.Sizeof(uintptr(0)) {
		t.Fatalf("atomic.Pointer is %d bytes", unsafe.Sizeof(atomic.Pointer[state]{}))
	}
	var s state
	want := []uintptr{
		unsafe.Offsetof(proc.state), unsafe.Offsetof(proc.view), unsafe.Offsetof(s.takeover), unsafe.Offsetof(s.span),
		unsafe.Offsetof(s.line) + unsafe.Offsetof(s.line.Offset), unsafe.Offsetof(s.line) + unsafe.Offsetof(s.line.Slope),
		unsafe.Offsetof(s.wall) + unsafe.Offsetof(s.wall.Offset), unsafe.Offsetof(s.wall) + unsafe.Offsetof(s.wall.Slope),
		unsafe.Offsetof(s.wallDeadline),
	}
	a, b, c, d, e, f, g, h, i := asmLayout()
	got := []uintptr{a, b, c, d, e, f, g, h, i}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("offset %d: assembly %d, Go %d", i, got[i], want[i])
		}
	}
	if lineShift != 64 {
		t.Fatal("the assembly takes the high half of the product: lineShift must be 64")
	}
}
