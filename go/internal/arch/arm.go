//go:build linux && arm

package arch

import "os"

// arm (32-bit): the generic timer's virtual counter, CNTVCT, read with
// MRRC p15, 1, Rt, Rt2, c14 (arm_arm.s explains the
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

// DisabledWhy completes FallbackDisabled's sentence on this target.
const DisabledWhy = "the kernel does not say user space may read the generic timer: no HWCAP_EVTSTRM"

func Counter() uint64 { return Cntvct() }

func CounterOrdered(bool) uint64 { return IsbCntvct() }

func ProbeCounter() Probe {
	p := Probe{
		Counter:        "CNTVCT (MRRC p15)",
		Invariant:      true,
		OrderedRead:    "ISB;MRRC CNTVCT;dependent load",
		OrderedReadAlt: "ISB;MRRC CNTVCT;dependent load",
	}
	var hwcap uint32
	if auxv, err := os.ReadFile("/proc/self/auxv"); err == nil {
		hwcap, _ = auxvHwcap32(auxv)
	}
	ok, hz := armGranted(hwcap, Cntfrq)
	p.Disabled = !ok
	if ok {
		p.FreqHz, p.FreqOrigin = hz, OriginRegister
	}
	return p
}

// Implemented in arm_arm.s. On 32-bit Arm the generic timer is reached
// through coprocessor 15, and only where the kernel granted user space
// access to it: every function here is UNDEFINED (SIGILL) otherwise, so
// callers decide first, from what the kernel says, and call none of them
// when access is not known to be granted (ProbeCounter).

// Cntvct is the bare read of the generic timer's virtual counter (MRRC p15,
// 1, Rt, Rt2, c14: CNTVCT), not ordered with earlier loads.
func Cntvct() uint64

// IsbCntvct reads the counter after an ISB, so after every earlier load,
// and makes a load that depends on the value, so that the read completes
// before any later store (see arm_arm.s).
func IsbCntvct() uint64

// Cntfrq is the counter frequency firmware published (MRC p15, 0, Rt, c14,
// c0, 0: CNTFRQ), 0 if unset. User space may read it whenever it may read
// the
func Cntfrq() uint32

// Raw is the bare counter instruction as an assembly function call, as Go
// requires, with its name: the floor the report compares Nanotime against.
// The instruction faults where the kernel did not grant user space the
// counter (under qemu-arm, for one): RawFaults says so, and the caller
// measures the floor only where fastnow reads the counter itself.
func Raw() (string, func() int64) {
	return "asm MRRC CNTVCT function", func() int64 { return int64(Cntvct()) }
}

// RawFaults says whether Raw's instruction may fault where the counter is
// not in use.
const RawFaults = true
