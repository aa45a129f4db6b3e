//go:build linux

package main

import "github.com/fastnow/fastnow/go/internal/counter"

// rawCounter is the floor the report compares fastnow.Nanotime against: the
// bare counter instruction as an assembly function call, as Go requires.
func rawCounter() (string, func() int64) {
	return "asm STCKF function", func() int64 { return int64(counter.Stckf()) }
}
