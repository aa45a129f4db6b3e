//go:build linux

package fastnow

import (
	"errors"
	"math"
	"os"
	"syscall"
	"unsafe"
)

// clockWatch wakes the upkeep goroutine when the system clock is set: a
// timerfd on CLOCK_REALTIME armed far in the future with
// TFD_TIMER_CANCEL_ON_SET never expires, but the kernel makes it readable,
// and its read fail with ECANCELED, whenever the clock is set. The
// descriptor is non-blocking and wrapped with os.NewFile, so the runtime's
// poller waits on it (no thread is blocked); a helper goroutine reads it
// and signals changed.
type clockWatch struct {
	f       *os.File
	changed chan struct{}
	done    chan struct{}
}

const (
	clockRealtime       = 0
	tfdTimerAbstime     = 1 << 0
	tfdTimerCancelOnSet = 1 << 1
)

// newClockWatch returns nil where the kernel does not offer it (the wall
// tier then follows steps at the next resync, as without upkeep).
func newClockWatch() *clockWatch {
	fd, _, errno := syscall.RawSyscall(syscall.SYS_TIMERFD_CREATE, clockRealtime, syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if errno != 0 {
		return nil
	}
	if armClockWatch(fd) != nil {
		syscall.Close(int(fd))
		return nil
	}
	w := &clockWatch{f: os.NewFile(fd, "fastnow-clock-watch"), changed: make(chan struct{}, 1), done: make(chan struct{})}
	go w.watch()
	return w
}

// armClockWatch arms the timer far in the future: it only reports clock
// changes. A read that reported one also disarmed it. With a 64-bit
// time_t the expiry is the kernel's end of time (2262: it clamps larger
// values); with a 32-bit one, 2038.
func armClockWatch(fd uintptr) error {
	var spec [2]syscall.Timespec // it_interval, it_value
	spec[1].Sec = math.MaxInt32
	if unsafe.Sizeof(spec[1].Sec) == 8 {
		spec[1] = syscall.NsecToTimespec(math.MaxInt64)
	}
	_, _, errno := syscall.Syscall6(syscall.SYS_TIMERFD_SETTIME, fd, tfdTimerAbstime|tfdTimerCancelOnSet,
		uintptr(unsafe.Pointer(&spec)), 0, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

func (w *clockWatch) watch() {
	defer close(w.done)
	var buf [8]byte
	rc, err := w.f.SyscallConn()
	if err != nil {
		return
	}
	for {
		_, err := w.f.Read(buf[:])
		if err != nil && !errors.Is(err, syscall.ECANCELED) {
			return // closed
		}
		var armErr error
		if rc.Control(func(fd uintptr) { armErr = armClockWatch(fd) }) != nil || armErr != nil {
			return
		}
		if err != nil { // ECANCELED: the clock was set
			select {
			case w.changed <- struct{}{}:
			default:
			}
		}
	}
}

// close stops the helper goroutine (its read fails once the file is
// closed) and waits for it.
func (w *clockWatch) close() {
	w.f.Close()
	<-w.done
}
