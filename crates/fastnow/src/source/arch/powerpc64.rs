//! powerpc64 (Linux, little- and big-endian): the Time Base, read with
//! `mftb`.
//!
//! The Power ISA (Book II, "Time Base") defines one 64-bit Time Base that
//! increments at a constant, implementation-dependent rate and that user
//! mode may read with `mftb`; the platform keeps it synchronised across
//! processors (Linux relies on that: its `timebase` clocksource has no
//! watchdog). So, as on Arm, the kernel's clocksource is not checked. The
//! rate is in `/proc/cpuinfo`'s `timebase` line, which Linux prints from
//! the frequency the firmware's device tree gave it (`ppc_tb_freq`).
//!
//! Ordering. `mftb` is not a storage access, so the storage barriers
//! (`lwsync`, the `sync` of a release store) say nothing about it, and it
//! may execute before earlier loads have been performed. `isync` is not
//! enough: it waits for earlier instructions to *complete*, and the ISA
//! says in so many words that it "may complete before storage accesses
//! associated with instructions preceding [it] have been performed" (Book
//! II, Instruction Synchronize). `sync` (`hwsync`, L = 0) is: it completes
//! only once every earlier storage access has been performed, and no later
//! instruction is initiated before it completes (Book II, Synchronize; Book
//! III lists it among the execution-synchronising instructions). So
//! `sync; mftb` reads the Time Base after every earlier load. A load whose
//! address depends on the value then puts the read ahead of every later
//! barrier, so of a release store (`lwsync; st`), as on aarch64
//! (`aarch64.rs`). Linux's vDSO reads the Time Base with no barrier at all.
//! Only run under emulation here (qemu-user executes in order).

use super::{FreqOrigin, Probe};
use crate::source::os;
use core::arch::asm;

/// The bare counter read.
#[inline(always)]
pub(crate) fn ticks() -> u64 {
    let t: u64;
    // SAFETY: mftb (mfspr from the Time Base) is allowed in problem state on
    // every 64-bit Power processor Linux runs on; it writes only `t`.
    unsafe { asm!("mftb {t}", t = out(reg) t, options(nomem, nostack, preserves_flags)) };
    t
}

/// The counter read after every earlier load was performed, and before any
/// later barrier or release store (see the module docs).
#[inline(always)]
pub(crate) fn ticks_ordered(_alt: bool) -> u64 {
    let t: u64;
    // SAFETY: as in `ticks()`; sync has no operands. The dependent load
    // reads the doubleword at the stack pointer (r1 + 0: the XOR of `t` with
    // itself), which is mapped, aligned and readable in every thread, into a
    // scratch register. Not `nomem`: the compiler keeps memory accesses on
    // their side of the block.
    unsafe {
        asm!(
            "sync",
            "mftb {t}",
            "xor {dep}, {t}, {t}",
            "ldx {dep}, 1, {dep}",
            t = out(reg) t,
            dep = out(reg) _,
            options(nostack, preserves_flags)
        )
    };
    t
}

/// The `timebase` line of `/proc/cpuinfo` (`timebase\t: 512000000`),
/// found by feeding the file's bytes in pieces of any size: the file can be
/// long (one block per hardware thread before it), and is read without
/// allocating.
#[derive(Clone, Copy, Debug)]
struct TimebaseLine {
    state: State,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// At the start of a line, `n` bytes of `timebase` matched.
    Key(u8),
    /// After the key: blanks, then the colon.
    Colon,
    /// After the colon: blanks, then the first digit.
    Value,
    /// Digits, then optional blanks before the line's end.
    Digits(u64),
    Trailing(u64),
    /// Not the line: skip to the next one.
    Skip,
    /// The line, with a frequency other than zero.
    Found(u64),
}

impl TimebaseLine {
    const KEY: &'static [u8] = b"timebase";

    const fn new() -> Self {
        TimebaseLine {
            state: State::Key(0),
        }
    }

    /// Feeds the next piece of the file; the frequency once the line has
    /// been seen whole.
    fn feed(&mut self, bytes: &[u8]) -> Option<u64> {
        for &b in bytes {
            let blank = b == b' ' || b == b'\t';
            self.state = match (self.state, b) {
                (State::Found(hz), _) => return Some(hz),
                (State::Digits(hz) | State::Trailing(hz), b'\n') if hz != 0 => State::Found(hz),
                (_, b'\n') => State::Key(0),
                (State::Key(n), _) if (n as usize) < Self::KEY.len() => {
                    if b == Self::KEY[n as usize] {
                        State::Key(n + 1)
                    } else {
                        State::Skip
                    }
                }
                (State::Key(_), b':') | (State::Colon, b':') => State::Value,
                (State::Key(_) | State::Colon, _) if blank => State::Colon,
                (State::Value, _) if blank => State::Value,
                (State::Value, b'0'..=b'9') => State::Digits((b - b'0') as u64),
                (State::Digits(hz), b'0'..=b'9') => hz
                    .checked_mul(10)
                    .and_then(|hz| hz.checked_add((b - b'0') as u64))
                    .map_or(State::Skip, State::Digits),
                (State::Digits(hz) | State::Trailing(hz), _) if blank || b == b'\r' => {
                    State::Trailing(hz)
                }
                _ => State::Skip,
            };
        }
        self.found()
    }

    /// The frequency, if the line was complete (the last line of a file
    /// may lack its line feed: call at the end).
    fn finish(&mut self) -> Option<u64> {
        match self.state {
            State::Digits(hz) | State::Trailing(hz) if hz != 0 => self.state = State::Found(hz),
            _ => {}
        }
        self.found()
    }

    fn found(&self) -> Option<u64> {
        match self.state {
            State::Found(hz) => Some(hz),
            _ => None,
        }
    }
}

/// The Time Base frequency Linux publishes, if this is Linux on Power (an
/// emulator shows the host's `/proc/cpuinfo`, which has no such line).
fn timebase_frequency() -> Option<u64> {
    let file = os::file::OpenFile::open(c"/proc/cpuinfo")?;
    let mut line = TimebaseLine::new();
    let mut buf = [0u8; 256];
    let mut offset = 0u64;
    let mut hz = None;
    // A bound, should the file never end: 1 MiB is thousands of threads.
    while offset < 1 << 20 {
        match file.read_at(&mut buf, offset) {
            Some(0) | None => {
                hz = line.finish();
                break;
            }
            Some(n) => {
                hz = line.feed(&buf[..n]);
                if hz.is_some() {
                    break;
                }
                offset += n as u64;
            }
        }
    }
    let ours = file.is_ours();
    file.close_if_ours();
    hz.filter(|_| ours)
}

pub(crate) fn probe() -> Probe {
    Probe {
        counter: Some("Time Base (mftb)"),
        invariant: true,
        freq: timebase_frequency().map(|hz| (hz, FreqOrigin::Kernel)),
        ordered_read: "sync;mftb;dependent load",
        ordered_read_alt: "sync;mftb;dependent load",
        use_alt: false,
        hypervisor: None,
        disabled: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A POWER9 PowerNV `/proc/cpuinfo` as Linux prints it: one block per
    /// hardware thread (one here), then the machine's lines.
    const POWER9: &[u8] = concat!(
        "processor\t: 0\n",
        "cpu\t\t: POWER9, altivec supported\n",
        "clock\t\t: 3800.000000MHz\n",
        "revision\t: 2.2 (pvr 004e 1202)\n",
        "\n",
        "timebase\t: 512000000\n",
        "platform\t: PowerNV\n",
        "model\t\t: 9006-22P\n",
        "machine\t\t: PowerNV 9006-22P\n",
        "firmware\t: OPAL\n",
        "MMU\t\t: Radix\n",
    )
    .as_bytes();

    fn parse(text: &[u8]) -> Option<u64> {
        let mut line = TimebaseLine::new();
        line.feed(text).or_else(|| line.finish())
    }

    #[test]
    fn timebase_line() {
        assert_eq!(parse(POWER9), Some(512_000_000));
        // The last line without its line feed, other blanks, CR LF.
        assert_eq!(parse(b"timebase : 18000000"), Some(18_000_000));
        assert_eq!(parse(b"timebase:512000000 \r\nx"), Some(512_000_000));
        // Not the line, or not a frequency.
        assert_eq!(parse(b"timebases\t: 1\n"), None);
        assert_eq!(parse(b" timebase\t: 1\n"), None);
        assert_eq!(parse(b"cpu : timebase : 1\n"), None);
        assert_eq!(parse(b"timebase\t: 512000000 Hz\n"), None);
        assert_eq!(parse(b"timebase\t: -5\n"), None);
        assert_eq!(parse(b"timebase\t: 0\n"), None);
        assert_eq!(parse(b"timebase\t: 0\ntimebase\t: 9\n"), Some(9));
        assert_eq!(parse(b"timebase\t:\n"), None);
        assert_eq!(parse(b"timebase\t: 99999999999999999999999\n"), None);
        // An x86 host's file (what an emulator shows).
        assert_eq!(
            parse(b"processor\t: 0\nvendor_id\t: GenuineIntel\ncpu MHz\t\t: 2100.000\n"),
            None
        );
        // A later valid line still counts after an invalid one.
        assert_eq!(parse(b"timebase\t: x\ntimebase\t: 7\n"), Some(7));
    }

    proptest! {
        /// However the file is cut into reads, the answer is the same.
        #[test]
        fn any_split_gives_the_same_answer(
            cuts in proptest::collection::vec(0..POWER9.len(), 0..6),
            junk in proptest::collection::vec(any::<u8>(), 0..64),
        ) {
            let texts = [
                POWER9.to_vec(),
                [junk.as_slice(), b"\n", POWER9].concat(),
                junk.clone(),
            ];
            for text in texts {
                let whole = parse(&text);
                let mut cuts: std::vec::Vec<usize> =
                    cuts.iter().map(|&c| c.min(text.len())).collect();
                cuts.sort_unstable();
                let mut line = TimebaseLine::new();
                let mut got = None;
                let mut start = 0;
                for end in cuts.into_iter().chain([text.len()]) {
                    got = got.or(line.feed(&text[start..end]));
                    start = end;
                }
                prop_assert_eq!(got.or_else(|| line.finish()), whole);
            }
        }
    }

    #[test]
    fn reads_advance_and_order() {
        let a = ticks();
        let b = ticks_ordered(false);
        let c = ticks();
        assert!(a <= b && b <= c, "{a} {b} {c}");
        let mut n = 0;
        while ticks_ordered(false) == c {
            n += 1;
            assert!(n < 1_000_000, "the Time Base does not advance");
        }
        // What this process reads from /proc/cpuinfo, if anything, is a
        // frequency.
        assert_ne!(timebase_frequency(), Some(0));
    }
}
