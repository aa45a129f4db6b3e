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
