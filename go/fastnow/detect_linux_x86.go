//go:build linux && (amd64 || 386)

package fastnow

import (
	"bytes"
	"syscall"
	"unsafe"
)

// kernelCounterName is the Linux clocksource name of this counter. The
// kernel checks at boot that the TSCs of all CPUs agree, keeps watching
// them, and switches to another clocksource when it finds them unreliable:
// fastnow follows its verdict, at the first reading and every second after.
const kernelCounterName = "tsc"

const clocksourcePath = "/sys/devices/system/clocksource/clocksource0/current_clocksource"

// clocksourceFile keeps current_clocksource open between checks, so that
// each costs one pread.
type clocksourceFile struct {
	fd       int
	open     bool
	dev, ino uint64 // what fd referred to when it was opened
	// trusted counts the reads of the counter's name taken without an
	// identity check since the last one (see read).
	trusted int
}

// verifyEvery is how often, at least, the identity of the file that names
// the counter is checked (every read that names another clocksource is).
const verifyEvery = 8

// read returns the kernel's verdict.
//
// A program may close every descriptor it did not open (daemons do) and the
// number then belongs to another file: a daemon's pid file, opened next,
// gets it, and its "7905\n" looks like a clocksource name. So an answer
// that would change anything, another clocksource's name or none, is
// trusted only if the descriptor still refers to the file this opened (its
// device and inode, checked after the pread: a number reused before it
// fails the check); otherwise the number is someone else's: it is left
// open, and the file is opened again. A descriptor that is ours but gives
// no clocksource name is closed and the file opened again too. The usual
// answer, the counter's own name, which changes nothing, costs the pread
// alone, and its identity is checked every verifyEvery reads: a foreign
// file that happens to read "tsc" would hide a demotion for seconds at
// most, and never causes one.
//
// A failure to open or read says by its errno whether nothing vouches (the
// file missing or denied) or the failure is of the moment (EMFILE: a daemon
// that closed fastnow's descriptor is out of descriptors when it must be
// opened again), which says nothing (clocksourceFailure).
func (f *clocksourceFile) read() verdict {
	var buf [32]byte
	// What a file of ours that gave no name says: a failed read, by its
	// errno; text that is no clocksource's name, unreadable.
	failed := verdict{kind: verdictUnreadable}
	for attempt := 0; attempt < 2; attempt++ {
		if !f.open {
			fd, err := syscall.Open(clocksourcePath, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
			if err != nil {
				return clocksourceFailure(err)
			}
			var st syscall.Stat_t
			if err := syscall.Fstat(fd, &st); err != nil {
				syscall.Close(fd)
				return clocksourceFailure(err)
			}
			f.fd, f.open, f.dev, f.ino, f.trusted = fd, true, st.Dev, st.Ino, 0
		}
		// Without upkeep this runs on a reader's goroutine once a second,
		// so it keeps to system calls: raw ones, since reading a sysfs
		// attribute and its inode do not block (the runtime is not told,
		// and does not hand the P to another thread meanwhile), and no
		// allocation for the usual answer. SAFETY: buf is this frame's
		// array, alive through the call; the kernel writes at most
		// len(buf) bytes into it and returns how many.
		r, _, errno := syscall.RawSyscall6(syscall.SYS_PREAD64, uintptr(f.fd),
			uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0, 0)
		n := int(r)
		plausible := errno == 0 && n > 0 && n <= len(buf) && plausibleClocksource(buf[:n])
		var name []byte
		if plausible {
			name = bytes.TrimRight(buf[:n], "\n")
			if string(name) == kernelCounterName && f.trusted < verifyEvery-1 {
				f.trusted++
				return verdict{kind: verdictNamed, name: kernelCounterName}
			}
		}
		if !f.ours() {
			f.open = false // someone else's descriptor now: never closed here
			continue
		}
		f.trusted = 0
		if plausible {
			if string(name) == kernelCounterName {
				return verdict{kind: verdictNamed, name: kernelCounterName}
			}
			return verdict{kind: verdictNamed, name: string(name)}
		}
		failed = verdict{kind: verdictUnreadable}
		if errno != 0 {
			failed = clocksourceFailure(errno)
		}
		syscall.Close(f.fd)
		f.open = false
	}
	return failed
}

// ours reports whether f.fd still refers to the file f opened.
func (f *clocksourceFile) ours() bool {
	var st syscall.Stat_t
	// SAFETY: st is this frame's variable, alive through the call; the
	// kernel writes one stat structure into it.
	_, _, errno := syscall.RawSyscall(sysFstat, uintptr(f.fd), uintptr(unsafe.Pointer(&st)), 0)
	return errno == 0 && st.Dev == f.dev && st.Ino == f.ino
}
