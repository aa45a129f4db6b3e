package fastnow

import (
	"testing"

	"github.com/fastnow/fastnow/go/internal/arch"
)

// The floor: the assembly RDTSC function alone (its call included).
func BenchmarkRDTSC(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sink += int64(arch.Rdtsc())
	}
}

func BenchmarkRDTSCP(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sink += int64(arch.Rdtscp())
	}
}

// The other ordered read (the one detection picks where it is cheaper and
// the CPU says LFENCE serialises).
func BenchmarkLFENCERDTSC(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sink += int64(arch.LfenceRdtsc())
	}
}
