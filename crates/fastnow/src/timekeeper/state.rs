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
/// cache line: the piece's range and line, then the offsets the clocks kept
/// from the timeline add (`offsets`).
pub(super) mod word {
    /// Counter mode: where the read fast path starts, the larger of the
    /// piece's `takeover` and its `floor` (so the fast path never converts
    /// a value older than the update that published the state, below
    /// which the counter may have gone back unseen). OS mode: unused.
    pub const START: usize = 0;
    /// Counter mode: `trigger - START`, the range of the read fast path.
    /// 0 in OS mode, which keeps every fast path away from the counter.
    pub const SPAN: usize = 1;
    pub const OFFSET: usize = 2;
    pub const SLOPE: usize = 3;
    /// The boot timeline's offset (`State::boot_offset`).
    pub const BOOT_OFFSET: usize = 4;
    /// The wall clock's offset (`State::wall_offset`).
    pub const WALL_OFFSET: usize = 5;
    /// The timeline less `CLOCK_MONOTONIC` (`State::mono_offset`).
    pub const MONO_OFFSET: usize = 6;
    /// Counter mode: the lowest counter value a reader that loaded this
    /// state can read (`State::floor`).
    pub const FLOOR: usize = 7;
    pub const MODE: usize = 8;
    /// Counter mode: the counter value where this piece starts. OS mode:
    /// the `CLOCK_MONOTONIC` value where it starts.
    pub const TAKEOVER: usize = 9;
    pub const TRIGGER: usize = 10;
    pub const END: usize = 11;
    pub const PREV_OFFSET: usize = 12;
    pub const PREV_SLOPE: usize = 13;
    /// OS mode: readings are `CLOCK_MONOTONIC + os_offset` (mod 2^64).
    pub const OS_OFFSET: usize = 14;
    /// What the conversions to and from the kernel's clocks are good to
    /// (`State::mono_at` and the three after it): no reader's fast path
    /// loads them.
    pub const MONO_AT: usize = 15;
    pub const MONO_WIDTH: usize = 16;
    pub const BOOT_CONVERSION: usize = 17;
    pub const BOOT_WIDTH: usize = 18;
    pub const MONO_DRIFT: usize = 19;
    pub const COUNT: usize = 20;
}

/// Not published yet (all words zero).
pub(super) const MODE_NONE: u64 = 0;
/// Readings come from `CLOCK_MONOTONIC`.
pub(super) const MODE_OS: u64 = 1;
/// Readings come from the counter.
pub(super) const MODE_COUNTER: u64 = 2;

/// What readers see; see the module docs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct State {
    pub mode: u64,
    pub takeover: u64,
    pub trigger: u64,
    pub end: u64,
    pub line: Line,
    pub prev: Line,
    pub os_offset: u64,
    /// Counter mode: the lowest counter value a reader that loaded this
    /// state can read, short of the counter going back — the publishing
    /// sample's, less `FLOOR_SLACK_NS` of ticks for counters read on other
    /// cores. A reading below it means the counter went back (a reset at
    /// resume, a migration): it is never converted with this state.
    pub floor: u64,
    /// What [`BootInstant`](crate::BootInstant) adds (mod 2^64), which
    /// counts the time the machine spent suspended: on the OS clock for good
    /// (`MODE_OS`, `trigger == u64::MAX`) to `CLOCK_BOOTTIME`, which such
    /// readers read instead of `CLOCK_MONOTONIC`; otherwise to this state's
    /// reading — there `CLOCK_BOOTTIME` less the precise reading, measured at
    /// each update and never lowered (`offsets`).
    pub boot_offset: u64,
    /// What the wall clock adds to this state's reading: `CLOCK_REALTIME`
    /// less the precise reading at the sample of the update that published
    /// it; 0 (a measured 0 is published as 1) sends wall readers to
    /// `CLOCK_REALTIME` (`offsets`).
    pub wall_offset: u64,
    /// The timeline less `CLOCK_MONOTONIC` (mod 2^64), as the publishing
    /// update's sample measured it (`offsets`): what the conversions
    /// between instants and `CLOCK_MONOTONIC` subtract, and what a lower
    /// bound past `end` is held to (`lower_bound`).
    pub mono_offset: u64,
    /// The `CLOCK_MONOTONIC` reading of the sample that measured
    /// `mono_offset`, from which it drifts at the rate's error; 0 where it
    /// is exact and does not drift (OS mode: readings are `CLOCK_MONOTONIC`
    /// plus `os_offset`).
    pub mono_at: u64,
    /// The bracket of the sample that measured `mono_offset`: the offset is
    /// within half of it.
    pub mono_width: u64,
    /// How fast, in parts per billion, the offsets drift from `mono_at` on:
    /// the rate error the conversions allow for, or more where the last
    /// updates saw the timeline drift faster (`offsets`).
    pub mono_drift: u64,
    /// The boot timeline less `CLOCK_BOOTTIME` (mod 2^64): what the
    /// conversions between boot instants and `CLOCK_BOOTTIME` subtract —
    /// 2^62, and beyond it what the boot offset's ratchet keeps the boot
    /// readings ahead by (`offsets`).
    pub boot_conversion: u64,
    /// Twice what `boot_conversion` may be off by (the bracket of its
    /// measurement); 0 on the OS clock for good, where boot readers read
    /// `CLOCK_BOOTTIME` plus `boot_offset`.
    pub boot_width: u64,
}

impl State {
    pub(super) fn to_words(self) -> [u64; word::COUNT] {
        let mut w = [0; word::COUNT];
        w[word::MODE] = self.mode;
        w[word::TAKEOVER] = self.takeover;
        let start = self.takeover.max(self.floor);
        w[word::START] = start;
        w[word::SPAN] = if self.mode == MODE_COUNTER {
            self.trigger.saturating_sub(start)
        } else {
            0
        };
        w[word::OFFSET] = self.line.offset;
        w[word::SLOPE] = self.line.slope;
        w[word::FLOOR] = self.floor;
        w[word::TRIGGER] = self.trigger;
        w[word::END] = self.end;
        w[word::PREV_OFFSET] = self.prev.offset;
        w[word::PREV_SLOPE] = self.prev.slope;
        w[word::OS_OFFSET] = self.os_offset;
        w[word::BOOT_OFFSET] = self.boot_offset;
        w[word::WALL_OFFSET] = self.wall_offset;
        w[word::MONO_OFFSET] = self.mono_offset;
        w[word::MONO_AT] = self.mono_at;
        w[word::MONO_WIDTH] = self.mono_width;
        w[word::MONO_DRIFT] = self.mono_drift;
        w[word::BOOT_CONVERSION] = self.boot_conversion;
        w[word::BOOT_WIDTH] = self.boot_width;
        w
    }

    pub(super) fn from_words(w: &[u64; word::COUNT]) -> State {
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
            floor: w[word::FLOOR],
            boot_offset: w[word::BOOT_OFFSET],
            wall_offset: w[word::WALL_OFFSET],
            mono_offset: w[word::MONO_OFFSET],
            mono_at: w[word::MONO_AT],
            mono_width: w[word::MONO_WIDTH],
            mono_drift: w[word::MONO_DRIFT],
            boot_conversion: w[word::BOOT_CONVERSION],
            boot_width: w[word::BOOT_WIDTH],
        }
    }

    /// Whether readers are on the OS clock for good: no update comes any
    /// more, so boot readers read `CLOCK_BOOTTIME` themselves.
    #[inline]
    pub(super) fn os_for_good(&self) -> bool {
        self.mode == MODE_OS && self.trigger == u64::MAX
    }

    /// Converts a reading of this state's source (counter ticks, or
    /// `CLOCK_MONOTONIC` nanoseconds in OS mode). Below `takeover` the
    /// `prev` line converts: the previous piece's, or, where the state
    /// stands still until `CLOCK_MONOTONIC` catches up (a re-base, an OS
    /// state after one), a flat line.
    #[inline]
    pub(super) fn convert(&self, reading: u64) -> Converted {
        if self.mode == MODE_COUNTER && reading < self.floor {
            return Converted::Below;
        }
        if reading >= self.end {
            return Converted::PastEnd;
        }
        let due = reading >= self.trigger;
        let nanos = if reading < self.takeover {
            self.prev.at(reading)
        } else if self.mode == MODE_OS {
            reading.wrapping_add(self.os_offset)
        } else {
            self.line.at(reading)
        };
        Converted::Nanos { nanos, due }
    }

    /// Converts the counter value a reader read before the sample of the
    /// update it then made itself, which published this state: as
    /// `convert`, but below the floor too, which was placed from that
    /// later sample (the piece converts the reading as it would have were
    /// the floor lower: with `prev` below `takeover` — the previous line
    /// there, or a flat line after a re-base). `None` past the end.
    #[inline]
    pub(super) fn before_sample(&self, reading: u64) -> Option<u64> {
        let lowered = State { floor: 0, ..*self };
        match lowered.convert(reading) {
            Converted::Nanos { nanos, .. } => Some(nanos),
            _ => None,
        }
    }

    /// Whether the reading `convert` gives for `reading` stands still: the
    /// line that converts it is flat (a piece that stands still until
    /// `CLOCK_MONOTONIC` catches up, or the flat line below a re-based
    /// take-over). Such a reading is not the time of its moment, only a
    /// value readings never go back from.
    #[inline]
    pub(super) fn held_at(&self, reading: u64) -> bool {
        if reading < self.takeover {
            self.prev.slope == 0
        } else {
            self.mode == MODE_COUNTER && self.line.slope == 0
        }
    }

    /// A lower bound of what any newer state gives for a reading at or
    /// past `end`, or (counter mode) below `floor`, taken when
    /// `CLOCK_MONOTONIC` read `mono` (see the module docs): the value at
    /// `end` plus 7/8 of the nanoseconds since, rounded down — counted both
    /// on the counter (not below the floor, where it went back) and on
    /// `CLOCK_MONOTONIC` past the
    /// moment the timeline kept to it (`mono_offset`) reaches the value at
    /// `end`, whichever is less.
    ///
    /// The counter's part: a next piece that continues this one has a
    /// slope of at least 7/8 of this one's (`calibrate::floor` rounds it
    /// up), so its value `k` ticks past `end` is at least `floor(7/8 × k ×
    /// slope)`, which is at least `floor(7/8 × floor(k × slope))`: the
    /// bound, however few ticks `k` is. (Rounding the 7/8 up instead made
    /// the bound the old rate itself below 8 ns, above a slower next piece.)
    /// `CLOCK_MONOTONIC`'s part: a next piece that re-bases (the counter
    /// jumped, or counted a suspend) starts at or above the value at `end`
    /// and at or above what the timeline kept to `CLOCK_MONOTONIC` reads
    /// then, so a counter that counted an hour's suspend never lends its
    /// hour to a lower bound.
    pub(super) fn lower_bound(&self, reading: u64, mono: u64) -> u64 {
        if self.mode == MODE_OS {
            let at_end = self.end.wrapping_add(self.os_offset);
            return at_end.wrapping_add(seven_eighths(reading - self.end));
        }
        let at_end = self.line.at(self.end);
        // Below the floor the counter went back and counts nothing
        // meaningful: `CLOCK_MONOTONIC` alone bounds the time since.
        let counted = if reading >= self.end {
            self.line.nanos_for(reading - self.end)
        } else {
            u64::MAX
        };
        let kept = mono.wrapping_add(self.mono_offset).wrapping_sub(at_end);
        let kept = if (kept as i64) < 0 { 0 } else { kept };
        at_end.wrapping_add(seven_eighths(counted.min(kept)))
    }
}

/// `floor(7 × n / 8)`, without overflow.
pub(super) const fn seven_eighths(n: u64) -> u64 {
    n - n / 8 - (n % 8 != 0) as u64
}

/// What converting a reading gave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Converted {
    /// The reading's nanoseconds; `due` when a state update is due.
    Nanos { nanos: u64, due: bool },
    /// The reading is past this state's end: a newer state is needed.
    PastEnd,
    /// The counter reads below this state's floor: it went back (a reset
    /// at resume, a migration). A newer state is needed, which re-bases.
    Below,
}
