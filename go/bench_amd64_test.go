package fastnow

import "testing"

// The floor: the assembly RDTSC function alone (its call included).
func BenchmarkRDTSC(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sink += int64(rdtsc())
	}
}

func BenchmarkRDTSCP(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sink += int64(rdtscp())
	}
}
