//! The published state: its word layout in the latch, and the conversion
//! every reader does with it.
//!
//! Each state is a *piece*, valid on a range of counter values
//! `[takeover, end)`: a reader converts a counter value `t` with the piece's
//! line when `takeover <= t < end` (the `prev` line below `takeover`), and
//! a state update is due from `trigger` (a little before `end`) on. A new
//! piece takes over exactly at the old one's `end`, continuing the old
//! line's value there, so readers holding either state agree on every value
//! both may convert; a reading at or past `end` needs a newer state, or
//! gets [`State::lower_bound`] when another thread is writing one (the rules:
//! spec/SEMANTICS.md, "The timeline: pieces and take-over points").

use crate::timekeeper::line::Line;

/// Word positions in the latch. The fast paths' words come first, on one
/// cache line.
pub(super) mod word {
    /// Counter mode: the counter value where this piece starts. OS mode:
    /// the `CLOCK_MONOTONIC` value where it starts.
    pub const TAKEOVER: usize = 0;
    /// Counter mode: `trigger - takeover`, the range of the read fast path.
    /// 0 in OS mode, which keeps every fast path away from the counter.
    pub const SPAN: usize = 1;
    pub const OFFSET: usize = 2;
    pub const SLOPE: usize = 3;
    pub const WALL_OFFSET: usize = 4;
    pub const WALL_SLOPE: usize = 5;
    /// Counter value at which a wall reader resyncs; 0: read `CLOCK_REALTIME`.
    pub const WALL_DEADLINE: usize = 6;
    pub const MODE: usize = 7;
    pub const TRIGGER: usize = 8;
    pub const END: usize = 9;
    pub const PREV_OFFSET: usize = 10;
    pub const PREV_SLOPE: usize = 11;
    /// OS mode: readings are `CLOCK_MONOTONIC + os_offset` (mod 2^64).
    pub const OS_OFFSET: usize = 12;
    /// The boot timeline's offset (`boot_offset` below).
    pub const BOOT_OFFSET: usize = 13;
    pub const COUNT: usize = 14;
}

/// Not published yet (all words zero).
pub(crate) const MODE_NONE: u64 = 0;
/// Readings come from `CLOCK_MONOTONIC`.
pub(crate) const MODE_OS: u64 = 1;
/// Readings come from the counter.
pub(crate) const MODE_COUNTER: u64 = 2;

/// What readers see; see the module docs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct State {
    pub mode: u64,
    pub takeover: u64,
    pub trigger: u64,
    pub end: u64,
    pub line: Line,
    pub prev: Line,
    pub os_offset: u64,
    pub wall: Line,
    pub wall_deadline: u64,
    /// What [`BootInstant`](crate::BootInstant) adds (mod 2^64), which
    /// counts the time the machine spent suspended: on the OS clock for good
    /// (`MODE_OS`, `trigger == u64::MAX`) to `CLOCK_BOOTTIME`, which such
    /// readers read instead of `CLOCK_MONOTONIC`; otherwise to this state's
    /// reading — there `CLOCK_BOOTTIME` less the precise reading, measured at
    /// each update and never lowered (`writer`'s `boot_offset`).
    pub boot_offset: u64,
}

impl State {
    pub(crate) fn to_words(self) -> [u64; word::COUNT] {
        let mut w = [0; word::COUNT];
        w[word::MODE] = self.mode;
        w[word::TAKEOVER] = self.takeover;
        w[word::SPAN] = if self.mode == MODE_COUNTER {
            self.trigger.saturating_sub(self.takeover)
        } else {
            0
        };
        w[word::OFFSET] = self.line.offset;
        w[word::SLOPE] = self.line.slope;
        w[word::WALL_OFFSET] = self.wall.offset;
        w[word::WALL_SLOPE] = self.wall.slope;
        w[word::WALL_DEADLINE] = self.wall_deadline;
        w[word::TRIGGER] = self.trigger;
        w[word::END] = self.end;
        w[word::PREV_OFFSET] = self.prev.offset;
        w[word::PREV_SLOPE] = self.prev.slope;
        w[word::OS_OFFSET] = self.os_offset;
        w[word::BOOT_OFFSET] = self.boot_offset;
        w
    }

    pub(crate) fn from_words(w: &[u64; word::COUNT]) -> State {
        State {
            mode: w[word::MODE],
            takeover: w[word::TAKEOVER],
            trigger: w[word::TRIGGER],
            end: w[word::END],
            line: Line {
                offset: w[word::OFFSET],
                slope: w[word::SLOPE],
            },
            prev: Line {
                offset: w[word::PREV_OFFSET],
                slope: w[word::PREV_SLOPE],
            },
            os_offset: w[word::OS_OFFSET],
            wall: Line {
                offset: w[word::WALL_OFFSET],
                slope: w[word::WALL_SLOPE],
            },
            wall_deadline: w[word::WALL_DEADLINE],
            boot_offset: w[word::BOOT_OFFSET],
        }
    }

    /// Whether readers are on the OS clock for good: no update comes any
    /// more, so boot readers read `CLOCK_BOOTTIME` themselves.
    #[inline]
    pub(crate) fn os_for_good(&self) -> bool {
        self.mode == MODE_OS && self.trigger == u64::MAX
    }

    /// Converts a reading of this state's source (counter ticks, or
    /// `CLOCK_MONOTONIC` nanoseconds in OS mode).
    #[inline]
    pub(crate) fn convert(&self, reading: u64) -> Converted {
        if reading >= self.end {
            return Converted::PastEnd;
        }
        let due = reading >= self.trigger;
        let nanos = if self.mode == MODE_OS {
            reading.wrapping_add(self.os_offset)
        } else if reading < self.takeover {
            self.prev.at(reading)
        } else {
            self.line.at(reading)
        };
        Converted::Nanos { nanos, due }
    }

    /// A lower bound of what any newer state gives for `reading`, which is
    /// at or past `end` (see the module docs): the value at `end` plus 7/8
    /// of the nanoseconds since, rounded down. A next piece's slope is at
    /// least 7/8 of this one's (`calibrate::floor` rounds it up), so its
    /// value `k` ticks past `end` is at least `floor(7/8 × k × slope)`,
    /// which is at least `floor(7/8 × floor(k × slope))`: the bound, however
    /// few ticks `k` is. (Rounding the 7/8 up instead made the bound the
    /// old rate itself below 8 ns, above a slower next piece.)
    pub(crate) fn lower_bound(&self, reading: u64) -> u64 {
        let (at_end, since) = if self.mode == MODE_OS {
            (self.end.wrapping_add(self.os_offset), reading - self.end)
        } else {
            (
                self.line.at(self.end),
                self.line.nanos_for(reading - self.end),
            )
        };
        at_end.wrapping_add(seven_eighths(since))
    }
}

/// `floor(7 × n / 8)`, without overflow.
pub(crate) const fn seven_eighths(n: u64) -> u64 {
    n - n / 8 - (n % 8 != 0) as u64
}

/// What converting a reading gave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Converted {
    /// The reading's nanoseconds; `due` when a state update is due.
    Nanos { nanos: u64, due: bool },
    /// The reading is past this state's end: a newer state is needed.
    PastEnd,
}
