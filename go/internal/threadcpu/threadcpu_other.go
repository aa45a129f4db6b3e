//go:build (!unix && !windows) || aix

package threadcpu

// No thread CPU clock that Go can reach: js/wasm has none; wasip1's
// clock_time_get has CPU clock ids, but a Go package may not import WASI
// functions before Go 1.24, and runtimes rarely answer for them; and
// golang.org/x/sys/unix has no clock_gettime for AIX. Every reading is 0,
// so every duration is zero.
const Name = ""

func Nanotime() int64 { return 0 }

func Works() bool { return false }
