package fastnow

import "syscall"

// kernelCounterName is FreeBSD's name for the TSC timecounter. FreeBSD
// registers it only once it found the TSC invariant and, with several CPUs,
// in step across them (its tsc.c), and keeps time with the timecounter the
// sysctl kern.timecounter.hardware names: the role Linux's clocksource
// plays. "TSC-low", the TSC read shifted right, vouches too
// (namesTheCounter).
const kernelCounterName = "TSC"

// clocksourceFile: nothing is kept open; each check is one sysctl.
type clocksourceFile struct{}

func (*clocksourceFile) read() verdict {
	return timecounterVerdict(syscall.Sysctl("kern.timecounter.hardware"))
}
