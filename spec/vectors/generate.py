#!/usr/bin/env python3
"""Regenerates the shared test vectors from the rules in spec/SEMANTICS.md.

Python's integers are exact, so this is an independent reference for the
fixed-point arithmetic that the Rust crate and the Go module implement with
128-bit operations. Run from the repository root:

    python3 spec/vectors/generate.py

It writes spec/vectors/line.json (the conversion), spec/vectors/env.json
(the FASTNOW_CLOCK spellings) and spec/vectors/arith.json (instant
arithmetic at the edges of the 64-bit range). spec/vectors/constants.json
is written by hand: it is the list itself, not derived from a rule.
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


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    for name, data in [("line.json", line_vectors()), ("env.json", env_vectors()),
                       ("arith.json", arith_vectors())]:
        with open(os.path.join(here, name), "w") as f:
            json.dump(data, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
