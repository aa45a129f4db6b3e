//go:build linux && arm

package fastnow

import (
	"os"

	"github.com/fastnow/fastnow/go/internal/counter"
)

// arm (32-bit): the generic timer's virtual counter, CNTVCT, read with
// MRRC p15, 1, Rt, Rt2, c14 (internal/counter's assembly explains the
// ordered read). It is the counter arm64 reads, one for every core at the
// constant rate in CNTFRQ, so, as there, the kernel's clocksource is not
// checked. Unlike on arm64, user space may not be allowed to read it: many
// 32-bit cores have no generic timer (the Cortex-A8 and A9), where the
// instruction is undefined, and where there is one, CNTKCTL.PL0VCTEN, which
// only the kernel can see, decides. An emulator may leave it out too:
// qemu-arm gives user space no generic timer, while /sys shows the host's
// clocksource. A wrong guess is SIGILL, which Go cannot recover from, so it
// is never guessed.
//
// The rule, the Rust crate's too: the counter is read only when the kernel
// says it set the timer up for user space, with the HWCAP_EVTSTRM bit of
// AT_HWCAP. Linux's generic-timer driver (drivers/clocksource/
// arm_arch_timer.c) sets that bit when it turns on the timer's event
// stream, on each core right after granting user space the virtual counter
// (arch_counter_set_user_access, which on 32-bit kernels always grants it;
// an arm64 kernel running this 32-bit process sets the same bit, and
// emulates the read where an erratum makes it trap the counter). The bit
// is not a processor feature: an emulator that does not emulate the
// kernel's timer does not set it (qemu-arm does not). A kernel built
// without the event stream, or booted with it off, leaves the bit clear,
// and so does an unreadable /proc/self/auxv: the OS clock then, safe and
// slower. Refused, the counter stays refused with FASTNOW_CLOCK=counter
// (Info.Fallback is FallbackDisabled), and none of its instructions runs.

// disabledWhy completes FallbackDisabled's sentence on this target.
const disabledWhy = "the kernel does not say user space may read the generic timer: no HWCAP_EVTSTRM"

func readCounter() uint64 { return counter.Cntvct() }

func readCounterOrdered(bool) uint64 { return counter.IsbCntvct() }

func probeCounter() probe {
	p := probe{
		counter:        "CNTVCT (MRRC p15)",
		invariant:      true,
		orderedRead:    "ISB;MRRC CNTVCT;dependent load",
		orderedReadAlt: "ISB;MRRC CNTVCT;dependent load",
	}
	var hwcap uint32
	if auxv, err := os.ReadFile("/proc/self/auxv"); err == nil {
		hwcap, _ = auxvHwcap32(auxv)
	}
	ok, hz := armGranted(hwcap, counter.Cntfrq)
	p.disabled = !ok
	if ok {
		p.freqHz, p.freqOrigin = hz, OriginRegister
	}
	return p
}
