//go:build (!unix && !windows) || aix

package fastnow

// No thread CPU clock that Go can reach: js/wasm has none; wasip1's
// clock_time_get has CPU clock ids, but a Go package may not import WASI
// functions before Go 1.24, and runtimes rarely answer for them; and
// golang.org/x/sys/unix has no clock_gettime for AIX. Every reading is 0,
// so every duration is zero.
const threadCPUName = ""

func threadCPUNanotime() int64 { return 0 }

func threadCPUWorks() bool { return false }
