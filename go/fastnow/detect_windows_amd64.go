//go:build windows && amd64

package fastnow

import (
	"strconv"

	"github.com/fastnow/fastnow/go/internal/osclock"
)

// Windows has no clocksource file; what plays its part is the clock Windows
// itself times with, QueryPerformanceCounter. Since Windows 10 it reads the
// invariant TSC, scaled to a 10 MHz frequency, whenever Windows trusts the
// TSC, and otherwise a platform timer, whose frequency says which (3.579545
// MHz: the ACPI PM timer; 14.31818 MHz: the HPET). So a 10 MHz
// QueryPerformanceFrequency counts as Windows vouching for the TSC, as if
// its clocksource were named "tsc"; any other frequency is reported as
// "qpc-<Hz>", and the OS clock is used (older Windows versions report other
// frequencies too, and so fall back: safe, slower). The frequency is read
// again every second, as Linux's clocksource file is. The Rust crate
// applies the same rule.
const kernelCounterName = "tsc"

type clocksourceFile struct{}

func (*clocksourceFile) read() verdict {
	hz, ok := osclock.QPCFrequency()
	switch {
	case !ok:
		return verdict{kind: verdictUnreadable}
	case hz == 10_000_000:
		return verdict{kind: verdictNamed, name: "tsc"}
	}
	return verdict{kind: verdictNamed, name: "qpc-" + strconv.FormatUint(hz, 10)}
}
