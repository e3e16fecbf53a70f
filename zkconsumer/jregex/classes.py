"""Escapes, character classes and ``\\p{..}`` families as Java's ``Pattern`` parses them.

Java builds a class from predicates that close over a mutable bit set (characters below 256 are
gathered in it while the class is read, and an intersection may capture it before more are
added). The parser keeps that shape: a class is an expression tree over :class:`Bits` objects,
evaluated to code point ranges only when the outermost class is complete.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field

from zkconsumer.jregex import charset as cs
from zkconsumer.jregex import properties as props
from zkconsumer.jregex.charset import Ranges
from zkconsumer.jregex.cursor import (
    CASE_INSENSITIVE,
    UNICODE_CASE,
    UNICODE_CHARACTER_CLASS,
    Cursor,
)

_UNICODE_FOLD_EXCEPTIONS = frozenset({0xFF, 0xB5, 0x49, 0x69, 0x53, 0x73, 0x4B, 0x6B, 0xC5, 0xE5})


@dataclass(eq=False)
class Bits:
    """Java's ``BitClass``: characters below 256, shared by reference."""

    chars: set[int] = field(default_factory=set)

    def add(self, c: int, flags: int) -> None:
        if flags & CASE_INSENSITIVE:
            if c < 128:
                self.chars.update((cs.ascii_upper(c), cs.ascii_lower(c)))
            elif flags & UNICODE_CASE:
                self.chars.update((cs.to_lower(c), cs.to_upper(c)))
        self.chars.add(c)


# A predicate: Ranges, a Bits, or ("or"|"and", a, b) / ("not", a).
Pred = object


def evaluate(p: Pred) -> Ranges:
    if isinstance(p, Bits):
        return cs.of_chars(c for c in p.chars if c < 256)
    if isinstance(p, tuple) and p and isinstance(p[0], str):
        if p[0] == "not":
            return cs.negate(evaluate(p[1]))
        a, b = evaluate(p[1]), evaluate(p[2])
        return cs.union(a, b) if p[0] == "or" else cs.intersect(a, b)
    return p  # type: ignore[return-value]


def _hex(c: int) -> bool:
    return 0x30 <= c <= 0x39 or 0x41 <= c <= 0x46 or 0x61 <= c <= 0x66


def _hexval(c: int) -> int:
    return int(chr(c), 16)


class ClassParser(Cursor):
    """``escape``, ``clazz``, ``range`` and ``family`` of Java's ``Pattern``."""

    predicate: Ranges | None
    root: object

    def single(self, ch: int) -> Ranges:
        """``Pattern.single``: one character under the current case flags."""
        if self.has(CASE_INSENSITIVE):
            if self.has(UNICODE_CASE):
                upper = cs.to_upper(ch)
                lower = cs.to_lower(upper)
                if upper != lower:
                    return cs.single_u(lower)
            elif ch < 128:
                lo, up = cs.ascii_lower(ch), cs.ascii_upper(ch)
                if lo != up:
                    return cs.of_chars((lo, up))
        return ((ch, ch),)

    # ---- numeric escapes
    def octal(self) -> int:
        n = self.read()
        if 0x30 <= n <= 0x37:
            m = self.read()
            if 0x30 <= m <= 0x37:
                o = self.read()
                if 0x30 <= o <= 0x37 and 0x30 <= n <= 0x33:
                    return (n - 0x30) * 64 + (m - 0x30) * 8 + (o - 0x30)
                self.unread()
                return (n - 0x30) * 8 + (m - 0x30)
            self.unread()
            return n - 0x30
        raise self.error("Illegal octal escape sequence")

    def hexa(self) -> int:
        n = self.read()
        if _hex(n):
            m = self.read()
            if _hex(m):
                return _hexval(n) * 16 + _hexval(m)
        elif n == 0x7B and _hex(self.peek()):
            ch = 0
            while True:
                n = self.read()
                if not _hex(n):
                    break
                ch = (ch << 4) + _hexval(n)
                if ch > 0x10FFFF:
                    raise self.error("Hexadecimal codepoint is too big")
            if n != 0x7D:
                raise self.error("Unclosed hexadecimal escape sequence")
            return ch
        raise self.error("Illegal hexadecimal escape sequence")

    def _uxxxx(self) -> int:
        n = 0
        for _ in range(4):
            ch = self.read()
            if not _hex(ch):
                raise self.error("Illegal Unicode escape sequence")
            n = n * 16 + _hexval(ch)
        return n

    def unicode(self) -> int:
        n = self._uxxxx()
        if 0xD800 <= n <= 0xDBFF:
            cur = self.cursor
            if self.read() == 0x5C and self.read() == 0x75:
                n2 = self._uxxxx()
                if 0xDC00 <= n2 <= 0xDFFF:
                    return 0x10000 + ((n - 0xD800) << 10) + (n2 - 0xDC00)
            self.cursor = cur
        return n

    def named_char(self) -> int:
        if self.read() == 0x7B:
            i = self.cursor
            while self.read() != 0x7D:
                if self.cursor >= self.length:
                    raise self.error("Unclosed character name escape sequence")
            name = "".join(chr(c) for c in self.temp[i:self.cursor - 1])
            key = name.strip("".join(chr(c) for c in range(0x21))).upper()
            try:
                value = unicodedata.lookup(key)
            except KeyError:
                value = ""
            if len(value) != 1 or unicodedata.name(value, "") != key:
                raise self.error(f"Unknown character name [{name}]")
            return ord(value)
        raise self.error("Illegal character name escape sequence")

    def control(self) -> int:
        if self.cursor < self.length:
            return self.read() ^ 64
        raise self.error("Illegal control escape sequence")

    # ---- escape
    def _pred(self, s: Ranges, inclass: bool, create: bool) -> int:
        if create:
            self.predicate = s
            if not inclass:
                self.root = self.char_node(s)
        return -1

    def escape(self, inclass: bool, create: bool, isrange: bool) -> int:  # noqa: C901
        ch = self.skip()
        c = chr(ch) if ch < 0x110000 else ""
        uclass = self.has(UNICODE_CHARACTER_CLASS)
        if c == "0":
            return self.octal()
        if c in "123456789" and c:
            if not inclass:
                if create:
                    self.root = self.ref(ch - 0x30)
                return -1
        elif c in "dD" and c:
            s = props.digit() if uclass else cs.ASCII_DIGIT
            return self._pred(cs.negate(s) if c == "D" else s, inclass, create)
        elif c in "sS" and c:
            s = props.white_space() if uclass else cs.ASCII_SPACE
            return self._pred(cs.negate(s) if c == "S" else s, inclass, create)
        elif c in "wW" and c:
            s = props.word() if uclass else cs.ASCII_WORD
            return self._pred(cs.negate(s) if c == "W" else s, inclass, create)
        elif c in "hH" and c:
            return self._pred(cs.negate(cs.HORIZ_WS) if c == "H" else cs.HORIZ_WS, inclass, create)
        elif c == "v" and isrange:
            return 0x0B
        elif c in "vV" and c:
            return self._pred(cs.negate(cs.VERT_WS) if c == "V" else cs.VERT_WS, inclass, create)
        elif c in "ABGRXZbz" and c:
            if not inclass:
                if create:
                    self.root = self.anchor_escape(c)
                    if self.root is None:  # \b{ without g}
                        raise self.error("Illegal/unsupported escape sequence")
                return -1
        elif c == "N":
            return self.named_char()
        elif c == "k":
            if not inclass:
                if self.read() != 0x3C:
                    raise self.error("\\k is not followed by '<' for named capturing group")
                name = self.groupname(self.read())
                if name not in self.named:  # type: ignore[attr-defined]
                    raise self.error(f"named capturing group <{name}> does not exist")
                if create:
                    self.root = self.backref(self.named[name])  # type: ignore[attr-defined]
                return -1
        elif c == "a":
            return 7
        elif c == "c":
            return self.control()
        elif c == "e":
            return 0x1B
        elif c == "f":
            return 0x0C
        elif c == "n":
            return 0x0A
        elif c == "r":
            return 0x0D
        elif c == "t":
            return 0x09
        elif c == "u":
            return self.unicode()
        elif c == "x":
            return self.hexa()
        elif not (c.isascii() and c.isalpha()) or not c:
            return ch
        raise self.error("Illegal/unsupported escape sequence")

    def groupname(self, ch: int) -> str:
        if not (ch < 128 and chr(ch).isalpha()):
            raise self.error("capturing group name does not start with a Latin letter")
        out = []
        while True:
            out.append(chr(ch))
            ch = self.read()
            if not (ch < 128 and chr(ch).isalnum()):
                break
        if ch != 0x3E:
            raise self.error("named capturing group is missing trailing '>'")
        return "".join(out)

    # ---- classes
    def clazz(self, consume: bool) -> Pred:  # noqa: C901 - mirrors Pattern.clazz
        prev: Pred | None = None
        curr: Pred | None = None
        bits = Bits()
        is_neg, has_bits = False, False
        ch = self.next()
        if ch == 0x5E and self.temp[self.cursor - 1] == 0x5B:
            ch = self.next()
            is_neg = True
        while True:
            if ch == 0x5B:
                curr = self.clazz(True)
                prev = curr if prev is None else ("or", prev, curr)
                ch = self.peek()
                continue
            if ch == 0x26:
                ch = self.next()
                if ch == 0x26:
                    ch = self.next()
                    right: Pred | None = None
                    while ch not in (0x5D, 0x26):
                        if ch == 0x5B:
                            sub = self.clazz(True)
                        else:
                            self.unread()
                            sub = self.clazz(False)
                        right = sub if right is None else ("or", right, sub)
                        ch = self.peek()
                    if has_bits:
                        if prev is None:
                            prev = curr = bits
                        else:
                            prev = ("or", prev, bits)
                        has_bits = False
                    if right is not None:
                        curr = right
                    if prev is None:
                        if right is None:
                            raise self.error("Bad class syntax")
                        prev = right
                    else:
                        if curr is None:
                            raise self.error("Bad intersection syntax")
                        prev = ("and", prev, curr)
                    continue
                self.unread()
            elif ch == 0 and self.cursor >= self.length:
                raise self.error("Unclosed character class")
            elif ch == 0x5D and (prev is not None or has_bits):
                if consume:
                    self.next()
                if prev is None:
                    prev = bits
                elif has_bits:
                    prev = ("or", prev, bits)
                return ("not", prev) if is_neg else prev
            curr = self.range(bits)
            if curr is None:
                has_bits = True
            elif prev is None:
                prev = curr
            elif prev is not curr:
                prev = ("or", prev, curr)
            ch = self.peek()

    def bits_or_single(self, bits: Bits, ch: int) -> Pred | None:
        if ch < 256 and not (self.has(CASE_INSENSITIVE) and self.has(UNICODE_CASE)
                             and ch in _UNICODE_FOLD_EXCEPTIONS):
            bits.add(ch, self.flags)
            return None
        return self.single(ch)

    def range(self, bits: Bits) -> Pred | None:
        ch = self.peek()
        if ch == 0x5C:
            ch = self.next_escaped()
            if ch in (0x70, 0x50):
                return self.family_after_p(ch == 0x50)
            isrange = self.temp[self.cursor + 1] == 0x2D
            self.unread()
            ch = self.escape(True, True, isrange)
            if ch == -1:
                return self.predicate
        else:
            self.next()
        if ch >= 0:
            if self.peek() == 0x2D:
                end_range = self.temp[self.cursor + 1]
                if end_range == 0x5B:
                    return self.bits_or_single(bits, ch)
                if end_range != 0x5D:
                    self.next()
                    m = self.peek()
                    if m == 0x5C:
                        m = self.escape(True, False, True)
                    else:
                        self.next()
                    if m < ch:
                        raise self.error("Illegal character range")
                    if self.has(CASE_INSENSITIVE):
                        return cs.ci_range_u(ch, m) if self.has(UNICODE_CASE) \
                            else cs.ci_range(ch, m)
                    return ((ch, m),)
            return self.bits_or_single(bits, ch)
        raise self.error(f"Unexpected character '{chr(ch)}'")

    # ---- \p{..}
    def family_after_p(self, complement: bool) -> Ranges:
        """After ``\\p``/``\\P``: consumes an optional ``{`` and reads the family."""
        one_letter = True
        ch = self.next()
        if ch != 0x7B:
            self.unread()
        else:
            one_letter = False
        return self.family(one_letter, complement)

    def family(self, single_letter: bool, complement: bool) -> Ranges:  # noqa: C901
        self.next()
        if single_letter:
            name = chr(self.temp[self.cursor])
            self.read()
        else:
            i = self.cursor
            self.temp[self.length] = 0x7D
            while self.read() != 0x7D:
                pass
            self.temp[self.length] = 0
            j = self.cursor
            if j > self.length:
                raise self.error("Unclosed character family")
            if i + 1 >= j:
                raise self.error("Empty character family")
            name = "".join(chr(c) for c in self.temp[i:j - 1])
        ci = self.has(CASE_INSENSITIVE)
        p: Ranges | None = None
        if "=" in name:
            key, value = name.split("=", 1)
            key = key.lower()
            if key in ("sc", "script"):
                p = cs.script(value)
            elif key in ("blk", "block"):
                p = cs.block(value)
            elif key in ("gc", "general_category"):
                p = props.java_property(value, ci)
            if p is None:
                raise self.error(f"Unknown Unicode property {{name=<{key}>, value=<{value}>}}")
        else:
            if name.startswith("In"):
                p = cs.block(name[2:])
            elif name.startswith("Is"):
                short = name[2:]
                p = props.unicode_property(short, ci)
                if p is None:
                    p = props.java_property(short, ci)
                if p is None:
                    p = cs.script(short)
            else:
                if self.has(UNICODE_CHARACTER_CLASS):
                    p = props.posix(name, ci)
                if p is None:
                    p = props.java_property(name, ci)
            if p is None:
                raise self.error(f"Unknown character property name {{{name}}}")
        return cs.negate(p) if complement else p
