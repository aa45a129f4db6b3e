//go:build linux

package main

import (
	"github.com/fastnow/fastnow/go/fastnow"
	"github.com/fastnow/fastnow/go/internal/counter"
)

// rawCounter is the floor the report compares fastnow.Nanotime against: the
// bare counter instruction as an assembly function call, as Go requires.
// On 32-bit Arm that instruction faults where the kernel did not grant user
// space the counter (under qemu-arm, for one), which fastnow decides before
// it reads the counter; so the floor is measured only where fastnow reads
// the counter itself.
func rawCounter() (string, func() int64) {
	if fastnow.Source().Source != fastnow.SourceCounter {
		return "", nil
	}
	return "asm MRRC CNTVCT function", func() int64 { return int64(counter.Cntvct()) }
}
