package fastnow

import (
	"errors"
	"strconv"
	"syscall"
	"time"
)

// The kernel's verdict when it cannot be read for now (verdictUnavailable:
// descriptors or memory exhausted, an interrupted call). Such a failure says
// nothing about the counter, so it changes no decision (spec/SEMANTICS.md,
// "The kernel's verdict"):
//
//   - at a re-check, the counter stays in use and the verdict is read again
//     at the next check, a second later (checkKernel records each attempt
//     here);
//   - at the first reading, the counter is neither chosen nor refused: the
//     first state is the OS clock, as in the warm-up's first millisecond but
//     without a counter sample, and its trigger reads the verdict again,
//     after retryFirstNs, then twice as long each time up to retryMaxNs.
//     Once the kernel names the counter, the warm-up starts there as
//     detection would have started it (a sample, a millisecond's
//     measurement, the promotion); once it names another clocksource, or
//     cannot be read at all, the OS clock stays for good.
//
// Each of these OS states ends no earlier than the one it replaces, so a
// goroutine holding the older one never converts a reading above a later
// one's, and the warm-up's first state ends where the warm-up's own retries
// expect it to (trigger plus a millisecond's grace).

const (
	retryFirstNs = minPeriodNs // at the first reading, how soon an unavailable verdict is read again
	retryMaxNs   = maxPeriodNs // the longest wait between two attempts (the wait doubles from retryFirstNs)
)

// verdictLog is what the attempts to read the kernel's verdict gave, for
// Source and for the first reading's retries (keeper.verdicts).
type verdictLog struct {
	err      error  // the last attempt's error, when it failed for want of a resource; nil once one reads the file
	failures int    // attempts in a row that failed so
	readMono uint64 // monotonic time of the last attempt that read a verdict (0: none did)
	retryNs  uint64 // while the first reading's decision awaits the verdict: the wait before the next attempt
}

// noteVerdict records what an attempt to read the kernel's verdict gave, at
// monotonic time now (as the caller read it anyway).
func (tk *timekeeper) noteVerdict(v verdict, now uint64) {
	k := &tk.k
	switch v.kind {
	case verdictUnavailable:
		k.verdicts.err = v.err
		k.verdicts.failures++
	case verdictNamed:
		// The usual answer: one store, unless a failure is on record.
		k.verdicts.readMono = max(now, 1)
		if k.verdicts.err != nil {
			k.verdicts.err, k.verdicts.failures = nil, 0
		}
	case verdictUnreadable:
		k.verdicts.err, k.verdicts.failures = nil, 0
		// No clocksource is known any more: the one read before must not
		// be reported beside "could not be read".
		k.decision.clocksource = ""
	}
}

// awaitVerdict is detection's part: it records the verdict detection read
// and, when the counter awaits one that could not be read, publishes the
// first state, the OS clock until the next attempt, and returns true.
func (tk *timekeeper) awaitVerdict() bool {
	k := &tk.k
	d := &k.decision
	if d.pending == nil {
		if d.clocksource != "" {
			tk.noteVerdict(verdict{kind: verdictNamed, name: d.clocksource}, tk.clocks.mono())
		}
		return false
	}
	mono := tk.clocks.mono()
	tk.noteVerdict(verdict{kind: verdictUnavailable, err: d.pending}, mono)
	// This state has an end, which must be no earlier than the one readers
	// act on while it is being published (beforeFirst).
	agreedEnd := tk.beforeFirst(mono).end
	k.firstMono = mono
	k.nextCheckMono = mono + checkPeriodNs
	k.origin = OriginOS
	k.verdicts.retryNs = retryFirstNs
	trigger := mono + retryFirstNs
	tk.publish(state{mode: modeOS, trigger: trigger, end: max(trigger+grace(retryFirstNs), agreedEnd)}, nil)
	return true
}

// retryVerdict runs at the trigger of an OS state while the verdict is
// awaited: it reads the verdict again and acts on it (see above). It
// returns false when no verdict is awaited: the trigger is the warm-up's.
func (tk *timekeeper) retryVerdict() bool {
	k := &tk.k
	if k.decision.pending == nil {
		return false
	}
	v := tk.clocks.verdict()
	now := tk.clocks.mono()
	tk.noteVerdict(v, now)
	k.decision.settle(v)
	if r := k.decision.fallback; r.why != FallbackNone {
		tk.stayOnOS(r.why)
		k.decision.fallback = r // with the clocksource named
		return true
	}
	old := k.state
	if k.decision.pending == nil {
		// The kernel vouches: the warm-up starts, as at detection.
		first := tk.sample()
		k.window.push(first)
		k.minWidth = first.width
		k.origin = OriginPending
		k.nextCheckMono = first.mono + checkPeriodNs
		s := old
		s.trigger = max(first.mono+minPeriodNs, saturatingSub(old.end, grace(minPeriodNs)))
		s.end = s.trigger + grace(minPeriodNs)
		tk.publish(s, nil)
		return true
	}
	k.verdicts.retryNs = min(max(2*k.verdicts.retryNs, retryFirstNs), retryMaxNs)
	s := old
	s.trigger = now + k.verdicts.retryNs
	s.end = max(s.trigger+grace(k.verdicts.retryNs), old.end)
	tk.publish(s, nil)
	return true
}

// verdictAwaited reports whether the first reading's decision still awaits
// the kernel's verdict (the OS clock is read meanwhile; not for read paths).
func (tk *timekeeper) verdictAwaited() bool {
	tk.mu.Lock()
	defer tk.mu.Unlock()
	return tk.k.decided && tk.k.decision.pending != nil
}

// describeClocksourceErr is the sentence Info.String gives for a verdict
// that could not be read: the error, its name where known, the attempts in
// a row, and how long ago the verdict was last read (0: never).
func describeClocksourceErr(err error, failures int, since time.Duration) string {
	text, _ := clocksourceErr{err}.MarshalText()
	s := "the kernel's clocksource could not be read: " + string(text)
	if failures == 1 {
		s += ", 1 attempt"
	} else {
		s += ", " + strconv.Itoa(failures) + " attempts in a row"
	}
	if since == 0 {
		return s + "; not read yet"
	}
	// Whole milliseconds: enough to tell a burst from an outage.
	return s + "; last read " + since.Truncate(time.Millisecond).String() + " ago"
}

// clocksourceErr is Info.ClocksourceErr: the error (errors.Is finds the
// syscall.Errno), which JSON and other text encodings give as its sentence
// and name.
type clocksourceErr struct{ err error }

func (e clocksourceErr) Error() string { return e.err.Error() }
func (e clocksourceErr) Unwrap() error { return e.err }

// MarshalText encodes the error as its text and name, e.g. "too many open
// files (EMFILE)".
func (e clocksourceErr) MarshalText() ([]byte, error) {
	// Errno texts begin in lower case on most ports and capitalised on some
	// (js/wasm, wasip1: "Too many open files"): one form everywhere.
	s := e.Error()
	if len(s) > 1 && 'A' <= s[0] && s[0] <= 'Z' && 'a' <= s[1] && s[1] <= 'z' {
		s = string(s[0]+'a'-'A') + s[1:]
	}
	if name := errnoName(e.err); name != "" {
		s += " (" + name + ")"
	}
	return []byte(s), nil
}

// errnoName is the symbolic name of the errors a read of the clocksource
// file may meet ("" for others).
func errnoName(err error) string {
	var e syscall.Errno
	if !errors.As(err, &e) {
		return ""
	}
	switch e {
	case syscall.EMFILE:
		return "EMFILE"
	case syscall.ENFILE:
		return "ENFILE"
	case syscall.ENOMEM:
		return "ENOMEM"
	case syscall.ENOBUFS:
		return "ENOBUFS"
	case syscall.EAGAIN:
		return "EAGAIN"
	case syscall.EINTR:
		return "EINTR"
	case syscall.EIO:
		return "EIO"
	case syscall.EBADF:
		return "EBADF"
	case syscall.EBUSY:
		return "EBUSY"
	}
	return ""
}
