package main

import (
	"github.com/fastnow/fastnow/go/fastnow"
	"github.com/fastnow/fastnow/go/internal/arch"
)

// rawCounter is the floor the report compares fastnow.Nanotime against: the
// bare counter instruction as an assembly function call, as Go requires
// (internal/arch, the target's backend). Where that instruction faults
// unless the kernel granted user space the counter (32-bit Arm), the floor
// is measured only where fastnow reads the counter itself, which it decides
// before it reads the counter.
func rawCounter() (string, func() int64) {
	if arch.RawFaults && fastnow.Source().Source != fastnow.SourceCounter {
		return "", nil
	}
	return arch.Raw()
}
