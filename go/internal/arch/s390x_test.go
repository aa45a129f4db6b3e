//go:build linux && s390x

package arch

import "testing"

// The ordered read stores the clock as the bare read does, so it is never
// above a bare read after it, nor below one before it. (Made with STORE
// CLOCK, a bare read after it could be lower: STORE CLOCK may set bits to
// the right of the one the clock increments, STORE CLOCK FAST stores zeros
// there. An emulator increments every bit, so only a machine that does not
// can show that case.)
func TestOrderedReadMixesWithBare(t *testing.T) {
	for i := 0; i < 100_000; i++ {
		a := Stckf()
		b := SyncStckf()
		c := Stckf()
		if !(a <= b && b <= c) {
			t.Fatalf("bare %#x, ordered %#x, bare %#x", a, b, c)
		}
	}
	first := Stckf()
	for n := 0; Stckf() == first; n++ {
		if n > 1_000_000 {
			t.Fatal("the TOD clock does not advance")
		}
	}
}
