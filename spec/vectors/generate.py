#!/usr/bin/env python3
"""Regenerates the shared test vectors from the rules in spec/SEMANTICS.md.

Python's integers are exact, so this is an independent reference for the
fixed-point arithmetic that the Rust crate and the Go module implement with
128-bit operations. Run from the repository root:

    python3 spec/vectors/generate.py

It writes spec/vectors/line.json (the conversion), spec/vectors/env.json
(the FASTNOW_CLOCK spellings), spec/vectors/arith.json (instant
arithmetic at the edges of the 64-bit range) and spec/vectors/hlc.json (the
hybrid logical clock's layout, text and send/receive sequences).
spec/vectors/constants.json, spec/vectors/verdict.json (how a failure to read
the kernel's clocksource is taken) and spec/vectors/scenarios.json (the fault
model) are written by hand: each is a list itself, not derived from a rule.
"""
import json
import os

U64 = 1 << 64
NS_PER_S = 10**9
YEAR_NS = 365 * 24 * 3600 * NS_PER_S
SHIFTS = [64, 54]  # x86_64, and every other target


def slope(nanos, ticks, shift):
    """round((nanos << shift) / ticks), half up; None if 0 or >= 2^64."""
    if ticks == 0:
        return None
    v = ((nanos << shift) + (ticks >> 1)) // ticks
    return v if 0 < v < U64 else None


def scaled(t, s, shift):
    return (t * s) >> shift  # < 2^128 >> shift; the rules take it mod 2^64


def through(t, value, s, shift):
    return (value - scaled(t, s, shift)) % U64


def at(offset, t, s, shift):
    return (offset + scaled(t, s, shift)) % U64


def st(v):
    return None if v is None else str(v)


FREQS = [1, 1000, 32_768, 1_000_000, 1_048_576, 19_200_000, 24_000_000, 62_500_000,
         999_999_999, 1_000_000_000, 1_000_000_001, 2_445_405_696, 2_299_999_918,
         3_000_000_000, 4_000_000_000, 10**10, (1 << 63), U64 - 1]

RATIOS = [(0, 1), (1, 0), (1, 1), (NS_PER_S, 2_500_000_000), (NS_PER_S, 24_000_000),
          (1_000_002, 2_445_406_000), (999_998, 2_445_404_000), (U64 - 1, 1),
          (U64 - 1, U64 - 1), (1, U64 - 1), (3, 7), (7, 3), (1 << 10, 1), ((1 << 10) - 1, 1),
          (1, 1 << 54), (1, (1 << 55) - 1)]


def line_cases(shift):
    cases = []
    points = [(0, 0), (1_000, 5_000), (2_445_405_696 * 3600, 3600 * NS_PER_S),
              (U64 - 1, 10**9), (1 << 40, U64 - 1), (123_456_789_012_345, 1_700_000_000 * NS_PER_S)]
    for hz in [24_000_000, 1_000_000_000, 2_445_405_696, 3_000_000_000]:
        s = slope(NS_PER_S, hz, shift)
        if s is None:
            continue
        for (t, v) in points:
            off = through(t, v, s, shift)
            probes = sorted({0, 1, t, (t + 1) % U64, (t - 1) % U64, (t + hz) % U64,
                             (t - hz) % U64, (t + hz * 3600) % U64, U64 - 1})
            cases.append({
                "freq_hz": str(hz), "slope": str(s), "through_ticks": str(t),
                "through_value": str(v), "offset": str(off),
                "at": [{"ticks": str(p), "value": str(at(off, p, s, shift))} for p in probes],
            })
    return cases


def line_vectors():
    out = {
        "about": "Fixed-point conversion vectors (a Line: value(t) = offset + (t * slope) >> "
                 "line_shift, mod 2^64); rules in spec/SEMANTICS.md. Integers are decimal "
                 "strings; null means not representable. A target uses the entry for its "
                 "line_shift: 64 on x86_64 / amd64, 54 elsewhere.",
        "shifts": [],
    }
    for shift in SHIFTS:
        out["shifts"].append({
            "line_shift": shift,
            "slope_of_freq": [{"freq_hz": str(f), "slope": st(slope(NS_PER_S, f, shift))}
                              for f in FREQS],
            "slope": [{"nanos": str(n), "ticks": str(t), "slope": st(slope(n, t, shift))}
                      for (n, t) in RATIOS],
            "lines": line_cases(shift),
        })
    return out


# FASTNOW_CLOCK: ASCII white space (SP, HT, LF, VT, FF, CR) around the value
# and ASCII case are ignored; nothing else is.
ENV = [
    (b"", "unset"), (b"   ", "unset"), (b"\t\n\x0b\x0c\r ", "unset"),
    (b"counter", "counter"), (b"COUNTER", "counter"), (b" Counter\n", "counter"),
    (b"\x0bcounter\x0c", "counter"), (b"cOuNtEr\r\n", "counter"),
    (b"os", "os"), (b"OS", "os"), (b"os\x0b", "os"), (b"\tOs ", "os"), (b"\r\nos\r\n", "os"),
    (b"tsc", "invalid"), (b"os2", "invalid"), (b"o s", "invalid"), (b"counters", "invalid"),
    (b"\xc2\xa0os", "invalid"),            # NO-BREAK SPACE is not ASCII white space
    (b"os\xe2\x80\x83", "invalid"),        # EM SPACE
    (b"\xef\xbc\xaf\xef\xbc\xb3", "invalid"),  # FULLWIDTH "OS"
    (b"o\xc5\xbf", "invalid"),             # "o" + LATIN SMALL LETTER LONG S (folds to "os")
    (b"\xe2\x84\xaaounter", "invalid"),    # KELVIN SIGN K
    (b"os\x00", "invalid"), (b"\x85os", "invalid"), (b"os\xff", "invalid"),
    (b"counter" + b" " * 100, "counter"),  # long, but only white space after the word
    (b"os" + b" " * 62 + b"x", "invalid"),
]


def env_vectors():
    return {
        "about": "FASTNOW_CLOCK values and their outcome (unset, counter, os, invalid); "
                 "value_hex is the raw bytes. Rules in spec/SEMANTICS.md, Sources.",
        "cases": [{"value_hex": v.hex(), "outcome": o} for (v, o) in ENV],
    }


# Instant arithmetic on signed 64-bit nanoseconds (Go's Instant, Duration and
# ManualClock): a result outside the range saturates to its nearest end, as
# package time's Sub does, never wraps.
I64_MIN, I64_MAX = -(1 << 63), (1 << 63) - 1
NOW = 1_500_000_000  # a reading 1.5 s into a process


def sat64(v):
    return min(max(v, I64_MIN), I64_MAX)


ARITH_SUB = [(0, 0), (5, 10), (10, 5), (NOW, -10), (I64_MAX - 1, -10), (I64_MAX, -1),
             (I64_MAX, I64_MIN), (I64_MIN, I64_MAX), (I64_MIN, 1), (I64_MIN, -1), (-1, I64_MAX),
             (-2, I64_MAX), (0, I64_MIN), (-1, I64_MIN), (I64_MAX, I64_MAX), (I64_MIN, I64_MIN),
             (I64_MAX, 0), (I64_MIN, 0), (NOW, NOW + I64_MIN), (NOW + I64_MIN, NOW)]
ARITH_ADD = [(NOW, 0), (NOW, I64_MAX), (NOW, I64_MIN), (NOW, -NOW), (NOW, -NOW - 1),
             (I64_MAX, 1), (I64_MAX, -1), (I64_MAX, I64_MIN), (I64_MIN, -1), (I64_MIN, 1),
             (I64_MIN, I64_MAX), (I64_MIN, I64_MIN), (0, I64_MIN), (-1, I64_MAX), (1, I64_MAX),
             (-5, I64_MIN), (I64_MAX - NOW, NOW), (I64_MAX - NOW, NOW + 1)]
ARITH_ELAPSED = [(NOW, NOW), (NOW, 0), (NOW, NOW + 1), (NOW, I64_MAX), (NOW, NOW - 1 + I64_MIN),
                 (NOW, I64_MIN), (0, -1), (0, I64_MIN), (-1, I64_MIN), (I64_MAX, I64_MIN),
                 (I64_MAX, 0), (I64_MIN, I64_MAX)]
ARITH_ADVANCE = [(10**9, 0), (10**9, 1), (10**9, I64_MAX), (I64_MAX, 1), (I64_MAX - 1, 1),
                 (I64_MAX - 1, 2), (I64_MAX, I64_MAX), (-5, I64_MAX), (I64_MIN, I64_MAX),
                 (1_700_000_000 * NS_PER_S, I64_MAX - 1_700_000_000 * NS_PER_S),
                 (1_700_000_000 * NS_PER_S, I64_MAX - 1_700_000_000 * NS_PER_S + 1)]


def arith_vectors():
    s = str
    return {
        "about": "Instant arithmetic at the edges of the signed 64-bit range; every result saturates "
                 "to the nearest end of [-2^63, 2^63-1] instead of wrapping, as Go's time.Time.Sub "
                 "does. Integers are decimal strings (nanoseconds). sub: a.Sub(b) (Go Instant.Sub, "
                 "and ManualClock.Since(b) when the clock reads a). add: a.Add(d) (Go Instant.Add). "
                 "elapsed: a.Elapsed() when the clock reads now (Go Instant.Elapsed and System.Since: "
                 "never negative). advance: a clock reading a, after Advance(d) with d >= 0 (Go "
                 "ManualClock.Advance, for its monotonic and its Unix time alike: the largest reading, "
                 "never a wrap or a step back; the Rust mock clocks saturate the same way).",
        "sub": [{"a": s(a), "b": s(b), "want": s(sat64(a - b))} for (a, b) in ARITH_SUB],
        "add": [{"a": s(a), "d": s(d), "want": s(sat64(a + d))} for (a, d) in ARITH_ADD],
        "elapsed": [{"a": s(a), "now": s(now), "want": s(max(0, sat64(now - a)))}
                    for (now, a) in ARITH_ELAPSED],
        "advance": [{"a": s(a), "d": s(d), "want": s(sat64(a + d))} for (a, d) in ARITH_ADVANCE],
    }


# The hybrid logical clock (spec/SEMANTICS.md, "Hybrid logical clock"): a
# stamp is (l << 16) | c, l the physical part in units of 2^-16 s since the
# Unix epoch (48 bits), c the counter (16 bits). The clock below follows the
# paper's rules on (l, c) pairs (Kulkarni et al. 2014, Figure 5), with a
# counter that carries into l when it passes 65535 and a word that stops at
# 2^64 - 1; the implementations instead take the largest of three words.
HLC_LOGICAL_BITS = 16
HLC_MAX_L = (1 << 48) - 1
HLC_MAX_C = (1 << HLC_LOGICAL_BITS) - 1
HLC_END_NS = (1 << 32) * NS_PER_S
HLC_DEFAULT_MAX_DRIFT_NS = 500_000_000


def hlc_l_of_nanos(ns):
    """The unit that contains ns: floor(ns * 2^16 / 10^9), the last past the range."""
    return min(ns * (1 << 16) // NS_PER_S, HLC_MAX_L)


def hlc_nanos_of_l(l):
    """The unit's first whole nanosecond: ceil(l * 10^9 / 2^16)."""
    return -(-l * NS_PER_S // (1 << 16))


def hlc_word(l, c):
    return (l << HLC_LOGICAL_BITS) | c


def rfc3339_utc(ns):
    import datetime
    secs, frac = divmod(ns, NS_PER_S)
    t = datetime.datetime(1970, 1, 1) + datetime.timedelta(seconds=secs)
    return t.strftime("%Y-%m-%dT%H:%M:%S") + ".%09dZ" % frac


def hlc_text(word):
    l, c = word >> HLC_LOGICAL_BITS, word & HLC_MAX_C
    return "%s,%05d" % (rfc3339_utc(hlc_nanos_of_l(l)), c)


class PaperHlc:
    def __init__(self, max_drift_ns):
        self.l, self.c, self.max_drift_ns = 0, 0, max_drift_ns

    def _settle(self):
        if self.c > HLC_MAX_C:  # the counter is full: borrow from the physical part
            if self.l == HLC_MAX_L:
                self.c = HLC_MAX_C  # the last word: it stays
            else:
                self.l, self.c = self.l + 1, 0
        return hlc_word(self.l, self.c)

    def now(self, wall_ns):
        old = self.l
        self.l = max(old, hlc_l_of_nanos(wall_ns))
        self.c = self.c + 1 if self.l == old else 0
        return self._settle()

    def update(self, remote, wall_ns):
        lm, cm = remote >> HLC_LOGICAL_BITS, remote & HLC_MAX_C
        ahead = hlc_nanos_of_l(lm) - wall_ns
        if ahead > self.max_drift_ns:
            return None, ahead
        old = self.l
        self.l = max(old, lm, hlc_l_of_nanos(wall_ns))
        if self.l == old and self.l == lm:
            self.c = max(self.c, cm) + 1
        elif self.l == old:
            self.c = self.c + 1
        elif self.l == lm:
            self.c = cm + 1
        else:
            self.c = 0
        return self._settle(), None


HLC_T0 = 1_700_000_000 * NS_PER_S      # 2023-11-14T22:13:20Z, a unit's first nanosecond
HLC_T = HLC_T0 + 123_456_789           # inside a unit
MS, US = 1_000_000, 1_000


def hlc_stamp(ns, c):
    return hlc_word(hlc_l_of_nanos(ns), c)


# Each step: (node, op, wall_ns, remote word or None[, repeat]); "remote_step"
# names an earlier step whose stamp is the remote one.
HLC_SEQUENCES = [
    ("local events: events in one physical unit count up, the next unit starts at 0", None, [
        ("a", "now", HLC_T, None), ("a", "now", HLC_T + 1, None), ("a", "now", HLC_T + 10 * US, None),
        ("a", "now", HLC_T + 20 * US, None), ("a", "now", HLC_T + 20 * US, None),
        ("a", "now", HLC_T + 1000 * MS, None)]),
    ("the wall clock steps back 1 s: stamps keep their physical part and count until it passes again", None, [
        ("a", "now", HLC_T + 1000 * MS, None), ("a", "now", HLC_T, None), ("a", "now", HLC_T + 500 * MS, None),
        ("a", "now", HLC_T + 1000 * MS, None), ("a", "now", HLC_T + 1000 * MS + 20 * US, None)]),
    ("send and receive, the receiver's wall clock 3 ms behind: the receipt takes the sender's physical part", None, [
        ("a", "now", HLC_T, None), ("b", "update", HLC_T - 3 * MS, ("step", 0)),
        ("b", "now", HLC_T - 3 * MS + 1 * US, None), ("b", "now", HLC_T + 1 * MS, None),
        ("a", "update", HLC_T + 2 * US, ("step", 2))]),
    ("send and receive, the receiver's wall clock 3 ms ahead: the receipt takes its own wall clock", None, [
        ("a", "now", HLC_T, None), ("b", "update", HLC_T + 3 * MS, ("step", 0)),
        ("a", "update", HLC_T + 5 * US, ("step", 1))]),
    ("equal physical parts: the receipt's counter is one more than the larger of the two", None, [
        ("a", "now", HLC_T, None), ("a", "now", HLC_T, None), ("a", "now", HLC_T, None),
        ("b", "now", HLC_T, None), ("b", "update", HLC_T, ("step", 2)),
        ("a", "update", HLC_T, ("step", 3)), ("a", "update", HLC_T, ("step", 4))]),
    ("a remote stamp behind: the receipt is the local clock's next stamp", None, [
        ("b", "now", HLC_T + 2000 * MS, None), ("b", "update", HLC_T + 2000 * MS, ("word", hlc_stamp(HLC_T, 3))),
        ("b", "update", HLC_T + 2000 * MS, ("word", 0))]),
    ("a remote stamp 10 s ahead: refused, saying by how much, and the clock unchanged", None, [
        ("a", "now", HLC_T, None), ("a", "update", HLC_T, ("word", hlc_stamp(HLC_T + 10_000 * MS, 0))),
        ("a", "now", HLC_T, None)]),
    ("a remote stamp exactly the maximum drift ahead is accepted; 1 ns further is refused", None, [
        ("a", "update", HLC_T0 + 1500 * MS, ("word", hlc_stamp(HLC_T0 + 2000 * MS, 5))),
        ("b", "update", HLC_T0 + 1500 * MS - 1, ("word", hlc_stamp(HLC_T0 + 2000 * MS, 5))),
        ("b", "now", HLC_T0 + 1500 * MS - 1, None)]),
    ("maximum drift 0: a remote stamp 1 ns ahead is refused, one in the wall clock's own nanosecond accepted", 0, [
        ("a", "update", HLC_T0 - 1, ("word", hlc_stamp(HLC_T0, 0))),
        ("a", "update", HLC_T0, ("word", hlc_stamp(HLC_T0, 9)))]),
    ("the largest maximum drift (2^64 - 1 ns): every remote stamp is accepted", (1 << 64) - 1, [
        ("a", "update", HLC_T, ("word", (1 << 64) - 6)), ("a", "now", HLC_T, None)]),
    ("a full counter: the receipt of (l, 65534) is (l, 65535), and the next stamp borrows (l + 1, 0)", None, [
        ("a", "update", HLC_T, ("word", hlc_stamp(HLC_T, 65534))), ("a", "now", HLC_T, None),
        ("a", "now", HLC_T, None), ("a", "update", HLC_T, ("word", hlc_stamp(HLC_T, HLC_MAX_C))),
        ("a", "now", HLC_T + 1000 * MS, None)]),
    ("65,537 local events in one unit: the last one borrows from the physical part", None, [
        ("a", "now", HLC_T, None, 65_537), ("a", "now", HLC_T, None)]),
    ("the wall clock at the epoch: a new clock's last stamp is 0, so its first is (0, 1)", None, [
        ("a", "now", 0, None), ("a", "now", 15_258, None), ("a", "now", 15_259, None)]),
    ("past 2106: the wall clock reads as the last unit, and the word stops at 2^64 - 1", None, [
        ("a", "now", HLC_END_NS + 5 * NS_PER_S, None), ("a", "now", (1 << 64) - 1, None),
        ("a", "update", HLC_END_NS + 5 * NS_PER_S, ("word", (1 << 64) - 2)),
        ("a", "now", HLC_END_NS + 5 * NS_PER_S, None),
        ("b", "update", HLC_END_NS - 1, ("word", (1 << 64) - 1)), ("b", "now", HLC_END_NS - 1, None)]),
]


def hlc_sequences():
    out = []
    for name, drift, steps in HLC_SEQUENCES:
        drift = HLC_DEFAULT_MAX_DRIFT_NS if drift is None else drift
        clocks, results, rows = {}, [], []
        for step in steps:
            node, op, wall, remote = step[:4]
            repeat = step[4] if len(step) > 4 else 1
            clock = clocks.setdefault(node, PaperHlc(drift))
            row = {"node": node, "op": op, "wall_ns": str(wall)}
            if op == "now":
                for _ in range(repeat):
                    got = clock.now(wall)
                if repeat > 1:
                    row["repeat"] = repeat
                ahead = None
            else:
                kind, v = remote
                word = results[v] if kind == "step" else v
                row["remote"] = str(word)
                got, ahead = clock.update(word, wall)
            if got is None:
                row["refused_ahead_by_ns"] = str(ahead)
            else:
                row["want"] = str(got)
                row["want_text"] = hlc_text(got)
            results.append(got)
            rows.append(row)
        out.append({"name": name, "max_drift_ns": str(drift), "steps": rows})
    return out


HLC_ENCODE = [(0, 0), (1, 0), (15_258, 1), (15_259, 2), (NS_PER_S - 1, 3), (NS_PER_S, 0),
              (HLC_T0, 0), (HLC_T, 7), (1_709_210_096_123_456_789, 7), (1_709_210_096_500_000_000, 65535),
              (HLC_END_NS - 1, 65535), (HLC_END_NS, 0), ((1 << 64) - 1, 1)]

HLC_PARSE_OK = [
    "1970-01-01T00:00:00Z,0", "1970-01-01T00:00:00.000015258Z,1", "1970-01-01T00:00:00.000015259Z,00001",
    "2023-11-14T22:13:20.123458862Z,00007", "2024-02-29T13:34:56.5+01:00,7", "2024-02-29T12:34:56.1Z,0",
    "2024-02-28T20:34:56.123443604-16:00,65535", "2024-02-29t12:34:56z,1", "2024-02-29 12:34:56Z,1",
    "2016-12-31T23:59:60Z,2", "2024-02-29T12:34:56.1234567890000Z,3", "2106-02-07T06:28:15.999999999Z,65535",
    "2106-02-07T06:28:15.999984741Z,65534", "1970-01-01T01:00:00+01:00,00000",
]
HLC_PARSE_ERR = [
    "", "2024-02-29T12:34:56Z", "2024-02-29T12:34:56Z,", "2024-02-29T12:34:56Z,65536",
    "2024-02-29T12:34:56Z,99999", "2024-02-29T12:34:56Z,000001", "2024-02-29T12:34:56Z,+1",
    "2024-02-29T12:34:56Z,-1", "2024-02-29T12:34:56Z, 1", "2024-02-29T12:34:56Z,1 ",
    "2024-02-29T12:34:56Z,0x1", "2024-02-29T12:34:56,5Z,1", "2024-02-29T12:34:56.1234567891Z,1",
    "2024-02-30T00:00:00Z,1", "2024-02-29T24:00:00Z,1", "2024-02-29T12:34:56+24:00,1",
    "2024-02-29T12:34:56,1", "2106-02-07T06:28:16Z,0", "1969-12-31T23:59:59.999999999Z,0",
    "2024-02-29T12:34:56.Z,1", "+2024-02-29T12:34:56Z,1", "2024-02-29T12:34Z,1", "2024-2-29T12:34:56Z,1",
]


def hlc_parse(text):
    """The stamp a text reads as, by the rules of SEMANTICS ("Hybrid logical clock")."""
    import re
    m = re.fullmatch(r"(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?"
                     r"(?:([Zz])|([+-])(\d{2}):(\d{2})),(\d{1,5})", text)
    if not m:
        return None
    import calendar
    y, mo, d, h, mi, s = (int(m.group(i)) for i in range(1, 7))
    frac = m.group(7) or "0"
    if len(frac) > 9 and int(frac[9:]) != 0:
        return None
    nanos = int((frac + "0" * 9)[:9])
    if not 1 <= mo <= 12 or not 1 <= d <= calendar.monthrange(y, mo)[1]:
        return None
    if h > 23 or mi > 59 or s > 60:
        return None
    off = 0
    if m.group(9):
        oh, om = int(m.group(10)), int(m.group(11))
        if oh > 23 or om > 59:
            return None
        off = (oh * 60 + om) * (-1 if m.group(9) == "-" else 1)
    import datetime
    days = (datetime.date(y, mo, d) - datetime.date(1970, 1, 1)).days
    ns = ((days * 86400 + h * 3600 + mi * 60 + s - off * 60) * NS_PER_S) + nanos
    c = int(m.group(12))
    if ns < 0 or ns >= HLC_END_NS or c > HLC_MAX_C:
        return None
    return hlc_word(hlc_l_of_nanos(ns), c)


def hlc_vectors():
    s = str
    return {
        "about": "The hybrid logical clock (spec/SEMANTICS.md, \"Hybrid logical clock\"). A stamp is one "
                 "u64 (a decimal string here): the physical part l in its upper 48 bits, in units of "
                 "2^-16 s since 1970-01-01T00:00:00Z, and the counter c in its lower 16. encode: "
                 "Timestamp::new(physical_nanos_in, logical) (Go NewHLCTimestamp) is word; its "
                 "physical_nanos() (Go UnixNano()) is physical_nanos, its text is text. parse: texts and "
                 "the stamp each reads as (null: refused). sequences: clocks (one per node, each new, "
                 "with the sequence's max_drift_ns) driven with the given wall clock readings; now is a "
                 "local or send event (repeat: that many in a row, want is the last), update the receipt "
                 "of remote; want is the stamp returned, or refused_ahead_by_ns says the update was "
                 "refused and by how much the remote stamp was ahead. Generated by generate.py from the "
                 "paper's rules on (l, c) pairs.",
        "layout": {"physical_bits": 48, "logical_bits": HLC_LOGICAL_BITS, "unit": "2^-16 s",
                   "epoch": "1970-01-01T00:00:00Z", "last_physical_nanos": s(hlc_nanos_of_l(HLC_MAX_L)),
                   "end_ns": s(HLC_END_NS), "default_max_drift_ns": s(HLC_DEFAULT_MAX_DRIFT_NS)},
        "encode": [{"physical_nanos_in": s(ns), "logical": c, "word": s(hlc_stamp(ns, c)),
                    "physical_nanos": s(hlc_nanos_of_l(hlc_l_of_nanos(ns))), "text": hlc_text(hlc_stamp(ns, c))}
                   for (ns, c) in HLC_ENCODE],
        "parse": [{"text": t, "word": None if hlc_parse(t) is None else s(hlc_parse(t))}
                  for t in HLC_PARSE_OK + HLC_PARSE_ERR],
        "sequences": hlc_sequences(),
    }


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    for name, data in [("line.json", line_vectors()), ("env.json", env_vectors()),
                       ("arith.json", arith_vectors()), ("hlc.json", hlc_vectors())]:
        with open(os.path.join(here, name), "w") as f:
            json.dump(data, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
