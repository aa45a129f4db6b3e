//go:build linux && riscv64

package arch

import (
	"os"
	"path/filepath"
	"testing"
)

func TestTimebaseFrequency(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		cell []byte
		want uint64
	}{
		{[]byte{0x00, 0x98, 0x96, 0x80}, 10_000_000},
		{[]byte{0, 0, 0, 0, 0x01, 0x6e, 0x36, 0x00}, 24_000_000},
		{[]byte{1, 2, 3}, 0},
		{nil, 0},
	} {
		path := filepath.Join(dir, "timebase-frequency")
		if err := os.WriteFile(path, c.cell, 0o600); err != nil {
			t.Fatal(err)
		}
		if got := timebaseFrequency(path); got != c.want {
			t.Errorf("cell % x: %d Hz, want %d", c.cell, got, c.want)
		}
	}
	if got := timebaseFrequency(filepath.Join(dir, "missing")); got != 0 {
		t.Errorf("a missing file gave %d Hz", got)
	}
}
