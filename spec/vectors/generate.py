#!/usr/bin/env python3
"""Regenerates the shared test vectors from the rules in spec/SEMANTICS.md.

Python's integers are exact, so this is an independent reference for the
fixed-point arithmetic that the Rust crate and the Go module implement with
128-bit operations. Run from the repository root:

    python3 spec/vectors/generate.py

It writes spec/vectors/line.json (the conversion) and spec/vectors/env.json
(the FASTNOW_CLOCK spellings).
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


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    for name, data in [("line.json", line_vectors()), ("env.json", env_vectors())]:
        with open(os.path.join(here, name), "w") as f:
            json.dump(data, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
