//go:build linux && (amd64 || arm64 || riscv64 || loong64)

package main

import "testing"

// A reading at or above the one it follows is no violation; one below it
// counts within the counters' agreement up to it, beyond it past it, and
// only beyond ones fail the bound.
func TestViolationsApartBySize(t *testing.T) {
	v := violations{agreementNs: 7}
	v.note(100, 100)
	v.note(100, 101)
	if v != (violations{agreementNs: 7}) {
		t.Fatalf("no violation counted as one: %+v", v)
	}
	v.note(100, 93) // 7 below: within
	v.note(100, 98)
	if v.beyond != 0 || v.within != 2 || v.worstWithinNs != 7 || !v.check().ok() {
		t.Fatalf("within: %+v", v)
	}
	v.note(100, 92) // 8 below: beyond
	if v.beyond != 1 || v.within != 2 || v.check().ok() {
		t.Fatalf("beyond: %+v", v)
	}
	m := violations{agreementNs: 7}
	m.merge(v)
	m.merge(v)
	if m.beyond != 2 || m.within != 4 || m.worstWithinNs != 7 {
		t.Fatalf("merged: %+v", m)
	}
	// On one thread, any step back is fastnow's.
	one := violations{agreementNs: 7}
	one.noteSameThread(100, 100)
	one.noteSameThread(100, 99)
	if one.beyond != 1 || one.within != 0 {
		t.Fatalf("one thread: %+v", one)
	}
}
