"""Character sets as Java's ``java.util.regex`` defines them, built from Java 17's own tables.

A set is a sorted tuple of disjoint inclusive code point ranges. Every predicate Java's
``Pattern`` uses (``\\p{Lower}``, ``\\p{javaLowerCase}``, ``\\p{IsLatin}``, ``\\p{InGreek}``, case
folding, ...) becomes such a set, so the translated pattern decides exactly as the JVM would:
the Unicode data is Java 17's (``unicode_java17.json.gz``), not Python's, whose Unicode version
differs. The table is regenerated with ``java RegexOracle tables`` (tests/jregex/RegexOracle.java)
run on Java 17 with ``--add-opens java.base/java.lang=ALL-UNNAMED``.
"""

from __future__ import annotations

import functools
import gzip
import json
from collections.abc import Iterable
from pathlib import Path

MAX_CP = 0x10FFFF
Ranges = tuple[tuple[int, int], ...]
EMPTY: Ranges = ()
ALL: Ranges = ((0, MAX_CP),)

# Character.getType numbers, by their two-letter Unicode names.
CATEGORY = {"Cn": 0, "Lu": 1, "Ll": 2, "Lt": 3, "Lm": 4, "Lo": 5, "Mn": 6, "Me": 7, "Mc": 8,
            "Nd": 9, "Nl": 10, "No": 11, "Zs": 12, "Zl": 13, "Zp": 14, "Cc": 15, "Cf": 16,
            "Co": 18, "Cs": 19, "Pd": 20, "Ps": 21, "Pe": 22, "Pc": 23, "Po": 24, "Sm": 25,
            "Sc": 26, "Sk": 27, "So": 28, "Pi": 29, "Pf": 30}


def normalise(ranges: Iterable[tuple[int, int]]) -> Ranges:
    """Sorted, merged ranges (adjacent ranges join)."""
    out: list[list[int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return tuple((lo, hi) for lo, hi in out)


def of_chars(chars: Iterable[int]) -> Ranges:
    return normalise((c, c) for c in chars)


def union(*sets: Ranges) -> Ranges:
    return normalise(r for s in sets for r in s)


def negate(s: Ranges) -> Ranges:
    out, nxt = [], 0
    for lo, hi in s:
        if lo > nxt:
            out.append((nxt, lo - 1))
        nxt = hi + 1
    if nxt <= MAX_CP:
        out.append((nxt, MAX_CP))
    return tuple(out)


def intersect(a: Ranges, b: Ranges) -> Ranges:
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if lo <= hi:
            out.append((lo, hi))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return tuple(out)


def contains(s: Ranges, c: int) -> bool:
    return any(lo <= c <= hi for lo, hi in s)


@functools.lru_cache(maxsize=1)
def tables() -> dict:
    """Java 17's Unicode data (categories, scripts, blocks, case mappings, properties)."""
    path = Path(__file__).with_name("unicode_java17.json.gz")
    return json.loads(gzip.decompress(path.read_bytes()))


def _pairs(flat: list[int]) -> Ranges:
    return tuple((flat[i], flat[i + 1]) for i in range(0, len(flat), 2))


@functools.cache
def category(*names: str) -> Ranges:
    cats = tables()["category"]
    return union(*(_pairs(cats[str(CATEGORY[n])]) for n in names))


@functools.cache
def prop(name: str) -> Ranges:
    """A ``Character.isXxx`` predicate of Java 17 (``alphabetic``, ``lowercase``, ...)."""
    return _pairs(tables()["prop"][name])


def script(name: str) -> Ranges | None:
    """``Character.UnicodeScript.forName``: the enum name or an ISO 15924 alias, any case."""
    t, key = tables(), name.upper()
    enum = t["script_alias"].get(key, key)
    return _pairs(t["script"][enum]) if enum in t["script"] else None


def block(name: str) -> Ranges | None:
    """``Character.UnicodeBlock.forName``: canonical, enum-style or space-free name, any case."""
    t = tables()
    enum = t["block_name"].get(name.upper())
    return _pairs(t["block"][enum]) if enum else None


@functools.lru_cache(maxsize=1)
def _case_maps() -> tuple[dict[int, int], dict[int, int]]:
    t = tables()
    return dict(_pairs(t["upper"])), dict(_pairs(t["lower"]))


def to_upper(c: int) -> int:
    """``Character.toUpperCase(int)`` (simple mapping)."""
    return _case_maps()[0].get(c, c)


def to_lower(c: int) -> int:
    """``Character.toLowerCase(int)`` (simple mapping)."""
    return _case_maps()[1].get(c, c)


def fold(c: int) -> int:
    """``toLowerCase(toUpperCase(c))``: the key Java's Unicode-case matching compares."""
    return to_lower(to_upper(c))


@functools.lru_cache(maxsize=1)
def _cased() -> tuple[int, ...]:
    """Every code point some case mapping touches (the only ones folding can relate)."""
    up, low = _case_maps()
    return tuple(sorted(set(up) | set(low) | set(up.values()) | set(low.values())))


def single_u(lower: int) -> Ranges:
    """``SingleU(lower)``: ``c == lower`` or ``fold(c) == lower``."""
    return of_chars([lower, *(c for c in _cased() if fold(c) == lower)])


def ci_range_u(lo: int, hi: int) -> Ranges:
    """``CIRangeU``: in range, or its upper case or the lower case of that is."""
    extra = [c for c in _cased()
             if lo <= to_upper(c) <= hi or lo <= to_lower(to_upper(c)) <= hi]
    return union(((lo, hi),), of_chars(extra))


def ascii_upper(c: int) -> int:
    return c - 32 if 0x61 <= c <= 0x7A else c


def ascii_lower(c: int) -> int:
    return c + 32 if 0x41 <= c <= 0x5A else c


def ci_range(lo: int, hi: int) -> Ranges:
    """``CIRange``: in range, or an ASCII char whose ASCII other case is."""
    extra = [c for c in range(128) if lo <= ascii_upper(c) <= hi or lo <= ascii_lower(c) <= hi]
    return union(((lo, hi),), of_chars(extra))


def _r(*pairs: tuple[int, int]) -> Ranges:
    return normalise(pairs)


def _c(s: str) -> Ranges:
    return of_chars(ord(ch) for ch in s)


# java.util.regex.ASCII ctype classes.
ASCII_DIGIT = _r((0x30, 0x39))
ASCII_UPPER = _r((0x41, 0x5A))
ASCII_LOWER = _r((0x61, 0x7A))
ASCII_ALPHA = union(ASCII_UPPER, ASCII_LOWER)
ASCII_ALNUM = union(ASCII_ALPHA, ASCII_DIGIT)
ASCII_WORD = union(ASCII_ALNUM, _c("_"))
ASCII_SPACE = _r((0x09, 0x0D), (0x20, 0x20))
ASCII_PUNCT = _r((0x21, 0x2F), (0x3A, 0x40), (0x5B, 0x60), (0x7B, 0x7E))
ASCII_GRAPH = union(ASCII_PUNCT, ASCII_ALNUM)
ASCII_CNTRL = _r((0x00, 0x1F), (0x7F, 0x7F))
ASCII_XDIGIT = _r((0x30, 0x39), (0x41, 0x46), (0x61, 0x66))
ASCII_BLANK = _c(" \t")
VERT_WS = _r((0x0A, 0x0D), (0x85, 0x85), (0x2028, 0x2029))
HORIZ_WS = _r((0x09, 0x09), (0x20, 0x20), (0xA0, 0xA0), (0x1680, 0x1680), (0x180E, 0x180E),
              (0x2000, 0x200A), (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000))
LINE_TERMINATORS = _r((0x0A, 0x0A), (0x0D, 0x0D), (0x85, 0x85), (0x2028, 0x2029))
