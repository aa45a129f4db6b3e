package fastnow

// What the kernel's verdict is read from, parsed here without build
// constraints so that every target's tests cover it.

// timecounterVerdict is the verdict FreeBSD's kern.timecounter.hardware
// gives, as syscall.Sysctl returns it: the timecounter's name, 1 to 32
// printable ASCII characters without spaces, or unreadable.
func timecounterVerdict(name string, err error) verdict {
	if err != nil || len(name) == 0 || len(name) > 32 {
		return verdict{kind: verdictUnreadable}
	}
	for i := 0; i < len(name); i++ {
		if name[i] <= ' ' || name[i] > '~' {
			return verdict{kind: verdictUnreadable}
		}
	}
	return verdict{kind: verdictNamed, name: name}
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
