"""Java's ``TreeInfo`` study of a pattern node: what decides whether a lookbehind compiles.

Java accepts a lookbehind only when its study finds an "obvious maximum length", and then tries
exactly the lengths from the studied minimum to the studied maximum. The study's arithmetic is
32-bit and some nodes (``x*`` on one character, ``\\X``) under-report, so which lookbehinds
compile, and what they match, follows these rules rather than the body's true lengths.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_REPS = 0x7FFFFFFF
_I32 = 1 << 32


def _i32(v: int) -> int:
    v %= _I32
    return v - _I32 if v >= 1 << 31 else v


@dataclass
class Info:
    """Java's ``TreeInfo``: what a lookbehind's body may span."""

    min: int = 0
    max: int = 0
    max_valid: bool = True
    det: bool = True


class Node:
    """Emitted text plus the effect its Java node has on a ``TreeInfo`` study."""

    __slots__ = ("text", "kind", "a", "b", "parts")

    def __init__(self, text: str, kind: str = "zero", a: int = 0, b: int = 0,
                 parts: tuple = ()) -> None:
        self.text, self.kind, self.a, self.b, self.parts = text, kind, a, b, parts

    def study(self, info: Info) -> None:  # noqa: C901 - one case per Java node kind
        k = self.kind
        if k == "char":
            info.min, info.max = _i32(info.min + 1), _i32(info.max + 1)
        elif k == "slice":
            info.min, info.max = _i32(info.min + self.a), _i32(info.max + self.a)
        elif k == "linebreak":
            info.min, info.max = _i32(info.min + 1), _i32(info.max + 2)
        elif k == "grapheme":
            info.min, info.det = _i32(info.min + 1), False
        elif k == "backref":
            info.max_valid = False
        elif k == "seq":
            for p in self.parts:
                p.study(info)
        elif k == "branch":
            mins, maxs, valid = [], [], info.max_valid
            for alt in self.parts:
                sub = Info()
                if alt is not None:
                    alt.study(sub)
                mins.append(sub.min)
                maxs.append(sub.max)
                valid = valid and sub.max_valid
            info.min = _i32(info.min + min(mins))
            info.max = _i32(info.max + max(maxs))
            info.max_valid, info.det = valid, False
        elif k == "greedy":  # CharPropertyGreedy: x* / x+ on one character
            info.min = _i32(info.min + self.a)
            if info.max_valid:
                info.max = _i32(info.max + MAX_REPS)
            info.det = False
        elif k == "ques":
            saved = info.min
            self.parts[0].study(info)
            info.min, info.det = saved, False
        elif k == "independent":
            self.parts[0].study(info)
        elif k == "curly":
            _curly_study(info, self.parts[0], self.a, self.b)
        elif k == "loop":
            info.max_valid, info.det = False, False


def _curly_study(info: Info, atom: Node, cmin: int, cmax: int) -> None:
    min_l, max_l, max_v, detm = info.min, info.max, info.max_valid, info.det
    sub = Info()
    atom.study(sub)
    temp = _i32(sub.min * cmin + min_l)
    info.min = 0xFFFFFFF if temp < min_l else temp
    info.max_valid = sub.max_valid
    if max_v and sub.max_valid:
        temp = _i32(sub.max * cmax + max_l)
        info.max = temp
        if temp < max_l:
            info.max_valid = False
    else:
        info.max_valid = False
        info.max = sub.max
    info.det = detm if (sub.det and cmin == cmax) else False


