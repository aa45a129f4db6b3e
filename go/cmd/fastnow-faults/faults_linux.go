//go:build linux && (amd64 || arm64 || riscv64 || loong64)

package main

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/fastnow/fastnow/go/fastnow"
)

const (
	ppmUnit       = 65_536 // adjtimex's frequency unit: ppm in 16.16 fixed point
	adjFrequency  = 0x0002 // ADJ_FREQUENCY
	adjTick       = 0x4000 // ADJ_TICK
	clockRealtime = 0
	sysfs         = "/sys/devices/system/clocksource/clocksource0"
)

// discipline is what the kernel's clock discipline is set to.
type discipline struct {
	freq int64 // timex.freq: ppm × 65536
	tick int64 // timex.tick: µs per tick (nominal 10000)
}

func adjtimex(modes uint32, freq, tick int64) (discipline, error) {
	tx := syscall.Timex{Modes: modes, Freq: freq, Tick: tick}
	if _, err := syscall.Adjtimex(&tx); err != nil {
		return discipline{}, err
	}
	return discipline{freq: tx.Freq, tick: tx.Tick}, nil
}

// currentDiscipline reads the discipline (no privilege needed).
func currentDiscipline() (discipline, error) { return adjtimex(0, 0, 0) }

// available says why this process may not inject faults, or "".
func available() string {
	d, err := currentDiscipline()
	if err != nil {
		return fmt.Sprintf("adjtimex: %v", err)
	}
	if _, err := adjtimex(adjFrequency, d.freq, 0); err != nil {
		return fmt.Sprintf("adjtimex cannot set the frequency (%v): needs CAP_SYS_TIME (root)", err)
	}
	return ""
}

func setPPM(ppm int64) error   { _, err := adjtimex(adjFrequency, ppm*ppmUnit, 0); return err }
func setTick(tick int64) error { _, err := adjtimex(adjTick, 0, tick); return err }

// settle is how long fastnow is given to follow a rate change before an
// event that needs a settled rate (the bounds "from 3 s on" hold by then).
const settle = 4 * time.Second

// nominalTick is timex.tick with no slew: 10^6 / USER_HZ (100).
const nominalTick = 10_000

// settleAfterRestore puts back the discipline the machine had, and when
// that is a rate change of its own (an NTP daemon's correction, or a
// previous run killed before its guard ran), waits for fastnow to follow
// it: the next events measure intervals across them, and would count the
// catching up as their error (500 µs over a second after an unseen 500 ppm).
func settleAfterRestore(d discipline) {
	restoreDiscipline(d)
	if d.freq != 0 || d.tick != nominalTick {
		fmt.Printf("\nthe machine's own discipline put back (frequency %+.3f ppm, tick %d): %v to follow it\n",
			float64(d.freq)/ppmUnit, d.tick, settle)
		time.Sleep(settle)
	}
}

// restoreDiscipline puts back the discipline found before (a guard, deferred).
func restoreDiscipline(d discipline) { _, _ = adjtimex(adjFrequency|adjTick, d.freq, d.tick) }

// stepRealtime steps CLOCK_REALTIME by ns.
func stepRealtime(ns int64) error {
	ts := syscall.NsecToTimespec(time.Now().UnixNano() + ns)
	_, _, errno := syscall.Syscall(syscall.SYS_CLOCK_SETTIME, clockRealtime, uintptr(unsafe.Pointer(&ts)), 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// clocksources returns the kernel's current and available clocksources.
func clocksources() (string, []string, error) {
	cur, err := os.ReadFile(sysfs + "/current_clocksource")
	if err != nil {
		return "", nil, err
	}
	avail, err := os.ReadFile(sysfs + "/available_clocksource")
	if err != nil {
		return "", nil, err
	}
	return strings.TrimSpace(string(cur)), strings.Fields(string(avail)), nil
}

func setClocksource(name string) error {
	return os.WriteFile(sysfs+"/current_clocksource", []byte(name), 0)
}

// wallError is UnixNano − CLOCK_REALTIME in ns: the reading against the
// midpoint of the tightest of 3 brackets of time.Now (CLOCK_REALTIME), in
// integers (a float64 resolves only 256 ns at today's Unix time).
func wallError() int64 {
	bestWidth, err := int64(math.MaxInt64), int64(0)
	for i := 0; i < 3; i++ {
		a := time.Now().UnixNano()
		ours := fastnow.UnixNano()
		b := time.Now().UnixNano()
		if w := b - a; w >= 0 && w < bestWidth {
			bestWidth, err = w, ours-(a+w/2)
		}
	}
	return err
}

// monoBase anchors monotonic readings: time.Since is CLOCK_MONOTONIC.
var monoBase = time.Now()

// paired is an OrderedNanotime reading and CLOCK_MONOTONIC at the same
// moment: the tightest of 5 brackets, the reading matched to the midpoint.
func paired() (ours, mono int64) {
	bestWidth := int64(math.MaxInt64)
	for i := 0; i < 5; i++ {
		a := int64(time.Since(monoBase))
		o := fastnow.OrderedNanotime()
		b := int64(time.Since(monoBase))
		if w := b - a; w < bestWidth {
			bestWidth, ours, mono = w, o, a+w/2
		}
	}
	return ours, mono
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// counterAgreementTicks is how far apart, in counter ticks, the counters
// of two cores may read at one moment. A hypervisor gives each virtual CPU
// its own counter offset, and they can disagree by a few ticks that the
// kernel's check at boot does not see: a reading taken on one core after a
// reading on another can then be below it by that much, with bare ordered
// counter reads and no fastnow code at all (the Rust workspace's
// counter-skew measures it; BENCHMARKS.md, "Cross-core counter agreement").
// The checkers count violations up to this far apart; any larger one is
// fastnow's, and fails the bound. The Rust fault test uses the same value.
const counterAgreementTicks = 16

// counterAgreementNs is counterAgreementTicks in nanoseconds at the
// frequency in use.
func counterAgreementNs() int64 {
	hz := fastnow.Source().FreqHz
	if hz == 0 {
		return counterAgreementTicks
	}
	return int64((counterAgreementTicks*1_000_000_000 + hz - 1) / hz)
}

// violations is what the checkers saw: strict violations apart by size, and
// steps back on one thread (which no disagreement between cores excuses: a
// thread moves between cores in microseconds, far longer than the counters
// disagree).
type violations struct {
	beyond        int64 // strict violations by more than the cores' counters may disagree, and every step back: fastnow's own
	within        int64 // by no more
	worstWithinNs int64
	agreementNs   int64
}

// noteSameThread counts a reading later of one thread, taken after earlier.
func (v *violations) noteSameThread(earlier, later int64) {
	if later < earlier {
		v.beyond++
	}
}

// note counts a reading later taken after a reading earlier of another
// thread.
func (v *violations) note(earlier, later int64) {
	if later >= earlier {
		return
	}
	if by := earlier - later; by > v.agreementNs {
		v.beyond++
	} else {
		v.within++
		v.worstWithinNs = max(v.worstWithinNs, by)
	}
}

func (v *violations) merge(o violations) {
	v.beyond += o.beyond
	v.within += o.within
	v.worstWithinNs = max(v.worstWithinNs, o.worstWithinNs)
}

// check is the bound's row: none beyond the counters' agreement.
func (v violations) check() check {
	what := fmt.Sprintf("steps back + strict violations by more than the cores' counters may disagree (%d ns)", v.agreementNs)
	if v.within > 0 {
		what += fmt.Sprintf("; %d within it, up to %d ns", v.within, v.worstWithinNs)
	}
	return measured(what, "", float64(v.beyond), 0)
}

// checkers check fastnow's guarantees while an event happens: one
// goroutine publishes MonotonicNanotime readings, another loads them and
// reads again (a smaller reading is a strict violation); both check that
// their own Nanotime readings never decrease. Each is locked to its own
// thread, so the two run on two cores where there are two.
type checkers struct {
	stop   atomic.Bool
	wg     sync.WaitGroup
	mu     sync.Mutex
	seen   violations
	shared atomic.Int64
}

func startCheckers() *checkers {
	c := &checkers{seen: violations{agreementNs: counterAgreementNs()}}
	for role := 0; role < 2; role++ {
		c.wg.Add(1)
		go func(role int) {
			defer c.wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			v := violations{agreementNs: c.seen.agreementNs}
			last := fastnow.Now()
			for !c.stop.Load() {
				for i := 0; i < 1000; i++ {
					if role == 0 {
						c.shared.Store(fastnow.MonotonicNanotime())
					} else {
						seen := c.shared.Load()
						v.note(seen, fastnow.MonotonicNanotime())
					}
					now := fastnow.Now()
					v.noteSameThread(last.Nanotime(), now.Nanotime())
					last = now
				}
				// Leave the measuring goroutine some CPU on two cores.
				time.Sleep(200 * time.Microsecond)
			}
			c.mu.Lock()
			c.seen.merge(v)
			c.mu.Unlock()
		}(role)
	}
	return c
}

// finish stops the checkers and returns what they saw.
func (c *checkers) finish() violations {
	c.stop.Store(true)
	c.wg.Wait()
	return c.seen
}

// rateOutcome is what one rate event did to fastnow.
type rateOutcome struct {
	wallSteadyNs, wallFirstNs, wallAfterNs int64   // largest |wall error|: before, first 3 s, from 3 s on
	intervalAfterPPM                       float64 // largest |1 s interval error| from 3 s on
	violations                             violations
}

// rateEvent runs change after before of steady state and measures for after.
func rateEvent(before, after time.Duration, change func() error) (rateOutcome, error) {
	var o rateOutcome
	c := startCheckers()
	start := time.Now()
	for time.Since(start) < before {
		o.wallSteadyNs = max(o.wallSteadyNs, abs(wallError()))
		time.Sleep(time.Millisecond)
	}
	if err := change(); err != nil {
		c.finish()
		return o, err
	}
	changed := time.Now()
	var o0, m0 int64
	var pairedAt time.Duration
	havePair := false
	for since := time.Since(changed); since < after; since = time.Since(changed) {
		e := abs(wallError())
		if since < 3*time.Second {
			o.wallFirstNs = max(o.wallFirstNs, e)
		} else {
			o.wallAfterNs = max(o.wallAfterNs, e)
			if !havePair || since >= pairedAt+time.Second {
				ours, mono := paired()
				if havePair {
					ppm := float64((ours-o0)-(mono-m0)) / float64(mono-m0) * 1e6
					o.intervalAfterPPM = math.Max(o.intervalAfterPPM, math.Abs(ppm))
				}
				o0, m0, pairedAt, havePair = ours, mono, since, true
			}
		}
		time.Sleep(time.Millisecond)
	}
	o.violations = c.finish()
	return o, nil
}

// stepFollowedAfter steps CLOCK_REALTIME by stepNs (and back, deferred)
// and returns how long until the wall tier agreed with it again (within
// 2 µs), or -1 if not within limit.
func stepFollowedAfter(stepNs int64, limit time.Duration) (time.Duration, error) {
	time.Sleep(20 * time.Millisecond) // settle: the wall tier agrees with the clock
	if err := stepRealtime(stepNs); err != nil {
		return 0, err
	}
	defer stepRealtime(-stepNs)
	stepped := time.Now() // its monotonic reading is unaffected by the step
	for {
		if abs(wallError()) < 2_000 {
			return time.Since(stepped), nil
		}
		if time.Since(stepped) > limit {
			return -1, nil
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// demotionOutcome is what the kernel dropping the counter did to fastnow.
type demotionOutcome struct {
	noticedAfter    time.Duration // -1: not within the limit
	intervalErrorNs int64         // an interval across the switch − CLOCK_MONOTONIC's
	violations      violations
	info            string
}

// demotion switches the kernel's clocksource to other (and back, deferred)
// and measures.
func demotion(other string, limit time.Duration) (demotionOutcome, error) {
	o := demotionOutcome{noticedAfter: -1}
	cur, _, err := clocksources()
	if err != nil {
		return o, err
	}
	c := startCheckers()
	ours0, mono0 := paired()
	if err := setClocksource(other); err != nil {
		c.finish()
		return o, err
	}
	defer setClocksource(cur)
	switched := time.Now()
	for time.Since(switched) < limit {
		_ = fastnow.Nanotime()
		_ = fastnow.UnixNano()
		if fastnow.Source().Source == fastnow.SourceOS {
			o.noticedAfter = time.Since(switched)
			break
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	ours1, mono1 := paired()
	o.intervalErrorNs = (ours1 - ours0) - (mono1 - mono0)
	o.violations = c.finish()
	o.info = fastnow.Source().String()
	return o, nil
}

// check is one bound checked after an event: the measured value (nil: the
// event did not complete) against its bound.
type check struct {
	what, unit string
	value      *float64
	bound      float64
	note       string // why there is no value
}

func (c check) ok() bool { return c.value != nil && *c.value <= c.bound }

func measured(what, unit string, v, bound float64) check {
	return check{what: what, unit: unit, value: &v, bound: bound}
}

func failed(why string) check { return check{what: why} }

type event struct {
	name   string
	checks []check
}

// The bounds of spec/SEMANTICS.md: the wall tier within 1 µs in steady
// state; right after a rate change within the change over one resync
// interval (1 s) plus 1 µs; from 3 s after it within 2 µs (20 µs after the
// 0.8 % tick slew); 1 s intervals within 1 ppm of CLOCK_MONOTONIC's from
// 3 s on; steps followed within one interval (1.05 s), 10 ms while upkeep
// runs; the kernel's change of mind noticed within 1.6 s (1.1 s with
// upkeep), an interval across it within 10 µs; no step back, ever, and no
// strict violation by more than the cores' counters disagree
// (counterAgreementTicks). The same as the Rust crate's fault driver.
const (
	steadyWallNs = 1_000
	intervalPPM  = 1.0
)

var rateEvents = []struct {
	name    string
	change  func() error
	ppm     float64 // the size of the change
	settled float64 // the wall bound from 3 s on, ns
}{
	{"frequency +500 ppm (ADJ_FREQUENCY)", func() error { return setPPM(500) }, 500, 2_000},
	{"frequency back to 0", func() error { return setPPM(0) }, 500, 2_000},
	{"tick 10000 → 10080 (0.8 % slew)", func() error { return setTick(10_080) }, 8_000, 20_000},
	{"tick back to 10000", func() error { return setTick(10_000) }, 8_000, 20_000},
}

// runEvents runs every event, the clocksource switch last.
func runEvents(upkeep, quick bool) []event {
	var events []event
	after := 12 * time.Second
	if quick {
		after = 4 * time.Second
	}
	if d, err := currentDiscipline(); err != nil {
		events = append(events, event{"rate changes", []check{failed("adjtimex cannot be read: " + err.Error())}})
	} else {
		func() {
			defer settleAfterRestore(d)
			for _, r := range rateEvents {
				fmt.Println("\n" + r.name)
				o, err := rateEvent(2*time.Second, after, r.change)
				if err != nil {
					events = append(events, event{r.name, []check{failed("adjtimex failed: " + err.Error())}})
					continue
				}
				checks := []check{
					measured("wall error before (steady state)", "ns", float64(o.wallSteadyNs), steadyWallNs),
					measured("wall error in the first 3 s (change × 1 s + 1 µs)", "ns", float64(o.wallFirstNs), r.ppm*1_000+1_000),
				}
				if !quick {
					checks = append(checks,
						measured("wall error from 3 s on", "ns", float64(o.wallAfterNs), r.settled),
						measured("1 s intervals against CLOCK_MONOTONIC from 3 s on", "ppm", o.intervalAfterPPM, intervalPPM))
				}
				checks = append(checks, o.violations.check())
				events = append(events, event{r.name, checks})
			}
		}()
	}

	limit := 1050 * time.Millisecond
	if upkeep {
		limit = 10 * time.Millisecond
	}
	for _, step := range []int64{1_000_000_000, -1_000_000_000} {
		name := fmt.Sprintf("CLOCK_REALTIME stepped %+d s", step/1_000_000_000)
		fmt.Println("\n" + name)
		d, err := stepFollowedAfter(step, 3*time.Second)
		switch {
		case err != nil:
			events = append(events, event{name, []check{failed("clock_settime failed: " + err.Error())}})
		case d < 0:
			events = append(events, event{name, []check{{what: "followed (within 2 µs) after", unit: "ms", bound: ms(limit), note: "not within 3 s"}}})
		default:
			events = append(events, event{name, []check{measured("followed (within 2 µs) after", "ms", ms(d), ms(limit))}})
		}
	}

	fmt.Println("\nthe kernel drops the TSC")
	noticed := 1600 * time.Millisecond
	if upkeep {
		noticed = 1100 * time.Millisecond
	}
	cur, avail, err := clocksources()
	other := ""
	for _, a := range avail {
		if a != cur && other == "" {
			other = a
		}
	}
	switch {
	case err != nil:
		events = append(events, event{fmt.Sprintf("clocksource switch skipped: sysfs unreadable (%v)", err), nil})
	case cur != "tsc" || other == "":
		events = append(events, event{fmt.Sprintf("clocksource switch skipped: no other clocksource to switch to (current %s, available %s)", cur, strings.Join(avail, " ")), nil})
	default:
		name := "clocksource tsc → " + other
		o, err := demotion(other, 3*time.Second)
		if err != nil {
			events = append(events, event{name, []check{failed("cannot switch the clocksource: " + err.Error())}})
			break
		}
		n := check{what: "noticed after", unit: "ms", bound: ms(noticed), note: "not within 3 s"}
		if o.noticedAfter >= 0 {
			n = measured("noticed after", "ms", ms(o.noticedAfter), ms(noticed))
		}
		events = append(events, event{name, []check{
			n,
			measured("an interval across the switch − CLOCK_MONOTONIC's", "ns", float64(abs(o.intervalErrorNs)), 10_000),
			o.violations.check(),
		}})
		fmt.Println("after the switch:", o.info)
	}
	return events
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

func run(upkeep, quick bool) int {
	if why := available(); why != "" {
		fmt.Println("SKIPPED:", why)
		return 0
	}
	mode := "readers update"
	if upkeep {
		mode = "upkeep goroutine updates"
	} else {
		fastnow.SetAutoUpkeep(false) // and no Recent* call: readers do the updates
	}
	_ = fastnow.Nanotime()
	if upkeep {
		if err := fastnow.StartUpkeep(fastnow.DefaultResolution); err != nil {
			fmt.Println("start upkeep:", err)
			return 1
		}
	}
	time.Sleep(1500 * time.Millisecond) // past the first windows
	info := fastnow.Source()
	fmt.Printf("fastnow (Go) under clock faults (%s); %s\n", mode, info)
	if d, err := currentDiscipline(); err == nil {
		// A frequency at the kernel's ±500 ppm limit is often a run killed
		// before its guard put the machine's value back.
		fmt.Printf("the kernel's discipline at start: frequency %+.3f ppm, tick %d (put back at the end)\n",
			float64(d.freq)/ppmUnit, d.tick)
	}
	if info.Source != fastnow.SourceCounter {
		fmt.Println("SKIPPED: fastnow does not use the counter here, so nothing to fault")
		return 0
	}
	events := runEvents(upkeep, quick)
	fmt.Printf("\n| event | check | value | bound | |\n|---|---|---:|---:|---|\n")
	met, total := 0, 0
	var missed []string
	for _, e := range events {
		if len(e.checks) == 0 {
			fmt.Printf("| %s | | | | skipped |\n", e.name)
		}
		for _, c := range e.checks {
			total++
			value := c.note
			switch {
			case c.value != nil && c.unit == "":
				value = fmt.Sprintf("%.0f", *c.value)
			case c.value != nil:
				value = fmt.Sprintf("%s %s", strconv.FormatFloat(*c.value, 'f', 3, 64), c.unit)
			case value == "":
				value = "never"
			}
			verdict := "MISSED"
			if c.ok() {
				verdict = "ok"
				met++
			} else {
				missed = append(missed, e.name+": "+c.what)
			}
			bound := strings.TrimSpace(strconv.FormatFloat(c.bound, 'f', -1, 64) + " " + c.unit)
			fmt.Printf("| %s | %s | %s | %s | %s |\n", e.name, c.what, value, bound, verdict)
		}
	}
	fmt.Printf("\n%d of %d bounds met (%s); %s\n", met, total, mode, fastnow.Source())
	for _, m := range missed {
		fmt.Println("MISSED:", m)
	}
	if len(missed) > 0 {
		return 1
	}
	return 0
}
