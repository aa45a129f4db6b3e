//! The first page of a perf event's mapping (`struct perf_event_mmap_page`,
//! `include/uapi/linux/perf_event.h`): its seqlock-consistent read, and the
//! arithmetic that turns it and a counter reading into the event's time now.
//!
//! The kernel rewrites the page whenever the event is scheduled in or out
//! (for a per-thread event: whenever the thread is switched), bumping
//! `lock` before and after. `time_running` is then the time the event has
//! counted up to that update; when the page has `cap_user_time`, the time
//! since the update is the counter read now through `time_mult`,
//! `time_shift` and `time_offset` (the kernel's own cycles-to-nanoseconds
//! conversion for its scheduler clock, offset so that it gives zero at the
//! update). Without `cap_user_time` the page cannot say how long ago the
//! update was, and `time_running` alone may be a whole time slice old.

use core::sync::atomic::{fence, AtomicU32, Ordering};

/// Byte offsets of the fields read here (the layout is part of the
/// kernel's ABI; `size` in the page gives how much of it a kernel fills).
pub(crate) mod offset {
    pub(crate) const LOCK: usize = 8;
    pub(crate) const TIME_ENABLED: usize = 24;
    pub(crate) const TIME_RUNNING: usize = 32;
    pub(crate) const CAPABILITIES: usize = 40;
    pub(crate) const TIME_SHIFT: usize = 50;
    pub(crate) const TIME_MULT: usize = 52;
    pub(crate) const TIME_OFFSET: usize = 56;
    pub(crate) const TIME_CYCLES: usize = 80;
    pub(crate) const TIME_MASK: usize = 88;
    /// Bytes up to and including `time_mask`.
    pub(crate) const END: usize = 96;
}

/// `cap_user_time`: `time_shift`, `time_mult` and `time_offset` are valid.
pub(crate) const CAP_USER_TIME: u64 = 1 << 3;
/// `cap_user_time_short`: the counter is narrower than 64 bits, and a
/// reading is widened with `time_cycles` and `time_mask`.
pub(crate) const CAP_USER_TIME_SHORT: u64 = 1 << 5;

/// The fields of one consistent read of the page.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Snapshot {
    /// The seqlock's count: the kernel adds 2 at each update of the page.
    pub(crate) lock: u32,
    pub(crate) time_enabled: u64,
    pub(crate) time_running: u64,
    pub(crate) capabilities: u64,
    pub(crate) time_shift: u16,
    pub(crate) time_mult: u32,
    pub(crate) time_offset: u64,
    pub(crate) time_cycles: u64,
    pub(crate) time_mask: u64,
}

impl Snapshot {
    /// Whether the page offers the time extension the fast route needs.
    pub(crate) fn has_user_time(&self) -> bool {
        self.capabilities & CAP_USER_TIME != 0
    }

    /// The fields from a copy of the page's bytes (native byte order, as
    /// the kernel writes them); `None` if `bytes` is shorter than the
    /// fields read here.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn from_bytes(bytes: &[u8]) -> Option<Snapshot> {
        if bytes.len() < offset::END {
            return None;
        }
        let u64_at = |at: usize| u64::from_ne_bytes(bytes[at..at + 8].try_into().unwrap());
        Some(Snapshot {
            lock: u32::from_ne_bytes(bytes[offset::LOCK..offset::LOCK + 4].try_into().unwrap()),
            time_enabled: u64_at(offset::TIME_ENABLED),
            time_running: u64_at(offset::TIME_RUNNING),
            capabilities: u64_at(offset::CAPABILITIES),
            time_shift: u16::from_ne_bytes(
                bytes[offset::TIME_SHIFT..offset::TIME_SHIFT + 2]
                    .try_into()
                    .unwrap(),
            ),
            time_mult: u32::from_ne_bytes(
                bytes[offset::TIME_MULT..offset::TIME_MULT + 4]
                    .try_into()
                    .unwrap(),
            ),
            time_offset: u64_at(offset::TIME_OFFSET),
            time_cycles: u64_at(offset::TIME_CYCLES),
            time_mask: u64_at(offset::TIME_MASK),
        })
    }
}

/// The event's running time at counter reading `cyc`, taken inside the
/// same seqlock window as `page`: `time_running` plus the time since the
/// page's last update, converted as the kernel's header prescribes
/// (`time_offset + quot * time_mult + ((rem * time_mult) >> time_shift)`,
/// which is `(cyc * time_mult) >> time_shift` computed without a 128-bit
/// product).
///
/// `None` — the caller falls back to the OS clock — when the page does not
/// offer `cap_user_time`, when its conversion is unusable (`time_mult` 0,
/// `time_shift` 64 or more), or when `time_enabled` and `time_running`
/// differ. That last check is what makes `time_running` the right base:
/// the event belongs to the reading thread, so it is on the CPU whenever
/// the thread reads it, and a lone software event is never multiplexed off;
/// equal totals confirm that it has counted all the time it was enabled.
/// (The header advances `time_running` only when `index` is set, which is
/// its test for a hardware event being on a counter; a software event's
/// `index` is always 0.)
///
/// The arithmetic is modulo 2^64, as the kernel's: exact for any time
/// since the update under 2^63 ns. A counter reading a little before the
/// update (the difference wraps "negative") counts as no time since it,
/// never as 2^64 ns.
#[inline]
pub(crate) fn running_nanos(page: &Snapshot, cyc: u64) -> Option<u64> {
    if !page.has_user_time()
        || page.time_mult == 0
        || page.time_shift >= 64
        || page.time_enabled != page.time_running
    {
        return None;
    }
    let cyc = if page.capabilities & CAP_USER_TIME_SHORT != 0 {
        page.time_cycles
            .wrapping_add(cyc.wrapping_sub(page.time_cycles) & page.time_mask)
    } else {
        cyc
    };
    let shift = u32::from(page.time_shift);
    let mult = u64::from(page.time_mult);
    let quot = cyc >> shift;
    let rem = cyc & ((1u64 << shift) - 1);
    let delta = page
        .time_offset
        .wrapping_add(quot.wrapping_mul(mult))
        .wrapping_add(rem.wrapping_mul(mult) >> shift);
    // (rem < 2^shift, so rem * mult < 2^(shift + 32) does not overflow for
    // a shift up to 32, the kernel's largest; above that the wrapping
    // multiplication keeps the result defined for a page not the kernel's.)
    let delta = if (delta as i64) < 0 { 0 } else { delta };
    Some(page.time_running.saturating_add(delta))
}

/// The event's running time from a page that the kernel brought up to date
/// on request (`PERF_EVENT_IOC_RESET` writes the page as of the call), read
/// after the request: `time_running`, if the page changed since `before`
/// (its `lock` before the request) — proof that the request reached this
/// page's event — and it has counted all the time it was enabled (as in
/// [`running_nanos`]). `None` otherwise: the descriptor the request went
/// through is not this page's event's.
///
/// A page updated in between by a switch of the thread, not by the
/// request, passes too; its `time_running` is then the event's own, a
/// system call's time short of now.
#[inline]
pub(crate) fn refreshed_nanos(before: u32, page: &Snapshot) -> Option<u64> {
    (page.lock != before && page.time_enabled == page.time_running).then_some(page.time_running)
}

/// Reads the page's fields and `ticks()` inside one seqlock window: the
/// page's `lock` is the same before and after, so no update landed in
/// between. `None` if that fails `tries` times in a row (each failure means
/// the thread was switched out mid-read, so this does not happen in
/// practice; the bound keeps a page that is not the kernel's from hanging
/// a reading).
///
/// # Safety
/// `page` points to at least [`offset::END`] readable bytes, 8-byte
/// aligned, that stay mapped during the call (another party — the kernel —
/// may write them at any time).
#[inline]
pub(crate) unsafe fn read(
    page: *const u8,
    tries: u32,
    ticks: impl Fn() -> u64,
) -> Option<(Snapshot, u64)> {
    // SAFETY (for every access below): the caller guarantees the bytes are
    // mapped, readable and aligned for the whole call; the fields are
    // naturally aligned within the page. Volatile reads, because the kernel
    // changes them behind the compiler's back; the lock is read atomically
    // so that the fences order the field reads inside the window.
    let lock = unsafe { &*(page.add(offset::LOCK) as *const AtomicU32) };
    let u64_at = |at: usize| unsafe { core::ptr::read_volatile(page.add(at) as *const u64) };
    for _ in 0..tries {
        let seq = lock.load(Ordering::Acquire);
        let snapshot = Snapshot {
            lock: seq,
            time_enabled: u64_at(offset::TIME_ENABLED),
            time_running: u64_at(offset::TIME_RUNNING),
            capabilities: u64_at(offset::CAPABILITIES),
            time_shift: unsafe {
                core::ptr::read_volatile(page.add(offset::TIME_SHIFT) as *const u16)
            },
            time_mult: unsafe {
                core::ptr::read_volatile(page.add(offset::TIME_MULT) as *const u32)
            },
            time_offset: u64_at(offset::TIME_OFFSET),
            time_cycles: u64_at(offset::TIME_CYCLES),
            time_mask: u64_at(offset::TIME_MASK),
        };
        let cyc = ticks();
        fence(Ordering::Acquire);
        if lock.load(Ordering::Relaxed) == seq {
            return Some((snapshot, cyc));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The conversion done exactly, in 128 bits.
    fn exact(page: &Snapshot, cyc: u64) -> u64 {
        let product = (u128::from(cyc) * u128::from(page.time_mult)) >> page.time_shift;
        let delta = page.time_offset.wrapping_add(product as u64);
        let delta = if (delta as i64) < 0 { 0 } else { delta };
        page.time_running.saturating_add(delta)
    }

    fn usable(running: u64, shift: u16, mult: u32, offset: u64) -> Snapshot {
        Snapshot {
            time_enabled: running,
            time_running: running,
            capabilities: CAP_USER_TIME | 2,
            time_shift: shift,
            time_mult: mult,
            time_offset: offset,
            ..Snapshot::default()
        }
    }

    proptest! {
        /// The split multiplication equals the exact 128-bit product, for
        /// every shift the kernel uses (cyc2ns shifts are at most 32).
        #[test]
        fn split_product_is_exact(
            running in 0u64..1 << 62,
            shift in 0u16..=32,
            mult in 1u32..,
            offset: u64,
            cyc: u64,
        ) {
            let page = usable(running, shift, mult, offset);
            prop_assert_eq!(running_nanos(&page, cyc), Some(exact(&page, cyc)));
        }

        /// Within one page (between two updates), the time never goes back
        /// as the counter advances, and never below `time_running`; the
        /// wrapping 64-bit conversion gives the exact time since the update
        /// (here for counters of up to 16 ns a tick, 2^40 ticks on).
        #[test]
        fn nondecreasing_in_the_counter(
            running in 0u64..1 << 62,
            shift in 0u16..=32,
            mult_bits: u32,
            at: u64,
            a in 0u64..1 << 40,
            b in 0u64..1 << 40,
        ) {
            let mult = 1 + (u64::from(mult_bits) % (16u64 << shift).min(u64::from(u32::MAX))) as u32;
            let at = at >> 1; // `at + a` stays in range
            // The offset the kernel writes: minus the conversion of the
            // counter at the update, so that the delta starts at zero there.
            let zero = ((u128::from(at) * u128::from(mult)) >> shift) as u64;
            let page = usable(running, shift, mult, zero.wrapping_neg());
            let (lo, hi) = (at + a.min(b), at + a.max(b));
            let t_lo = running_nanos(&page, lo).unwrap();
            let t_hi = running_nanos(&page, hi).unwrap();
            prop_assert!(running <= t_lo && t_lo <= t_hi, "{} {} {}", running, t_lo, t_hi);
            prop_assert_eq!(running_nanos(&page, at), Some(running));
            let since = |cyc: u64| {
                ((u128::from(cyc - at) * u128::from(mult)) >> shift) as u64
            };
            // Floor of a difference vs difference of floors: within a nanosecond.
            prop_assert!((t_hi - running).abs_diff(since(hi)) <= 1);
        }

        /// A counter narrower than 64 bits (`cap_user_time_short`) that
        /// wrapped since the update is widened, not read as a step back.
        #[test]
        fn short_counter_wraps_forward(
            width in 32u32..64,
            before in 1u64..1 << 20,
            after in 0u64..1 << 20,
        ) {
            let mask = (1u64 << width) - 1;
            let at = mask - before + 1; // `before` ticks short of the wrap
            let page = Snapshot {
                capabilities: CAP_USER_TIME | CAP_USER_TIME_SHORT,
                time_shift: 0,
                time_mult: 1,
                time_offset: at.wrapping_neg(),
                time_cycles: at,
                time_mask: mask,
                ..Snapshot::default()
            };
            // `after` ticks past the wrap: the raw value is small.
            prop_assert_eq!(running_nanos(&page, after), Some(before + after));
        }

        /// Every page that lacks `cap_user_time`, or whose conversion is
        /// unusable, or whose totals differ, is refused.
        #[test]
        fn refuses_unusable_pages(page_bits: [u64; 6], cyc: u64) {
            let [enabled, running, caps, shift, mult, offset] = page_bits;
            let page = Snapshot {
                time_enabled: enabled,
                time_running: running,
                capabilities: caps,
                time_shift: shift as u16,
                time_mult: mult as u32,
                time_offset: offset,
                ..Snapshot::default()
            };
            let ok = caps & CAP_USER_TIME != 0 && mult as u32 != 0 && (shift as u16) < 64
                && enabled == running;
            prop_assert_eq!(running_nanos(&page, cyc).is_some(), ok);
        }
    }

    proptest! {
        /// The refreshed page's time is taken only when its lock moved and
        /// its totals agree, and is then exactly `time_running`.
        #[test]
        fn refreshed_only_when_the_page_moved(
            before: u32,
            lock: u32,
            enabled: u64,
            running: u64,
        ) {
            let page = Snapshot {
                lock,
                time_enabled: enabled,
                time_running: running,
                ..Snapshot::default()
            };
            let ok = lock != before && enabled == running;
            prop_assert_eq!(refreshed_nanos(before, &page), ok.then_some(running));
        }
    }

    /// A counter reading a little before the page's update (the offset
    /// makes the delta negative) counts as no time since it.
    #[test]
    fn counter_before_the_update_is_no_time() {
        let page = usable(1_000, 0, 1, 500u64.wrapping_neg());
        assert_eq!(running_nanos(&page, 499), Some(1_000));
        assert_eq!(running_nanos(&page, 500), Some(1_000));
        assert_eq!(running_nanos(&page, 501), Some(1_001));
    }

    /// A page in memory as the kernel lays it out, read through the
    /// seqlock; a lock that changes during every read gives `None`, not a
    /// hang.
    #[test]
    fn seqlock_read_of_a_synthetic_page() {
        let mut page = [0u64; 16];
        let bytes = page.as_mut_ptr() as *mut u8;
        // SAFETY: every write is inside the 128-byte array, at an aligned offset.
        unsafe {
            *(bytes.add(offset::LOCK) as *mut u32) = 6;
            *(bytes.add(offset::TIME_ENABLED) as *mut u64) = 77;
            *(bytes.add(offset::TIME_RUNNING) as *mut u64) = 77;
            *(bytes.add(offset::CAPABILITIES) as *mut u64) = CAP_USER_TIME;
            *(bytes.add(offset::TIME_SHIFT) as *mut u16) = 10;
            *(bytes.add(offset::TIME_MULT) as *mut u32) = 1 << 10;
            *(bytes.add(offset::TIME_OFFSET) as *mut u64) = 100u64.wrapping_neg();
        }
        // SAFETY: the array is 128 readable bytes, 8-byte aligned, alive
        // for the call.
        let (snap, cyc) = unsafe { read(bytes, 4, || 150) }.unwrap();
        assert_eq!(cyc, 150);
        assert_eq!(running_nanos(&snap, cyc), Some(77 + 50));
        // The same bytes through the byte parser.
        // SAFETY: the array's 128 bytes, read only.
        let copy = unsafe { core::slice::from_raw_parts(bytes as *const u8, 128) };
        assert_eq!(Snapshot::from_bytes(copy), Some(snap));

        // The "counter read" bumps the lock, as an update landing inside
        // every window would: the read gives up after `tries`.
        let lock = bytes.wrapping_add(offset::LOCK) as *mut u32;
        let calls = core::cell::Cell::new(0);
        let bump = || {
            calls.set(calls.get() + 1);
            // SAFETY: the lock word is inside the array.
            unsafe { *lock += 2 };
            0
        };
        // SAFETY: as above.
        assert_eq!(unsafe { read(bytes, 5, bump) }, None);
        assert_eq!(calls.get(), 5);
    }

    /// A page recorded on a KVM guest (Linux 6.18, x86_64) for a task-clock event of the recording thread, right
    /// after mapping it: `lock` 2, `time_enabled` = `time_running`
    /// = 76_322_909 ns (the event's CPU time since it was opened),
    /// `capabilities` = 2 (only `cap_bit0_is_deprecated`: no
    /// `cap_user_time`), `time_mult` = `time_shift` = `time_offset` = 0,
    /// `size` 96. The fast route must refuse it.
    #[test]
    #[cfg(target_endian = "little")]
    fn recorded_kvm_page_is_refused() {
        let bytes = recorded_page();
        let page = Snapshot::from_bytes(&bytes).unwrap();
        assert_eq!(page.time_enabled, 76_322_909);
        assert_eq!(page.time_running, 76_322_909);
        assert_eq!(page.capabilities, 2);
        assert!(!page.has_user_time());
        assert_eq!(
            (page.time_mult, page.time_shift, page.time_offset),
            (0, 0, 0)
        );
        // Any counter value (the counter itself may not be readable here:
        // 32-bit Arm under qemu faults on it).
        assert_eq!(running_nanos(&page, u64::MAX / 3), None);
        assert_eq!(running_nanos(&page, 0), None);

        // The same page, had the kernel offered the time extension (as on
        // bare metal: TSC at 2^shift / mult GHz, here 1 tick = 1 ns, the
        // update at tick 1_000): its total plus the ticks since.
        let mut offered = page;
        offered.capabilities |= CAP_USER_TIME;
        offered.time_shift = 24;
        offered.time_mult = 1 << 24;
        offered.time_offset = 1_000u64.wrapping_neg();
        assert_eq!(running_nanos(&offered, 1_000), Some(76_322_909));
        assert_eq!(running_nanos(&offered, 2_500), Some(76_324_409));
    }

    /// The fixture `tests/data/perf_page_kvm.hex`: the page's first 128
    /// bytes as hexadecimal (the rest of the page is reserved space and,
    /// from byte 1024, the ring buffer's header, unused here).
    pub(crate) fn recorded_page() -> [u8; 128] {
        let text = include_str!("../../../tests/data/perf_page_kvm.hex");
        let mut out = [0u8; 128];
        let mut n = 0;
        for word in text
            .lines()
            .filter(|l| !l.starts_with('#'))
            .flat_map(str::split_whitespace)
        {
            out[n] = u8::from_str_radix(word, 16).unwrap();
            n += 1;
        }
        assert_eq!(n, 128);
        out
    }
}
