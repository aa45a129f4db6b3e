package arch

import (
	"encoding/binary"
	"strconv"
	"strings"
	"testing"
	"testing/quick"
)

// auxv32 lays out a 32-bit little-endian auxiliary vector, as
// /proc/self/auxv holds it.
func auxv32(pairs ...uint32) []byte {
	b := make([]byte, 4*len(pairs))
	for i, w := range pairs {
		binary.LittleEndian.PutUint32(b[4*i:], w)
	}
	return b
}

func TestAuxvHwcap32(t *testing.T) {
	for _, c := range []struct {
		name  string
		auxv  []byte
		hwcap uint32
		found bool
	}{
		// What qemu-arm gives a process: no HWCAP_EVTSTRM.
		{"qemu-arm", auxv32(3, 0x10034, 6, 4096, 16, 0x1fb0d7, 26, 0x1f, 0, 0), 0x1fb0d7, true},
		{"event stream", auxv32(16, 0x3fb0d7, 0, 0), 0x3fb0d7, true},
		{"after AT_NULL", auxv32(6, 4096, 0, 0, 16, 0x3fb0d7), 0, false},
		{"missing", auxv32(6, 4096, 0, 0), 0, false},
		{"truncated", auxv32(6, 4096, 16)[:10], 0, false},
		{"empty", nil, 0, false},
	} {
		hwcap, found := auxvHwcap32(c.auxv)
		if hwcap != c.hwcap || found != c.found {
			t.Errorf("%s: (%#x, %v), want (%#x, %v)", c.name, hwcap, found, c.hwcap, c.found)
		}
	}
	// Any AT_HWCAP value is found after any other keys, and no input makes
	// the parser fail in any other way than "not there".
	found := func(keys []uint32, hwcap uint32) bool {
		var pairs []uint32
		for _, k := range keys {
			if k != 0 && k != atHWCAP {
				pairs = append(pairs, k, ^k)
			}
		}
		got, ok := auxvHwcap32(auxv32(append(pairs, atHWCAP, hwcap, 0, 0)...))
		return ok && got == hwcap
	}
	if err := quick.Check(found, nil); err != nil {
		t.Error(err)
	}
	if err := quick.Check(func(b []byte) bool { auxvHwcap32(b); return true }, nil); err != nil {
		t.Error(err)
	}
}

// The 32-bit Arm rule: the counter only with the kernel's HWCAP_EVTSTRM,
// and CNTFRQ (which would fault wherever the counter does) read only then.
func TestArmGranted(t *testing.T) {
	never := func() uint32 { t.Fatal("CNTFRQ read without HWCAP_EVTSTRM"); return 0 }
	hz := func(f uint32) func() uint32 { return func() uint32 { return f } }
	for _, c := range []struct {
		hwcap uint32
		freq  func() uint32
		ok    bool
		hz    uint64
	}{
		{0, never, false, 0},
		// Every other bit (SWP, HALF, THUMB, VFP, NEON, TLS, VFPv4, IDIV,
		// LPAE ...) says nothing about the timer.
		{^uint32(hwcapEVTSTRM), never, false, 0},
		{0x1fb0d7, never, false, 0}, // qemu-arm's
		{hwcapEVTSTRM, hz(24_000_000), true, 24_000_000},
		{^uint32(0), hz(19_200_000), true, 19_200_000},
		// Granted, but firmware left the frequency at zero.
		{hwcapEVTSTRM, hz(0), false, 0},
	} {
		if ok, got := armGranted(c.hwcap, c.freq); ok != c.ok || got != c.hz {
			t.Errorf("hwcap %#x: (%v, %d), want (%v, %d)", c.hwcap, ok, got, c.ok, c.hz)
		}
	}
}

func TestCpuinfoTimebase(t *testing.T) {
	const power9 = "processor\t: 0\ncpu\t\t: POWER9 (architected), altivec supported\n" +
		"clock\t\t: 2200.000000MHz\nrevision\t: 2.2 (pvr 004e 1202)\n\n" +
		"processor\t: 1\ncpu\t\t: POWER9 (architected), altivec supported\n\n" +
		"timebase\t: 512000000\nplatform\t: pSeries\nmodel\t\t: IBM pSeries (emulated by qemu)\n"
	for _, c := range []struct {
		name, text string
		want       uint64
	}{
		{"POWER9", power9, 512_000_000},
		{"no line feed at the end", "timebase : 18000000", 18_000_000},
		{"no blanks, CR LF", "timebase:512000000 \r\nx", 512_000_000},
		{"first line counts", "timebase : 1\ntimebase : 2\n", 1},
		{"a zero does not count", "timebase\t: 0\ntimebase\t: 9\n", 9},
		{"nor does a line that is not a number", "timebase\t: x\ntimebase\t: 7\n", 7},
		// x86's /proc/cpuinfo, as qemu-user shows the host's.
		{"no timebase", "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu MHz\t\t: 2445.426\n", 0},
		{"a unit", "timebase\t: 512000000 Hz\n", 0},
		{"negative", "timebase\t: -5\n", 0},
		{"a sign", "timebase\t: +5\n", 0},
		{"underscores", "timebase\t: 512_000_000\n", 0},
		{"zero", "timebase\t: 0\n", 0},
		{"no value", "timebase\t:\n", 0},
		{"too large", "timebase\t: 99999999999999999999999\n", 0},
		{"a longer key", "timebases\t: 1\n", 0},
		{"not at the start", " timebase\t: 1\n", 0},
		{"another key's value", "cpu : timebase : 1\n", 0},
		{"no colon", "timebase 512000000\n", 0},
		{"empty", "", 0},
	} {
		if got := cpuinfoTimebase([]byte(c.text)); got != c.want {
			t.Errorf("%s: %d Hz, want %d", c.name, got, c.want)
		}
	}
	if err := quick.Check(func(b []byte) bool { cpuinfoTimebase(b); return true }, nil); err != nil {
		t.Error(err)
	}
	// Any frequency written as the kernel writes it is read back.
	roundTrip := func(prefix string, hz uint64) bool {
		text := "processor\t: 0\n" + prefix + "\ntimebase\t: " + strconv.FormatUint(hz, 10) + "\n"
		return cpuinfoTimebase([]byte(text)) == hz
	}
	if err := quick.Check(func(hz uint64) bool { return hz == 0 || roundTrip("cpu\t\t: POWER10", hz) }, nil); err != nil {
		t.Error(err)
	}
}

// The s390x TOD clock is used only while it runs and its readings, counted
// from 2020, have at least 71 years before they wrap.
func TestTodUsable(t *testing.T) {
	// 1970-01-01 is 2,208,988,800 s after the TOD clock's 1900 epoch.
	if unix := uint64(2_208_988_800) * todHz; todEpoch2020-unix != 1_577_836_800*todHz {
		t.Fatalf("2020 is %d units after 1970", todEpoch2020-unix)
	}
	// Variables: the sums wrap past 2042, as the clock does.
	epoch, year := uint64(todEpoch2020), uint64(365*86_400*todHz)
	for _, c := range []struct {
		name string
		tod  uint64
		cc   uint8
		want bool
	}{
		{"2020", epoch, 0, true},
		{"2040, clock not set", epoch + 20*year, 1, true},
		{"past the 64-bit clock's 2042 wrap", epoch + 40*year, 0, true},
		{"just before 2020: wraps at once", epoch - 1, 0, false},
		{"1990: wraps in 30 years", epoch - 30*year, 0, false},
		// A clock never set to the date counts from its 1900 epoch: 120
		// years of readings before they wrap.
		{"never set to the date", 0, 1, true},
		{"after 2090", epoch + 72*year, 0, false},
		{"error state", epoch, 2, false},
		{"stopped", epoch, 3, false},
	} {
		if got := todUsable(c.tod, c.cc); got != c.want {
			t.Errorf("%s: %v", c.name, got)
		}
	}
	// Any running clock within 2020..2090 is used: the readings, counted
	// from 2020, then have 71 years before they wrap.
	if err := quick.Check(func(since uint64) bool {
		return todUsable(epoch+since, 0) == (since < 1<<63)
	}, nil); err != nil {
		t.Error(err)
	}
}

// machdep.tsc_freq through syscall.Sysctl, which strips one trailing zero
// byte from every value.
func TestSysctlUint64(t *testing.T) {
	asSysctl := func(v uint64) string {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], v)
		s := string(b[:])
		return strings.TrimSuffix(s, "\x00")
	}
	for _, v := range []uint64{0, 1, 2_445_426_000, 1 << 56, ^uint64(0)} {
		if got := sysctlUint64(asSysctl(v)); got != v {
			t.Errorf("%d read back as %d", v, got)
		}
	}
	if err := quick.Check(func(v uint64) bool { return sysctlUint64(asSysctl(v)) == v }, nil); err != nil {
		t.Error(err)
	}
	if got := sysctlUint64("123456789"); got != 0 {
		t.Errorf("a 9-byte value read as %d", got)
	}
}
