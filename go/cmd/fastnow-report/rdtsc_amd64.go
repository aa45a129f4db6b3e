package main

func rdtsc() uint64

func rawCounter() (string, func() int64) {
	return "asm RDTSC function", func() int64 { return int64(rdtsc()) }
}
