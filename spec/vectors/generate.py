#!/usr/bin/env python3
"""Regenerates conversion.json from the rules in spec/SEMANTICS.md.

Python's integers are exact, so this is an independent reference for the
fixed-point arithmetic that the Rust crate and the Go module implement with
128-bit operations. Run: python3 spec/vectors/generate.py > spec/vectors/conversion.json
"""
import json

MAX_SHIFT = 96
MULT_LIMIT = 1 << 63
U64_MAX = (1 << 64) - 1
NS_PER_S = 10**9
YEAR_NS = 365 * 24 * 3600 * NS_PER_S


def ceil_div(a, b):
    return -(-a // b)


def mult_for(out, inp, shift):
    mult = ceil_div(out << shift, inp)
    return mult if mult < MULT_LIMIT else None


def from_ratio(out, inp):
    if out == 0 or inp == 0:
        return None
    for shift in range(MAX_SHIFT, -1, -1):
        if out.bit_length() + shift > 128:
            continue
        mult = mult_for(out, inp, shift)
        if mult is not None:
            return (mult, shift)
    return None


def with_shift(out, inp, shift):
    if out == 0 or inp == 0 or shift > MAX_SHIFT or out.bit_length() + shift > 128:
        return None
    mult = ceil_div(out << shift, inp)
    return (mult, shift) if 1 <= mult <= U64_MAX else None


def apply(scale, x):
    mult, shift = scale
    v = (x * mult) >> shift
    return v if v <= U64_MAX else None


def s(v):
    return None if v is None else str(v)


def scale_json(sc):
    return None if sc is None else {"mult": str(sc[0]), "shift": sc[1]}


FREQS = [1, 1000, 32_768, 1_000_000, 19_200_000, 24_000_000, 62_500_000, 999_999_999,
         1_000_000_000, 1_000_000_001, 2_445_405_696, 3_000_000_000, 4_000_000_000,
         4_000_000_001, 5_200_000_000, 1_000_000_000_000, 1 << 62, U64_MAX]


def ticks_cases(f):
    cands = {0, 1, 2, 3, 999, f - 1 if f > 0 else 0, f, 2 * f, 1 << 32, 1 << 53, 1 << 63, U64_MAX,
             # a century of uptime, when it fits the counter
             (100 * YEAR_NS * f) // NS_PER_S}
    return sorted(c for c in cands if 0 <= c <= U64_MAX)


NANOS_CASES = [0, 1, 999, NS_PER_S, 60 * NS_PER_S, 100 * YEAR_NS, 1 << 63, U64_MAX]

freqs = []
for f in FREQS:
    ns = from_ratio(NS_PER_S, f)
    tk = from_ratio(f, NS_PER_S)
    freqs.append({
        "freq_hz": str(f),
        "nanos_per_tick": scale_json(ns),
        "ticks_per_nano": scale_json(tk),
        "ticks_to_nanos": [{"ticks": str(t), "nanos": s(apply(ns, t)) if ns else None} for t in ticks_cases(f)],
        "nanos_to_ticks": [{"nanos": str(n), "ticks": s(apply(tk, n)) if tk else None} for n in NANOS_CASES],
    })

# Ratios as calibration measures them (nanoseconds over ticks, and back),
# plus the edges of from_ratio.
RATIOS = [(1, 1), (0, 5), (5, 0), (1_000_491, 2_446_637_127), (2_446_637_127, 1_000_491),
          (112_349_661, 274_741_882_331), (U64_MAX, 1), (U64_MAX, 2), (U64_MAX, 3), (1 << 62, 1),
          ((1 << 63) - 1, 1), (1, U64_MAX), (U64_MAX, U64_MAX), (123_456_789, 987_654_321_987)]
ratios = [{"out": str(o), "in": str(i), "scale": scale_json(from_ratio(o, i))} for o, i in RATIOS]

# Refinement keeps the shift of the first calibration.
WITH_SHIFT = [(1_000_000_000, 2_445_405_696, 61), (1_000_000_000, 2_445_405_696, 62),
              (1_000_000_000, 2_445_405_696, 97), (1_000_000_000, 1, 40), (0, 1, 3),
              (1, 1 << 40, 0), (U64_MAX, 1, 65), (2_446_637_127, 1_000_491, 61),
              # a refinement pushing mult past 2^63 (allowed) and past 2^64 (refused)
              (1_000_000_000, 999_999_000, 62), (2_000_000_000, 999_999_000, 62),
              (U64_MAX, U64_MAX, 63), (U64_MAX, U64_MAX, 64)]
with_shift_cases = [{"out": str(o), "in": str(i), "shift": sh, "scale": scale_json(with_shift(o, i, sh))}
                    for o, i, sh in WITH_SHIFT]

print(json.dumps({
    "about": "Fixed-point conversion vectors; rules in spec/SEMANTICS.md. Integers are decimal strings; null means not representable / does not fit in u64.",
    "max_shift": MAX_SHIFT,
    "frequencies": freqs,
    "ratios": ratios,
    "with_shift": with_shift_cases,
}, indent=1))
