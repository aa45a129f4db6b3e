//! Deciding which source the precise clocks read, and telling the caller
//! why — at the first reading, and again whenever the kernel changes its
//! mind.
//!
//! The counter is used when the hardware has one, it ticks at a constant
//! rate, reading it does not fault in this process, and, on Linux and
//! FreeBSD x86, the kernel itself chose the TSC as its clocksource
//! (FreeBSD: its timecounter, `kern.timecounter.hardware`): the kernel checks at boot
//! that the TSCs of all CPUs agree and keeps watching them, so following its
//! verdict means fastnow never trusts a counter the kernel distrusts. The
//! timekeeper asks again every second ([`KernelVerdict`]), so a counter the
//! kernel demotes at run time is dropped within a second; a verdict that
//! cannot be read at all (a container that masks `/sys`) vouches for
//! nothing, while one that cannot be read *right now* (descriptors or
//! memory exhausted: [`KernelVerdict::Unavailable`]) changes nothing and is
//! asked again. `FASTNOW_CLOCK` overrides the decision ([`EnvOverride`]; its
//! spellings are pinned down by `spec/vectors/env.json`, which the Go module
//! reads too). The rules: spec/SEMANTICS.md, "Sources".
//!
//! Everything here runs without allocating or locking, because the first
//! reading of a process may happen inside a signal handler.

use crate::source::arch::{self, Probe};
use core::fmt;

/// Which clock the precise tier reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Source {
    /// The architectural counter (`RDTSC`, `CNTVCT_EL0`), converted with a
    /// calibrated fixed-point line.
    Counter,
    /// The operating system's monotonic clock (`CLOCK_MONOTONIC`).
    Os,
}

/// Why the OS clock is used instead of the counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fallback {
    /// This target has no counter backend.
    NoCounter,
    /// The counter's rate changes with CPU frequency or sleep states.
    NotInvariant,
    /// The kernel's current clocksource is not the counter: it found the
    /// counter unreliable, or was configured otherwise.
    KernelClocksource(Clocksource),
    /// The kernel's current clocksource could not be read (a container or
    /// sandbox that hides `/sys`, or denies it: the file is missing or not
    /// this process's to read), so nothing vouches for the counter. A
    /// failure of the moment (descriptors or memory exhausted) is not this:
    /// see [`VerdictUnavailable`].
    ClocksourceUnknown,
    /// Reading the counter would fault in this process, or it is not set
    /// up: x86 under `prctl(PR_SET_TSC, PR_TSC_SIGSEGV)`, or a 32-bit CPU
    /// without `RDTSC` or without both `RDTSCP` and `LFENCE`; aarch64 with
    /// `CNTFRQ_EL0` zero; 32-bit Arm where the kernel does not say it lets
    /// user space read the generic timer (no `HWCAP_EVTSTRM`, as under
    /// qemu-arm) — never tried, since trying would fault; s390x with the
    /// TOD clock stopped, or reading a date from 1949 to 2019.
    Disabled,
    /// The counter did not advance between two reads during detection.
    Stalled,
    /// The counter is slower than the fixed point of the conversion allows
    /// (1 GHz on x86_64, about 1 MHz elsewhere).
    TooSlow,
    /// `FASTNOW_CLOCK=os`.
    Forced,
}

/// What `FASTNOW_CLOCK` said.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EnvOverride {
    /// Not set, empty, or only white space.
    Unset,
    /// `FASTNOW_CLOCK=counter`: use the counter whenever one is readable.
    Counter,
    /// `FASTNOW_CLOCK=os`: always use the OS clock.
    Os,
    /// Any other value: ignored; the automatic decision stands.
    Invalid,
}

impl EnvOverride {
    /// Interprets a `FASTNOW_CLOCK` value: ASCII white space (space, tab, line
    /// feed, vertical tab, form feed, carriage return) around it and ASCII
    /// case are ignored; nothing else is (`spec/vectors/env.json`).
    ///
    /// ```
    /// use fastnow::EnvOverride;
    /// assert_eq!(EnvOverride::parse(b" Counter\n"), EnvOverride::Counter);
    /// assert_eq!(EnvOverride::parse(b"os\x0b"), EnvOverride::Os);
    /// assert_eq!(EnvOverride::parse("\u{a0}os".as_bytes()), EnvOverride::Invalid);
    /// ```
    pub fn parse(value: &[u8]) -> EnvOverride {
        const fn space(b: u8) -> bool {
            matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
        }
        let start = value.iter().position(|&b| !space(b)).unwrap_or(value.len());
        let end = value
            .iter()
            .rposition(|&b| !space(b))
            .map_or(start, |i| i + 1);
        let v = &value[start..end];
        if v.is_empty() {
            EnvOverride::Unset
        } else if v.eq_ignore_ascii_case(b"counter") {
            EnvOverride::Counter
        } else if v.eq_ignore_ascii_case(b"os") {
            EnvOverride::Os
        } else {
            EnvOverride::Invalid
        }
    }
}

/// The name of a Linux clocksource, as read from sysfs (at most 24 bytes).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Clocksource {
    bytes: [u8; 24],
    len: u8,
}

impl Clocksource {
    /// Builds a name from raw bytes (trailing white space dropped, truncated to 24 bytes).
    pub fn new(raw: &[u8]) -> Clocksource {
        let raw = raw.trim_ascii();
        let len = raw.len().min(24);
        let mut bytes = [0u8; 24];
        bytes[..len].copy_from_slice(&raw[..len]);
        Clocksource {
            bytes,
            len: len as u8,
        }
    }

    /// The name, e.g. `"tsc"`, `"kvm-clock"`, `"hpet"`.
    pub fn as_str(&self) -> &str {
        core::str::from_utf8(&self.bytes[..self.len as usize]).unwrap_or("?")
    }

    /// Whether `raw` looks like what the kernel writes there: a name of
    /// lower-case letters, digits, `-` and `_`, then a line feed.
    #[cfg_attr(not(all(unix, not(target_os = "freebsd"))), allow(dead_code))]
    fn plausible(raw: &[u8]) -> bool {
        let name = raw.strip_suffix(b"\n").unwrap_or(raw);
        !name.is_empty()
            && name.len() <= 24
            && name
                .iter()
                .all(|&b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
    }
}

impl fmt::Debug for Clocksource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Clocksource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for Fallback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fallback::NoCounter => f.write_str("this target has no counter backend"),
            Fallback::NotInvariant => {
                f.write_str("the counter is not invariant (its rate follows CPU frequency)")
            }
            Fallback::KernelClocksource(cs) => write!(
                f,
                "the kernel's clocksource is {cs}, not the counter (set FASTNOW_CLOCK=counter to override)"
            ),
            Fallback::ClocksourceUnknown => f.write_str(
                "the kernel's clocksource could not be read, so nothing vouches for the counter \
                 (set FASTNOW_CLOCK=counter to use it anyway)",
            ),
            Fallback::Disabled => write!(
                f,
                "the counter cannot be read in this process ({})",
                DISABLED_WHY
            ),
            Fallback::Stalled => f.write_str("the counter did not advance"),
            Fallback::TooSlow => {
                f.write_str("the counter is too slow for fastnow's fixed-point conversion")
            }
            Fallback::Forced => f.write_str("FASTNOW_CLOCK=os"),
        }
    }
}

/// Why a counter is disabled, on this target (see [`Fallback::Disabled`]).
#[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
const DISABLED_WHY: &str =
    "prctl(PR_SET_TSC) makes RDTSC fault, or the CPU lacks RDTSC or an ordered read";
#[cfg(target_arch = "aarch64")]
const DISABLED_WHY: &str = "CNTFRQ_EL0 is zero: the timer is not set up";
#[cfg(target_arch = "arm")]
const DISABLED_WHY: &str =
    "the kernel does not say user space may read the generic timer: no HWCAP_EVTSTRM";
#[cfg(target_arch = "s390x")]
const DISABLED_WHY: &str = "the TOD clock is not running, or not set to a date from 2020 to 2090";
#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "x86",
    target_arch = "aarch64",
    target_arch = "arm",
    target_arch = "s390x"
)))]
const DISABLED_WHY: &str = "not set up";

/// Why the kernel's clocksource could not be read at the last attempt,
/// when the failure says nothing about the counter: descriptors or memory
/// were exhausted, or a call was interrupted ([`ClockInfo::verdict_unavailable`]).
///
/// The decision stands meanwhile — the counter stays in use, or, at the
/// first reading, the precise clocks read the OS clock until the verdict
/// can be read — and the file is read again: every second while the
/// counter is in use, and at the first reading after 1 ms, then after
/// twice as long each time, up to a second (spec/SEMANTICS.md, "The
/// kernel's verdict").
///
/// [`ClockInfo::verdict_unavailable`]: crate::ClockInfo::verdict_unavailable
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VerdictUnavailable {
    /// The `errno` the last attempt failed with (`EMFILE`: the process has
    /// as many descriptors open as `RLIMIT_NOFILE` allows).
    pub errno: i32,
    /// How many attempts in a row failed.
    pub attempts: u32,
    /// How long ago the kernel's verdict was last read (`None`: never, the
    /// first reading could not read it).
    pub since_last_read: Option<core::time::Duration>,
}

impl VerdictUnavailable {
    /// The error's symbolic name (`"EMFILE"`), where fastnow knows it.
    pub fn errno_name(&self) -> Option<&'static str> {
        errno_text(self.errno).map(|(name, _)| name)
    }
}

impl fmt::Display for VerdictUnavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the kernel's clocksource could not be read: ")?;
        match errno_text(self.errno) {
            Some((name, what)) => write!(f, "{what} ({name})")?,
            None => write!(f, "errno {}", self.errno)?,
        }
        match self.attempts {
            1 => f.write_str(", 1 attempt")?,
            n => write!(f, ", {n} attempts in a row")?,
        }
        match self.since_last_read {
            // Whole milliseconds: enough to tell a burst from an outage.
            Some(d) => write!(
                f,
                "; last read {:?} ago",
                core::time::Duration::from_millis(d.as_millis() as u64)
            ),
            None => f.write_str("; not read yet"),
        }
    }
}

/// The symbolic name and the description of the errors a read of the
/// clocksource file may meet.
fn errno_text(errno: i32) -> Option<(&'static str, &'static str)> {
    #[cfg(unix)]
    {
        let text = match errno {
            libc::EMFILE => ("EMFILE", "too many open files"),
            libc::ENFILE => ("ENFILE", "too many open files in the system"),
            libc::ENOMEM => ("ENOMEM", "out of memory"),
            libc::ENOBUFS => ("ENOBUFS", "no buffer space available"),
            libc::EAGAIN => ("EAGAIN", "resource temporarily unavailable"),
            libc::EINTR => ("EINTR", "interrupted system call"),
            libc::EIO => ("EIO", "input/output error"),
            libc::EBADF => ("EBADF", "bad file descriptor"),
            libc::EBUSY => ("EBUSY", "device or resource busy"),
            libc::ENOENT => ("ENOENT", "no such file or directory"),
            libc::EACCES => ("EACCES", "permission denied"),
            libc::EPERM => ("EPERM", "operation not permitted"),
            _ => return None,
        };
        Some(text)
    }
    #[cfg(not(unix))]
    {
        let _ = errno;
        None
    }
}

/// What the kernel says about the counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(not(any(unix, windows)), allow(dead_code))]
pub(crate) enum KernelVerdict {
    /// No kernel verdict exists on this platform (not x86 Linux, FreeBSD or
    /// Windows, or no file system access): the hardware's word is all there is.
    NotApplicable,
    /// The kernel's clocksource is this; it vouches for the counter when it
    /// is the counter's own name.
    Clocksource(Clocksource),
    /// There should be a verdict, but it cannot be read: the file is
    /// missing, or not this process's to read (`failure`), or says nothing
    /// a clocksource would. Nothing vouches for the counter.
    Unreadable,
    /// The file could not be read just now, for want of a resource (the
    /// `errno`: see `failure`). Says nothing about the counter: the decision
    /// stands, and the file is read again later. (Only a file can fail so:
    /// Windows' and FreeBSD's verdicts cannot.)
    #[cfg_attr(not(all(unix, not(target_os = "freebsd"))), allow(dead_code))]
    Unavailable(i32),
}

/// The verdict a failed `open`, `pread` or `fstat` of the clocksource file
/// gives, by its `errno` (`spec/vectors/verdict.json`). The file missing or
/// not a file that can be read, or access denied — a sandbox, a container
/// that hides `/sys`, sysfs not mounted, a `chroot`, a system call filter —
/// will not change by waiting: nothing vouches for the counter. Every other error is taken as one of
/// the moment, which says nothing about the counter: descriptors exhausted
/// (`EMFILE`, `ENFILE`), memory short (`ENOMEM`), an interrupted call.
#[cfg(unix)]
#[cfg_attr(target_os = "freebsd", allow(dead_code))] // FreeBSD reads a sysctl
pub(crate) fn failure(errno: i32) -> KernelVerdict {
    match errno {
        libc::ENOENT
        | libc::ENOTDIR
        | libc::EACCES
        | libc::EPERM
        | libc::ELOOP
        | libc::ENAMETOOLONG
        | libc::ENODEV
        | libc::ENXIO
        | libc::EISDIR
        | libc::EINVAL
        | libc::ENOSYS => KernelVerdict::Unreadable,
        errno => KernelVerdict::Unavailable(errno),
    }
}

impl KernelVerdict {
    /// The fallback this verdict calls for, if any. A verdict that is
    /// unavailable for now calls for none: it says nothing.
    fn fallback(self) -> Option<Fallback> {
        match (self, KERNEL_NAME_OF_COUNTER) {
            (KernelVerdict::Clocksource(cs), Some(_)) if !names_the_counter(cs.as_str()) => {
                Some(Fallback::KernelClocksource(cs))
            }
            (KernelVerdict::Unreadable, _) => Some(Fallback::ClocksourceUnknown),
            _ => None,
        }
    }

    fn clocksource(self) -> Option<Clocksource> {
        match self {
            KernelVerdict::Clocksource(cs) => Some(cs),
            _ => None,
        }
    }
}

/// The kernel's name for the counter when it uses it as its clocksource,
/// where the kernel's verdict is checked: Linux on x86 (64- and 32-bit),
/// Windows on x86 (its rule is at `read_verdict`), and FreeBSD on x86,
/// whose timecounter is `TSC` or `TSC-low` (see `names_the_counter`). The
/// other architectures are not checked: each has one counter that the
/// architecture makes common to all cores (and under qemu-user sysfs
/// describes the host, not the emulated machine).
#[cfg(all(
    any(target_arch = "x86_64", target_arch = "x86"),
    any(target_os = "linux", target_os = "android", windows)
))]
const KERNEL_NAME_OF_COUNTER: Option<&str> = Some("tsc");
#[cfg(all(
    any(target_arch = "x86_64", target_arch = "x86"),
    target_os = "freebsd"
))]
const KERNEL_NAME_OF_COUNTER: Option<&str> = Some("TSC");
#[cfg(not(all(
    any(target_arch = "x86_64", target_arch = "x86"),
    any(
        target_os = "linux",
        target_os = "android",
        windows,
        target_os = "freebsd"
    )
)))]
const KERNEL_NAME_OF_COUNTER: Option<&str> = None;

/// Whether a clocksource name is the counter's: the kernel vouches for it.
fn names_the_counter(name: &str) -> bool {
    if cfg!(target_os = "freebsd") {
        freebsd_timecounter_is_tsc(name)
    } else {
        Some(name) == KERNEL_NAME_OF_COUNTER
    }
}

/// FreeBSD names its TSC timecounter `TSC`, or `TSC-low` when it reads the
/// counter shifted right (on CPUs where the full rate would overflow its
/// 32-bit timecounter arithmetic too soon); it registers it only when it
/// found the TSC invariant and, on SMP, synchronised across CPUs (its
/// `tsc.c`), as Linux does with `tsc`. Every other timecounter (`HPET`,
/// `ACPI-fast`, `i8254`, `kvmclock` …) is not the counter.
fn freebsd_timecounter_is_tsc(name: &str) -> bool {
    name == "TSC" || name.starts_with("TSC-")
}

#[cfg(all(unix, not(target_os = "freebsd")))]
const CLOCKSOURCE_PATH: &core::ffi::CStr =
    c"/sys/devices/system/clocksource/clocksource0/current_clocksource";

/// Where the kernel's verdict is read from, kept open between reads.
#[derive(Clone, Copy, Debug)]
pub(crate) struct VerdictFile {
    #[cfg(all(unix, not(target_os = "freebsd")))]
    file: Option<crate::source::os::file::OpenFile>,
    /// Reads of the counter's own name trusted without an identity check
    /// since the last check (see `read_verdict`).
    #[cfg(all(unix, not(target_os = "freebsd")))]
    trusted: u8,
}

impl VerdictFile {
    /// Not opened yet.
    pub(crate) const CLOSED: VerdictFile = VerdictFile {
        #[cfg(all(unix, not(target_os = "freebsd")))]
        file: None,
        #[cfg(all(unix, not(target_os = "freebsd")))]
        trusted: 0,
    };
}

/// Reads the kernel's verdict, keeping the file open between calls (one
/// `pread` each time).
///
/// A program may close every descriptor it did not open (daemons do), and
/// the number then belongs to another file: a daemon's pid file, opened
/// next, gets it, and its `7905` looks like a clocksource name. So an
/// answer that would change anything — another clocksource's name, or none
/// — counts only if the descriptor still refers to the file opened (its
/// device and inode, checked after the read); otherwise the number is left
/// to its new owner, never closed, and the file is opened again and read
/// afresh. A descriptor still ours that gives no clocksource name is closed
/// and opened again too. The usual answer, the counter's own name, changes
/// nothing and costs the `pread` alone; its descriptor is checked every
/// `VERIFY_EVERY` reads, so another file that happened to read `tsc`
/// could hide a demotion for a few seconds at most, and never cause one.
pub(crate) fn kernel_verdict(f: &mut VerdictFile) -> KernelVerdict {
    if KERNEL_NAME_OF_COUNTER.is_none() {
        return KernelVerdict::NotApplicable;
    }
    read_verdict(f)
}

/// How often, at least, the descriptor that gave the counter's own name is
/// checked (every other answer is checked each time). Go's is the same.
#[cfg(all(unix, not(target_os = "freebsd")))]
const VERIFY_EVERY: u8 = 8;

#[cfg(all(unix, not(target_os = "freebsd")))]
fn read_verdict(f: &mut VerdictFile) -> KernelVerdict {
    use crate::source::os::file::OpenFile;
    let mut buf = [0u8; 32];
    // What a file of ours that gave no name says (a failed read: by its
    // errno; text that is no clocksource's name: unreadable).
    let mut failed = KernelVerdict::Unreadable;
    for _ in 0..2 {
        let open = match f.file {
            Some(open) => open,
            // Out of descriptors (`EMFILE`) after a daemon closed ours, say:
            // the failure's errno says whether it vouches for nothing or
            // is one of the moment.
            None => match OpenFile::try_open(CLOCKSOURCE_PATH) {
                Ok(open) => {
                    f.file = Some(open);
                    f.trusted = 0;
                    open
                }
                Err(errno) => return failure(errno),
            },
        };
        let read = open.read_at_start(&mut buf);
        let name = read
            .ok()
            .map(|n| &buf[..n])
            .filter(|text| Clocksource::plausible(text))
            .map(Clocksource::new);
        if let Some(cs) = name {
            if names_the_counter(cs.as_str()) && f.trusted < VERIFY_EVERY - 1 {
                f.trusted += 1;
                return KernelVerdict::Clocksource(cs);
            }
        }
        if !open.is_ours() {
            // Someone else's descriptor now: left open, for its owner.
            f.file = None;
            continue;
        }
        f.trusted = 0;
        if let Some(cs) = name {
            return KernelVerdict::Clocksource(cs);
        }
        failed = read.map_or_else(failure, |_| KernelVerdict::Unreadable);
        open.close_if_ours();
        f.file = None;
    }
    failed
}

/// Windows has no clocksource file; what plays its part is the clock
/// Windows itself times with, `QueryPerformanceCounter`. Since Windows 10
/// it reads the invariant TSC, scaled to a 10 MHz frequency, whenever the
/// TSC is trustworthy; otherwise it falls back to a platform timer, and its
/// frequency says which (3.579545 MHz: the ACPI PM timer; 14.31818 MHz: the
/// HPET). So a 10 MHz frequency counts as Windows vouching for the TSC, as
/// the name `"tsc"`; any other is reported as `"qpc-<Hz>"`. (Older Windows
/// reports other frequencies and so falls back: safe, slower.)
#[cfg(windows)]
fn read_verdict(_f: &mut VerdictFile) -> KernelVerdict {
    extern "system" {
        fn QueryPerformanceFrequency(frequency: *mut i64) -> i32;
    }
    let mut hz = 0i64;
    // SAFETY: writes one i64 through a valid pointer; kernel32 is always
    // linked by std on Windows.
    if unsafe { QueryPerformanceFrequency(&mut hz) } == 0 || hz <= 0 {
        return KernelVerdict::Unreadable;
    }
    if hz == 10_000_000 {
        return KernelVerdict::Clocksource(Clocksource::new(b"tsc"));
    }
    // "qpc-" and the frequency's decimal digits (at most 19).
    let mut name = *b"qpc-00000000000000000000";
    let mut start = name.len();
    let mut rest = hz as u64;
    while rest != 0 || start == name.len() {
        start -= 1;
        name[start] = b'0' + (rest % 10) as u8;
        rest /= 10;
    }
    name.copy_within(start.., 4);
    let len = 4 + (name.len() - start);
    KernelVerdict::Clocksource(Clocksource::new(&name[..len]))
}

/// FreeBSD says which timecounter it keeps time with in the sysctl
/// `kern.timecounter.hardware` (a string; one system call, nothing kept
/// open).
#[cfg(target_os = "freebsd")]
fn read_verdict(_f: &mut VerdictFile) -> KernelVerdict {
    let mut buf = [0u8; 32];
    let mut len = buf.len();
    // SAFETY: the name is NUL-terminated; `buf` and `len` describe a live,
    // writable buffer of `len` bytes (a longer value fails with ENOMEM,
    // writing nothing past it); no new value is set.
    let rc = unsafe {
        libc::sysctlbyname(
            c"kern.timecounter.hardware".as_ptr(),
            buf.as_mut_ptr().cast(),
            &mut len,
            core::ptr::null_mut(),
            0,
        )
    };
    if rc != 0 || len > buf.len() {
        return KernelVerdict::Unreadable;
    }
    let name = buf[..len].split(|&b| b == 0).next().unwrap_or(&[]);
    if name.is_empty() || !name.iter().all(|b| b.is_ascii_graphic()) {
        return KernelVerdict::Unreadable;
    }
    KernelVerdict::Clocksource(Clocksource::new(name))
}

#[cfg(not(any(unix, windows)))]
fn read_verdict(_f: &mut VerdictFile) -> KernelVerdict {
    KernelVerdict::NotApplicable
}

/// The outcome of detection.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Decision {
    pub probe: Probe,
    pub clocksource: Option<Clocksource>,
    pub env: EnvOverride,
    pub fallback: Option<Fallback>,
    /// The counter would be chosen, but the kernel's verdict could not be
    /// read yet (the `errno` of the last attempt): until it can, the OS
    /// clock is read (`timekeeper::verdict`).
    pub pending: Option<i32>,
}

impl Decision {
    /// Decides from what was observed (see [`decide`]).
    pub(crate) fn new(probe: Probe, verdict: KernelVerdict, env: EnvOverride) -> Decision {
        let mut d = Decision {
            probe,
            clocksource: None,
            env,
            fallback: None,
            pending: None,
        };
        d.settle(verdict);
        d
    }

    /// Decides again with a verdict read anew, while the decision waits
    /// for one (`pending`).
    pub(crate) fn settle(&mut self, verdict: KernelVerdict) {
        self.fallback = decide(&self.probe, verdict, self.env);
        self.clocksource = verdict.clocksource();
        // Pending only where the verdict is all that is missing: not where
        // the counter is refused anyway, or forced.
        self.pending = match verdict {
            KernelVerdict::Unavailable(errno)
                if self.fallback.is_none() && self.env != EnvOverride::Counter =>
            {
                Some(errno)
            }
            _ => None,
        };
    }

    /// Whether the counter is chosen: no fallback, and no verdict awaited.
    pub(crate) fn counter(&self) -> bool {
        self.fallback.is_none() && self.pending.is_none()
    }

    /// Whether the run-time re-check of the kernel's verdict applies: the
    /// counter is in use because the kernel vouched for it (not by override).
    pub(crate) fn follows_kernel(&self) -> bool {
        self.fallback.is_none()
            && self.env != EnvOverride::Counter
            && KERNEL_NAME_OF_COUNTER.is_some()
    }

    /// The fallback a fresh kernel verdict calls for, if the counter is in use
    /// because the kernel vouched for it.
    pub(crate) fn recheck(&self, verdict: KernelVerdict) -> Option<Fallback> {
        if self.follows_kernel() {
            verdict.fallback()
        } else {
            None
        }
    }
}

/// Decides the source from what was observed. Pure, so every rule is tested.
pub(crate) fn decide(probe: &Probe, verdict: KernelVerdict, env: EnvOverride) -> Option<Fallback> {
    if env == EnvOverride::Os {
        return Some(Fallback::Forced);
    }
    if probe.counter.is_none() {
        return Some(Fallback::NoCounter);
    }
    if probe.disabled {
        return Some(Fallback::Disabled);
    }
    if env == EnvOverride::Counter {
        return None;
    }
    if !probe.invariant {
        return Some(Fallback::NotInvariant);
    }
    verdict.fallback()
}

/// Observes this machine and decides. Allocates nothing and takes no lock.
/// `f` keeps the clocksource file open for later re-checks.
pub(crate) fn observe(f: &mut VerdictFile) -> Decision {
    let probe = arch::probe();
    let env = read_env();
    let verdict = if probe.counter.is_some() {
        kernel_verdict(f)
    } else {
        KernelVerdict::NotApplicable
    };
    let mut decision = Decision::new(probe, verdict, env);
    if decision.fallback.is_none() && !counter_advances() {
        decision.fallback = Some(Fallback::Stalled);
        decision.pending = None;
    }
    decision
}

/// A counter that never moves (a broken hypervisor, a frozen emulator) would
/// give Instants that never advance; check it ticks across a few OS clock reads.
fn counter_advances() -> bool {
    let first = arch::ticks();
    for _ in 0..64 {
        let _ = crate::source::os::monotonic_nanos();
        if arch::ticks() != first {
            return true;
        }
    }
    false
}

fn read_env() -> EnvOverride {
    crate::source::os::with_env(c"FASTNOW_CLOCK", |value| {
        value.map_or(EnvOverride::Unset, EnvOverride::parse)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe(invariant: bool, disabled: bool) -> Probe {
        Probe {
            counter: Some("test counter"),
            invariant,
            freq: None,
            ordered_read: "A",
            ordered_read_alt: "B",
            use_alt: false,
            hypervisor: None,
            disabled,
        }
    }

    fn cs(name: &str) -> KernelVerdict {
        KernelVerdict::Clocksource(Clocksource::new(name.as_bytes()))
    }

    /// Windows' verdict is its performance counter's frequency: 10 MHz
    /// (QPC reads the TSC) counts as "tsc", any other is named after it.
    #[cfg(all(windows, target_arch = "x86_64"))]
    #[test]
    fn windows_names_its_performance_counter() {
        let mut file = VerdictFile::CLOSED;
        let KernelVerdict::Clocksource(cs) = kernel_verdict(&mut file) else {
            panic!("QueryPerformanceFrequency gave no verdict");
        };
        let name = cs.as_str();
        assert!(
            name == "tsc" || (name.starts_with("qpc-") && name[4..].parse::<u64>().is_ok()),
            "{name}"
        );
        // The verdict is what decides, and what clock_info reports.
        let info = crate::clock_info();
        assert_eq!(
            info.kernel_clocksource.as_ref().map(|c| c.as_str()),
            Some(name)
        );
    }

    #[test]
    fn rules_in_order() {
        let good = probe(true, false);
        let na = KernelVerdict::NotApplicable;
        let expected = cs(KERNEL_NAME_OF_COUNTER.unwrap_or("anything"));
        assert_eq!(decide(&good, expected, EnvOverride::Unset), None);
        assert_eq!(decide(&good, na, EnvOverride::Unset), None);
        assert_eq!(decide(&good, na, EnvOverride::Invalid), None);
        assert_eq!(decide(&good, na, EnvOverride::Os), Some(Fallback::Forced));
        assert_eq!(
            decide(&probe(false, false), na, EnvOverride::Unset),
            Some(Fallback::NotInvariant)
        );
        assert_eq!(decide(&probe(false, false), na, EnvOverride::Counter), None);
        assert_eq!(
            decide(&probe(true, true), na, EnvOverride::Counter),
            Some(Fallback::Disabled)
        );
        let mut none = good;
        none.counter = None;
        assert_eq!(
            decide(&none, na, EnvOverride::Counter),
            Some(Fallback::NoCounter)
        );
        // Unknown is not verified: a verdict that cannot be read falls back,
        // unless the caller forces the counter.
        assert_eq!(
            decide(&good, KernelVerdict::Unreadable, EnvOverride::Unset),
            Some(Fallback::ClocksourceUnknown)
        );
        assert_eq!(
            decide(&good, KernelVerdict::Unreadable, EnvOverride::Counter),
            None
        );
        if KERNEL_NAME_OF_COUNTER.is_some() {
            assert_eq!(
                decide(&good, cs("kvm-clock\n"), EnvOverride::Unset),
                Some(Fallback::KernelClocksource(Clocksource::new(b"kvm-clock")))
            );
            assert_eq!(decide(&good, cs("hpet"), EnvOverride::Counter), None);
        }
    }

    #[test]
    fn recheck_applies_only_when_the_kernel_vouched() {
        let kernel = Decision {
            probe: probe(true, false),
            clocksource: None,
            env: EnvOverride::Unset,
            fallback: None,
            pending: None,
        };
        let forced = Decision {
            env: EnvOverride::Counter,
            ..kernel
        };
        if KERNEL_NAME_OF_COUNTER.is_some() {
            assert_eq!(
                kernel.recheck(cs("hpet")),
                Some(Fallback::KernelClocksource(Clocksource::new(b"hpet")))
            );
            assert_eq!(
                kernel.recheck(KernelVerdict::Unreadable),
                Some(Fallback::ClocksourceUnknown)
            );
            assert_eq!(kernel.recheck(cs("tsc")), None);
        }
        assert_eq!(forced.recheck(cs("hpet")), None);
    }

    /// Another file given the descriptor's number (as `dup2` does here, or
    /// a daemon's close-all then open): its text never counts. Text other
    /// than the counter's name is caught at once; the counter's name within
    /// `VERIFY_EVERY` reads. The other file is never closed.
    #[cfg(all(target_os = "linux", any(target_arch = "x86_64", target_arch = "x86")))]
    #[test]
    fn a_descriptor_taken_by_another_file_is_not_believed() {
        use std::io::Write;
        let Ok(real) = std::fs::read(CLOCKSOURCE_PATH.to_str().unwrap()) else {
            std::println!("skipped: no clocksource file here");
            return;
        };
        let real = KernelVerdict::Clocksource(Clocksource::new(&real));
        let mut f = VerdictFile::CLOSED;
        assert_eq!(kernel_verdict(&mut f), real);
        for (text, within) in [("7905\n", 1), ("tsc\n", VERIFY_EVERY)] {
            let path = std::env::temp_dir().join(std::format!(
                "fastnow-verdict-{}-{}",
                std::process::id(),
                text.trim()
            ));
            std::fs::File::create(&path)
                .unwrap()
                .write_all(text.as_bytes())
                .unwrap();
            let other = std::fs::File::open(&path).unwrap();
            let fd = f.file.unwrap().fd();
            // SAFETY: replaces our own descriptor with a copy of `other`'s;
            // no memory effects.
            assert_eq!(
                unsafe { libc::dup2(std::os::fd::AsRawFd::as_raw_fd(&other), fd) },
                fd
            );
            let mut reads = 0;
            while f.file.unwrap().fd() == fd {
                reads += 1;
                assert!(reads <= within, "{text:?} still read after {within} reads");
                let v = kernel_verdict(&mut f);
                assert!(v == real || text == "tsc\n", "{v:?}");
            }
            assert_eq!(kernel_verdict(&mut f), real);
            // The other file's copy at the old number is still open, intact.
            let mut buf = [0u8; 8];
            // SAFETY: reads into a live buffer of its length.
            let n = unsafe { libc::pread(fd, buf.as_mut_ptr().cast(), buf.len(), 0) };
            assert_eq!(&buf[..n as usize], text.as_bytes());
            // SAFETY: the copy made by dup2 above, closed once.
            unsafe { libc::close(fd) };
            let _ = std::fs::remove_file(&path);
        }
    }

    /// How a failure to read the clocksource file is taken, by its errno,
    /// against `spec/vectors/verdict.json` (the Go module's tests read it
    /// too): the sandbox's refusals vouch for nothing, a failure of the
    /// moment is only that — and so is an errno the file does not list.
    #[cfg(unix)]
    #[test]
    fn verdict_failures_follow_the_spec() {
        let errno = |name: &str| match name {
            "ENOENT" => libc::ENOENT,
            "ENOTDIR" => libc::ENOTDIR,
            "EACCES" => libc::EACCES,
            "EPERM" => libc::EPERM,
            "ELOOP" => libc::ELOOP,
            "ENAMETOOLONG" => libc::ENAMETOOLONG,
            "ENODEV" => libc::ENODEV,
            "ENXIO" => libc::ENXIO,
            "EISDIR" => libc::EISDIR,
            "EINVAL" => libc::EINVAL,
            "ENOSYS" => libc::ENOSYS,
            "EMFILE" => libc::EMFILE,
            "ENFILE" => libc::ENFILE,
            "ENOMEM" => libc::ENOMEM,
            "ENOBUFS" => libc::ENOBUFS,
            "EAGAIN" => libc::EAGAIN,
            "EINTR" => libc::EINTR,
            "EIO" => libc::EIO,
            "EBUSY" => libc::EBUSY,
            other => std::panic!("{other}: not known to this test"),
        };
        let path = std::format!("{}/spec/vectors/verdict.json", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| std::panic!("{path}: {e}"));
        let file: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
        let errors = file["errors"].as_array().expect("a list of errors");
        let mut outcomes = std::collections::BTreeSet::new();
        for e in errors {
            let name = e["errno"].as_str().expect("a name");
            let outcome = e["outcome"].as_str().expect("an outcome");
            let got = failure(errno(name));
            let want = match outcome {
                "unreadable" => KernelVerdict::Unreadable,
                "unavailable" => KernelVerdict::Unavailable(errno(name)),
                other => std::panic!("{name}: outcome {other}?"),
            };
            assert_eq!(got, want, "{name}");
            outcomes.insert(outcome);
        }
        assert_eq!(outcomes.len(), 2, "both outcomes listed");
        // Not listed: a failure of the moment.
        assert_eq!(failure(4095), KernelVerdict::Unavailable(4095));
        // Which changes no decision, at a re-check or at detection.
        let good = probe(true, false);
        let emfile = KernelVerdict::Unavailable(libc::EMFILE);
        assert_eq!(decide(&good, emfile, EnvOverride::Unset), None);
        let d = Decision::new(good, emfile, EnvOverride::Unset);
        assert_eq!((d.fallback, d.pending), (None, Some(libc::EMFILE)));
        assert!(!d.counter(), "the counter awaits the verdict");
        assert_eq!(d.recheck(emfile), None);
        // Forced, or refused for another reason: nothing is awaited.
        let forced = Decision::new(good, emfile, EnvOverride::Counter);
        assert_eq!((forced.fallback, forced.pending), (None, None));
        let refused = Decision::new(probe(false, false), emfile, EnvOverride::Unset);
        assert_eq!(refused.pending, None);
        // Settled once it can be read.
        let mut settled = d;
        settled.settle(cs("kvm-clock"));
        assert_eq!(settled.pending, None);
        assert_eq!(settled.counter(), KERNEL_NAME_OF_COUNTER.is_none());
    }

    /// What `clock_info` says of a verdict unavailable for now.
    #[cfg(unix)]
    #[test]
    fn an_unavailable_verdict_says_why() {
        let mut why = VerdictUnavailable {
            errno: libc::EMFILE,
            attempts: 3,
            since_last_read: Some(core::time::Duration::from_micros(5_002_345)),
        };
        assert_eq!(why.errno_name(), Some("EMFILE"));
        assert_eq!(
            std::format!("{why}"),
            "the kernel's clocksource could not be read: too many open files (EMFILE), \
             3 attempts in a row; last read 5.002s ago"
        );
        why.attempts = 1;
        why.since_last_read = None;
        why.errno = 4095;
        assert_eq!(why.errno_name(), None);
        assert_eq!(
            std::format!("{why}"),
            "the kernel's clocksource could not be read: errno 4095, 1 attempt; not read yet"
        );
    }

    /// FreeBSD's verdict: its TSC timecounters by either name vouch for the
    /// counter; any other timecounter does not.
    #[test]
    fn freebsd_timecounter_names() {
        assert!(freebsd_timecounter_is_tsc("TSC"));
        assert!(freebsd_timecounter_is_tsc("TSC-low"));
        for other in ["HPET", "ACPI-fast", "i8254", "kvmclock", "tsc", "TSCX", ""] {
            assert!(!freebsd_timecounter_is_tsc(other), "{other}");
        }
        // On this target, the name the verdict checks against vouches.
        if let Some(name) = KERNEL_NAME_OF_COUNTER {
            assert!(names_the_counter(name));
            assert!(!names_the_counter("hpet") && !names_the_counter("HPET"));
        }
    }

    #[test]
    fn clocksource_name_is_trimmed_bounded_and_checked() {
        assert_eq!(Clocksource::new(b"tsc\n").as_str(), "tsc");
        let long = Clocksource::new(b"a-very-long-clocksource-name-indeed");
        assert_eq!(long.as_str().len(), 24);
        assert!(Clocksource::plausible(b"kvm-clock\n"));
        assert!(Clocksource::plausible(b"arch_sys_counter\n"));
        assert!(!Clocksource::plausible(b""));
        assert!(!Clocksource::plausible(b"\x7fELF\x02\x01"));
        assert!(!Clocksource::plausible(b"Hello world\n"));
    }
}
