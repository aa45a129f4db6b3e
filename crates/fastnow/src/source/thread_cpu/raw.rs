//! The thread CPU clock's per-reading system calls, made in place (Linux
//! x86_64 and aarch64): no libc wrapper, and for `clock_gettime` no detour
//! through the vDSO, which has no CPU clocks and makes the same call after
//! checking so. The call is then the caller's own instructions, inlined
//! where it reads the clock. Each returns the kernel's result: a
//! non-negative value, or minus the errno.

#[cfg(target_arch = "x86_64")]
mod nr {
    #[cfg(feature = "std")] // the perf route needs std (thread-locals)
    pub(super) const IOCTL: usize = 16;
    pub(super) const CLOCK_GETTIME: usize = 228;
}

#[cfg(target_arch = "aarch64")]
mod nr {
    #[cfg(feature = "std")]
    pub(super) const IOCTL: usize = 29;
    pub(super) const CLOCK_GETTIME: usize = 113;
}

/// System call `nr` with three arguments.
///
/// # Safety
/// The arguments are valid for call `nr`: every pointer among them points
/// to memory the call may read or write as the call's documentation says.
#[inline(always)]
unsafe fn syscall3(nr: usize, a: usize, b: usize, c: usize) -> isize {
    let ret: isize;
    // SAFETY: the Linux x86_64 system-call convention: the number in rax,
    // the arguments in rdi, rsi, rdx, the result in rax; the instruction
    // overwrites rcx and r11, and the kernel preserves every other
    // register. No stack is used. Not `nomem`: the call may write memory
    // through its arguments, as the caller's contract allows.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        core::arch::asm!(
            "syscall",
            inlateout("rax") nr as isize => ret,
            in("rdi") a,
            in("rsi") b,
            in("rdx") c,
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    // SAFETY: the Linux aarch64 system-call convention: the number in x8,
    // the arguments in x0–x2, the result in x0; the kernel preserves every
    // other register. As above for memory.
    #[cfg(target_arch = "aarch64")]
    unsafe {
        core::arch::asm!(
            "svc 0",
            in("x8") nr,
            inlateout("x0") a as isize => ret,
            in("x1") b,
            in("x2") c,
            options(nostack),
        );
    }
    ret
}

/// `clock_gettime(clock, ts)`: whether it succeeded.
#[inline(always)]
pub(crate) fn clock_gettime(clock: libc::clockid_t, ts: &mut libc::timespec) -> bool {
    // SAFETY: the call writes one timespec through `ts`, which is valid and
    // writable; an unknown clock is refused (EINVAL) without writing.
    unsafe {
        syscall3(
            nr::CLOCK_GETTIME,
            clock as usize,
            ts as *mut libc::timespec as usize,
            0,
        ) == 0
    }
}

/// `ioctl(fd, request, arg)` for a request whose argument is a value or
/// null, or points to `*out`: the kernel's result.
///
/// The requests made here are perf's (`'$'`): on a descriptor that is not a
/// perf event — one fastnow kept, whose number a program reused — the file
/// refuses them (`ENOTTY`) and writes nothing.
#[cfg(feature = "std")]
#[inline(always)]
pub(crate) fn ioctl(fd: i32, request: u32, out: Option<&mut u64>) -> isize {
    let arg = out.map_or(0, |out| out as *mut u64 as usize);
    // SAFETY: the argument is 0 or a valid, writable u64 (the most a perf
    // request on this path writes); a bad descriptor is EBADF.
    unsafe { syscall3(nr::IOCTL, fd as usize, request as usize, arg) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nanos(ts: &libc::timespec) -> u64 {
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    }

    /// The call made in place reads the same clock as libc's, between two
    /// of its readings; an unknown clock is refused.
    #[test]
    fn clock_gettime_in_place() {
        let zero = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        let (mut a, mut b, mut c) = (zero, zero, zero);
        // SAFETY: valid, writable timespecs.
        unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut a) };
        assert!(clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut b));
        // SAFETY: as above.
        unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut c) };
        assert!(nanos(&a) <= nanos(&b) && nanos(&b) <= nanos(&c));
        assert!(nanos(&b) > 0);
        let mut unknown = b;
        assert!(!clock_gettime(-1_000, &mut unknown));
        assert_eq!(nanos(&unknown), nanos(&b), "nothing written");
    }

    /// perf's requests on anything but a perf event are refused, and
    /// nothing is written (ENOTTY from the kernel; qemu-user answers ENOSYS
    /// for requests it does not know); on a closed descriptor too.
    #[test]
    #[cfg(feature = "std")]
    fn ioctl_in_place() {
        let mut fds = [0; 2];
        // SAFETY: a writable array of two descriptors.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        let mut id = 7u64;
        let emulated = std::env::var_os("FASTNOW_TEST_RUNNER").is_some();
        let refused = |r: isize| match emulated {
            true => r < 0,
            false => r == -(libc::ENOTTY as isize),
        };
        // PERF_EVENT_IOC_ID, PERF_EVENT_IOC_RESET.
        assert!(refused(ioctl(fds[0], 0x8008_2407, Some(&mut id))));
        assert!(refused(ioctl(fds[0], 0x2403, None)));
        assert_eq!(id, 7);
        // SAFETY: our own descriptors, closed once.
        unsafe {
            libc::close(fds[0]);
            libc::close(fds[1]);
        }
        let closed = ioctl(fds[0], 0x2403, None);
        assert!(
            closed == -(libc::EBADF as isize) || emulated && closed < 0,
            "{closed}"
        );
    }
}
