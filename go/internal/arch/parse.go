package arch

import (
	"bytes"
	"encoding/binary"
	"strconv"
)

// What some counter backends learn from the kernel, parsed here without
// build constraints so that every target's tests cover the parsers.

// hwcapEVTSTRM is HWCAP_EVTSTRM in a 32-bit Arm process's AT_HWCAP (bit 21).
const hwcapEVTSTRM = 1 << 21

// atHWCAP is the auxiliary vector's key for the hardware capabilities.
const atHWCAP = 16

// auxvHwcap32 returns AT_HWCAP from the auxiliary vector of a 32-bit
// little-endian process, as /proc/self/auxv holds it (pairs of words, key
// then value, up to the AT_NULL key 0), and whether it was there.
func auxvHwcap32(auxv []byte) (uint32, bool) {
	for i := 0; i+8 <= len(auxv); i += 8 {
		switch binary.LittleEndian.Uint32(auxv[i:]) {
		case 0:
			return 0, false
		case atHWCAP:
			return binary.LittleEndian.Uint32(auxv[i+4:]), true
		}
	}
	return 0, false
}

// armGranted applies the 32-bit Arm rule (arm.go) to what the process
// was told: whether the virtual counter may be read, and its frequency.
// cntfrq, which faults wherever the counter would, is called only when the
// kernel says it granted access; a zero frequency (firmware did not set the
// timer up) means the counter is not used, as on arm64.
func armGranted(hwcap uint32, cntfrq func() uint32) (ok bool, hz uint64) {
	if hwcap&hwcapEVTSTRM == 0 {
		return false, 0
	}
	hz = uint64(cntfrq())
	return hz != 0, hz
}

// cpuinfoTimebase returns the Time Base frequency the Linux kernel on
// POWER writes in /proc/cpuinfo (the line "timebase\t: 512000000" after the
// processors' blocks), or 0 when there is none. The line is the word
// "timebase" at its start, blanks (spaces, tabs), a colon, blanks, then a
// decimal number that fits in 64 bits, then only blanks or a carriage
// return; the first such line with a number other than zero counts (the
// Rust crate's parser takes the same lines).
func cpuinfoTimebase(cpuinfo []byte) uint64 {
	for len(cpuinfo) > 0 {
		var ln []byte
		ln, cpuinfo, _ = bytes.Cut(cpuinfo, []byte{'\n'})
		rest, ok := bytes.CutPrefix(ln, []byte("timebase"))
		if !ok {
			continue
		}
		blanks, value, ok := bytes.Cut(rest, []byte{':'})
		if !ok || len(bytes.Trim(blanks, " \t")) != 0 {
			continue
		}
		// ParseUint in base 10 takes digits only: no sign, no underscores.
		digits := bytes.TrimRight(bytes.TrimLeft(value, " \t"), " \t\r")
		if hz, err := strconv.ParseUint(string(digits), 10, 64); err == nil && hz != 0 {
			return hz
		}
	}
	return 0
}

// todHz is the s390x TOD clock's rate, fixed by the architecture: bit 51
// is one microsecond, so 4096 units a microsecond.
const todHz = 4_096_000_000

// todEpoch2020 is the TOD clock at 2020-01-01 00:00:00 UTC: 120 years of
// 365 days and 29 leap days after its 1900 epoch, 3,786,825,600 s.
const todEpoch2020 = 3_786_825_600 * todHz

// todUsable reports whether a TOD clock that STORE CLOCK FAST read as tod,
// with condition code cc, can be the counter: it runs (cc 0, set, or 1, not
// set), and its readings, counted from 2020 modulo 2^64, are below 2^63, so
// at least 71 years from wrapping. That takes a clock set to 2020-2090, or
// one never set, still counting from 1900; not one set to 2091 or later, nor
// to 1948-2019, whose readings would wrap within the process's life.
func todUsable(tod uint64, cc uint8) bool {
	return cc <= 1 && tod-todEpoch2020 < 1<<63
}

// sysctlUint64 decodes a 64-bit sysctl value (machdep.tsc_freq) as
// syscall.Sysctl returns it: little-endian bytes, one trailing zero byte
// stripped (it takes every value for a string), so up to 8 bytes, the
// missing high ones zero. 0 for anything longer.
func sysctlUint64(raw string) uint64 {
	if len(raw) > 8 {
		return 0
	}
	var v uint64
	for i := len(raw) - 1; i >= 0; i-- {
		v = v<<8 | uint64(raw[i])
	}
	return v
}
