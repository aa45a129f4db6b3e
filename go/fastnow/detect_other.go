//go:build !(linux && (amd64 || 386)) && !(windows && amd64) && !(freebsd && amd64)

package fastnow

// kernelCounterName is "" where the kernel's verdict is not checked: the
// Arm and RISC-V counters, LoongArch's Stable Counter, the POWER time base
// and the s390x TOD clock are each one clock that every core reads (and
// under qemu-user sysfs describes the host), and other systems publish no
// verdict.
const kernelCounterName = ""

type clocksourceFile struct{}

func (*clocksourceFile) read() verdict { return verdict{kind: verdictNotApplicable} }
