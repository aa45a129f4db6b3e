//! How the one state is published: a latch that readers never wait on.
//!
//! **The latch** keeps two copies of the state and a sequence number, as the
//! Linux kernel does for its NMI-safe clock (`ktime_get_mono_fast_ns`). The
//! writer moves readers to the second copy while it rewrites the first, then
//! back. A reader picks the copy the sequence points at, reads it, and
//! retries only if the sequence moved meanwhile — it never waits for the
//! writer to finish. That matters because a reader may be a signal handler
//! that interrupted the writer on its own thread: a plain sequence lock
//! (readers spin while the sequence is odd) would spin there forever.
//!
//! **The writers' lock** (`os::ProcessLock`) serialises writers. Readers
//! only ever *try* it, so none can block on it. Both survive a writer that
//! vanished half-way (the child of a fork that copied a write in progress):
//! the next write repairs the copies first, and the new owner is told the
//! lock was taken over so it can distrust the writer's private bookkeeping.

use core::sync::atomic::{fence, AtomicU64, Ordering};

/// One copy of the words. Aligned to two cache lines, so that a copy of up
/// to 16 words spans 128 bytes and one of up to 32 spans 256: the distance
/// between the two copies is then a power of two, and the sequence counts
/// in steps of it (see `Latch::STEP`), so that the bit that picks a reader's
/// copy is also that copy's distance from the first: one `AND` finds it (a
/// stride of three lines would take a multiply on the fast path, and a
/// sequence counting in ones a shift). The fast path's words are the copy's
/// first line (`state::word`).
#[repr(C, align(128))]
struct Copy<const N: usize>([AtomicU64; N]);

impl<const N: usize> Copy<N> {
    const fn new() -> Copy<N> {
        Copy([const { AtomicU64::new(0) }; N])
    }

    fn set(&self, words: &[u64; N]) {
        for (slot, &w) in self.0.iter().zip(words) {
            slot.store(w, Ordering::Relaxed);
        }
    }

    fn get(&self) -> [u64; N] {
        core::array::from_fn(|i| self.0[i].load(Ordering::Relaxed))
    }
}

/// `N` words published as a whole; see the module docs.
pub(super) struct Latch<const N: usize> {
    seq: AtomicU64,
    copies: [Copy<N>; 2],
}

impl<const N: usize> Latch<N> {
    /// What one step of the sequence adds: the size of a copy, a power of
    /// two. The sequence is `STEP` times "twice the number of writes, plus
    /// one during one", so its `STEP` bit says which copy readers are on
    /// and is, as a number, that copy's offset from the first.
    const STEP: u64 = {
        let size = core::mem::size_of::<Copy<N>>();
        // `copy_at` and `write`'s repair agree only then (checked where
        // the latch is built: a compile error, never a wrong copy).
        assert!(
            size.is_power_of_two(),
            "a copy's size must be a power of two"
        );
        size as u64
    };

    /// Which copy readers are on at sequence `seq`.
    #[inline(always)]
    fn copy_at(&self, seq: u64) -> &Copy<N> {
        // (seq / STEP) & 1, times STEP: LLVM folds the shift, the mask and
        // the index's multiply into `seq & STEP`.
        &self.copies[((seq / Self::STEP) & 1) as usize]
    }

    pub(super) const fn new() -> Latch<N> {
        let _ = Self::STEP;
        Latch {
            seq: AtomicU64::new(0),
            copies: [Copy::new(), Copy::new()],
        }
    }

    /// Runs `f` on a consistent copy: everything `f` loads (Relaxed) belongs
    /// to one write. `f` may run more than once, so it must only load. It may
    /// also read a clock: when the result comes back, no write was published
    /// between the moment `f` started and the moment it returned, which the
    /// OS-clock readers rely on (see `read`).
    #[inline(always)]
    pub(super) fn read<R>(&self, f: impl Fn(&[AtomicU64; N]) -> R) -> R {
        loop {
            let seq = self.seq.load(Ordering::Acquire);
            let r = f(&self.copy_at(seq).0);
            // Keeps the loads in `f` from moving below the re-check.
            fence(Ordering::Acquire);
            if self.seq.load(Ordering::Relaxed) == seq {
                return r;
            }
            core::hint::spin_loop();
        }
    }

    /// All words of one write (zeros before the first).
    pub(super) fn snapshot(&self) -> [u64; N] {
        self.read(|w| core::array::from_fn(|i| w[i].load(Ordering::Relaxed)))
    }

    /// A copy of the latch word by word, as a child forked at this moment
    /// has it (in the middle of a write, if one is under way).
    #[cfg(test)]
    pub(super) fn fork_copy(&self) -> Latch<N> {
        let copy = Latch::new();
        copy.seq
            .store(self.seq.load(Ordering::Relaxed), Ordering::Relaxed);
        for (to, from) in copy.copies.iter().zip(&self.copies) {
            to.set(&from.get());
        }
        copy
    }

    /// The sequence number: twice the number of writes, plus one during one.
    #[cfg(any(test, feature = "__test-hooks"))]
    pub(super) fn sequence(&self) -> u64 {
        self.seq.load(Ordering::Acquire) / Self::STEP
    }

    /// Whether anything was ever published.
    #[inline(always)]
    pub(super) fn is_published(&self) -> bool {
        self.seq.load(Ordering::Acquire) != 0
    }

    /// Publishes `words`. The caller holds the writers' lock.
    pub(super) fn write(&self, words: &[u64; N]) {
        let mut seq = self.seq.load(Ordering::Relaxed);
        if seq & Self::STEP != 0 {
            // A writer vanished between its two steps (fork): readers are on
            // copies[1], which was complete before the sequence went odd;
            // copies[0] may be torn. Restore it and move readers back.
            self.copies[0].set(&self.copies[1].get());
            seq += Self::STEP;
            self.seq.store(seq, Ordering::Release);
        }
        // Readers are on copies[0]. copies[1] holds an older state (or a
        // vanished writer's torn copy): bring it up to date before readers
        // move there. The fence orders this after the last sequence change,
        // for readers still on copies[1] from an older odd sequence.
        fence(Ordering::Release);
        self.copies[1].set(&self.copies[0].get());
        self.seq.store(seq + Self::STEP, Ordering::Release);
        // A reader that sees any store below also sees the odd sequence.
        fence(Ordering::Release);
        self.copies[0].set(words);
        self.seq.store(seq + 2 * Self::STEP, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::prelude::v1::*;

    /// The copies of the state's words lie a power of two apart (see
    /// `Copy`), and each starts on a cache line.
    #[test]
    fn copies_lie_a_power_of_two_apart() {
        let stride = core::mem::size_of::<super::Copy<{ crate::timekeeper::state::word::COUNT }>>();
        assert!(stride.is_power_of_two(), "{stride}");
        assert_eq!(core::mem::align_of::<super::Copy<1>>() % 64, 0);
    }

    /// The sequence's copy bit is the copy's offset from the first (what
    /// lets the fast path find its copy with one `AND`), and the sequence
    /// still counts writes: two per write, odd during one.
    #[test]
    fn the_sequence_steps_by_the_copy_stride() {
        let latch = Latch::<{ crate::timekeeper::state::word::COUNT }>::new();
        let base = latch.copies.as_ptr() as usize;
        for k in 0..4u64 {
            latch.write(&[k; crate::timekeeper::state::word::COUNT]);
            assert_eq!(latch.sequence(), 2 * (k + 1));
            for seq in [
                latch.seq.load(Ordering::Relaxed),
                latch.seq.load(Ordering::Relaxed)
                    + Latch::<{ crate::timekeeper::state::word::COUNT }>::STEP,
            ] {
                let offset = latch.copy_at(seq) as *const _ as usize - base;
                assert_eq!(
                    offset as u64,
                    seq & Latch::<{ crate::timekeeper::state::word::COUNT }>::STEP,
                    "sequence {seq}"
                );
            }
            assert_eq!(latch.snapshot()[0], k);
        }
    }

    /// Readers racing a writer that publishes (k, !k, k) never see a mixed
    /// copy and never see k go backwards. For at least 300 ms, and until
    /// the writer has written 1,000 times and each reader has read: a slow
    /// machine takes longer rather than racing less.
    #[test]
    #[cfg(not(target_os = "wasi"))] // no threads there
    fn copies_are_never_torn_nor_stale() {
        use core::sync::atomic::AtomicBool;
        use std::sync::Arc;
        let latch = Arc::new(Latch::<3>::new());
        latch.write(&[0, !0, 0]);
        let stop = Arc::new(AtomicBool::new(false));
        let reads: Arc<[AtomicU64; 2]> = Arc::new(Default::default());
        let readers: Vec<_> = (0..2)
            .map(|i| {
                let (latch, stop, reads) = (latch.clone(), stop.clone(), reads.clone());
                std::thread::spawn(move || {
                    let mut last = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        let [k, not_k, k_again] = latch.snapshot();
                        assert!(not_k == !k && k_again == k, "torn: {k} {not_k} {k_again}");
                        let k2 = latch.read(|w| w[0].load(Ordering::Relaxed));
                        assert!(k >= last && k2 >= k, "went back: {last} {k} {k2}");
                        last = k2;
                        reads[i].fetch_add(1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        let start = std::time::Instant::now();
        let mut k = 0;
        while start.elapsed() < std::time::Duration::from_millis(300)
            || k < 1000
            || reads.iter().any(|r| r.load(Ordering::Relaxed) == 0)
        {
            k += 1;
            latch.write(&[k, !k, k]);
            // A reader thread that never runs (not slowness: a hang).
            assert!(
                start.elapsed() < std::time::Duration::from_secs(120),
                "a reader never read"
            );
        }
        stop.store(true, Ordering::Relaxed);
        for r in readers {
            r.join().unwrap();
        }
    }

    /// A write interrupted between its steps (as a fork can copy it) leaves
    /// readers on an intact copy, and the next write repairs the other.
    #[test]
    fn a_vanished_writer_is_repaired() {
        let latch = Latch::<2>::new();
        latch.write(&[1, 1]);
        latch.write(&[2, 2]);
        // Simulate a writer that moved readers to copies[1] and tore copies[0].
        let seq = latch.seq.load(Ordering::Relaxed);
        latch.copies[1].set(&latch.copies[0].get());
        latch.seq.store(seq + Latch::<2>::STEP, Ordering::Relaxed);
        latch.copies[0].set(&[3, 99]);
        assert_eq!(latch.snapshot(), [2, 2], "readers stay on the intact copy");
        latch.write(&[4, 4]);
        assert_eq!(latch.snapshot(), [4, 4]);
        assert_eq!(latch.sequence() & 1, 0);
        // And a writer that vanished while refreshing copies[1] (sequence
        // even) left a torn copy that readers never see.
        latch.copies[1].set(&[5, 77]);
        assert_eq!(latch.snapshot(), [4, 4]);
        latch.write(&[6, 6]);
        assert_eq!(latch.snapshot(), [6, 6]);
    }
}
