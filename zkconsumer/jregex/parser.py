"""A ``java.util.regex.Pattern`` parser that emits an equivalent pattern for the ``regex`` package.

The parser follows Java 17's ``Pattern`` construct by construct (``expr``, ``sequence``, ``atom``,
``escape``, ``clazz``, ``range``, ``family``, ``group0``, ``closure``, the ``\\Q..\\E`` pre-pass
and the cursor rules of ``COMMENTS`` mode), so it accepts and rejects the same strings. What it
emits never relies on Python's own reading of a construct: every character class, including
case-insensitive literals, ``.``, ``\\w`` and ``\\p{..}``, is emitted as an explicit set of code
point ranges computed from Java 17's Unicode tables; anchors and ``\\b`` are emitted as the
lookarounds that decide what Java's nodes decide; quantifiers, groups, atomic groups and
lookarounds map one to one. Lookbehind follows Java's ``TreeInfo`` study (32-bit arithmetic
included) to decide both whether it compiles and the lengths it tries.
"""

from __future__ import annotations

import functools

from zkconsumer.jregex import charset as cs
from zkconsumer.jregex import properties as props
from zkconsumer.jregex.charset import Ranges
from zkconsumer.jregex.classes import ClassParser, evaluate
from zkconsumer.jregex.cursor import (
    CANON_EQ,
    CASE_INSENSITIVE,
    COMMENTS,
    DOTALL,
    MULTILINE,
    UNICODE_CASE,
    UNICODE_CHARACTER_CLASS,
    UNIX_LINES,
)
from zkconsumer.jregex.study import MAX_REPS, Info, Node


def _lit(c: int) -> str:
    """One code point as the ``regex`` package reads it literally, in or out of a set."""
    if (0x30 <= c <= 0x39) or (0x41 <= c <= 0x5A) or (0x61 <= c <= 0x7A) \
            or (c > 0xA0 and not 0xD800 <= c <= 0xDFFF and c not in (0x2028, 0x2029)):
        return chr(c)
    return f"\\U{c:08x}"


def _set_text(s: Ranges) -> str:
    if not s:
        return "(?!)"
    if len(s) == 1 and s[0][0] == s[0][1]:
        return _lit(s[0][0])
    parts = []
    for lo, hi in s:
        parts.append(_lit(lo) if lo == hi else f"{_lit(lo)}-{_lit(hi)}")
    return "[" + "".join(parts) + "]"


def char_node(s: Ranges) -> Node:
    return Node(_set_text(s), "char")


_LT = "[\\n\\r\\x85\\u2028\\u2029]"
_ANCHORS = {
    "begin": "\\A",
    "end": "\\Z",
    "caret": "(?!\\Z)(?:\\A|(?<=[\\n\\x85\\u2028\\u2029])|(?<=\\r)(?!\\n))",
    "unix_caret": "(?!\\Z)(?:\\A|(?<=\\n))",
    "dollar": "(?:\\Z|(?=\\r\\n\\Z)|(?=[\\r\\x85\\u2028\\u2029]\\Z)|(?<!\\r)(?=\\n\\Z))",
    "dollar_m": "(?:\\Z|(?<!\\r)(?=\\n)|(?=[\\r\\x85\\u2028\\u2029]))",
    "unix_dollar": "(?:\\Z|(?=\\n\\Z))",
    "unix_dollar_m": "(?:\\Z|(?=\\n))",
    "last_match": "\\G",
}


#: Counts above this are emitted as this (``regex`` unrolls counts; a larger one exhausts memory).
#: The answer differs from Java's only for names longer than this many characters.
COUNT_CAP = 100_000


def _count_text(cmin: int, cmax: int) -> str:
    lo = min(cmin, COUNT_CAP)
    if cmax == MAX_REPS or cmax > COUNT_CAP:
        return f"{{{lo},}}"
    return f"{{{lo}}}" if lo == cmax else f"{{{lo},{cmax}}}"


@functools.lru_cache(maxsize=2)
def _bound_texts(unicode_class: bool) -> tuple[str, str]:
    """Java 17's ``Bound``: word chars, and non-spacing marks that follow a letter or digit."""
    if unicode_class:
        word = _set_text(props.word())
    else:
        word = _set_text(cs.union(cs.category("Lu", "Ll", "Lt", "Lm", "Lo", "Nd"), ((95, 95),)))
    base = _set_text(cs.category("Lu", "Ll", "Lt", "Lm", "Lo", "Nd"))
    mn = _set_text(cs.category("Mn"))
    left = f"(?:(?<={word})|(?<={base}{mn}+))"
    right = f"(?:(?={word})|(?={mn})(?<={base}{mn}*))"
    return left, right


class Parser(ClassParser):
    """One ``Pattern.compile(regex)`` with no flags: produces the ``regex`` package's text."""

    def __init__(self, pattern: str) -> None:
        super().__init__(pattern)
        self.group_count = 1
        self.named: dict[str, int] = {}
        self.root: Node | None = None
        self.predicate: Ranges | None = None
        self.max_ref = 0

    def char_node(self, s: Ranges) -> Node:
        return char_node(s)

    # ---- structure
    def compile(self) -> str:
        node = self.expr()
        if self.length != self.cursor:
            if self.peek() == 0x29:
                raise self.error("Unmatched closing ')'")
            raise self.error("Unexpected internal error")
        text = node.text
        # A back reference to a group the pattern does not have never matches (Java's
        # CIBackRef/BackRef check the group array's size).
        for n in range(self.max_ref, 0, -1):
            if n >= self.group_count:
                text = text.replace(f"\\g<{n}>", "(?!)")
        return text

    def expr(self) -> Node:
        alts = [self.sequence()]
        while self.peek() == 0x7C:
            self.next()
            alts.append(self.sequence())
        if len(alts) == 1:
            return alts[0]
        return Node("(?:" + "|".join(a.text for a in alts) + ")", "branch", parts=tuple(alts))

    def sequence(self) -> Node:  # noqa: C901 - mirrors Pattern.sequence
        parts: list[Node] = []
        while True:
            ch = self.peek()
            if ch == 0x28:
                node = self.group0()
                if node is not None:
                    parts.append(node)
                continue
            if ch == 0x5B:
                node = char_node(evaluate(self.clazz(True)))
            elif ch == 0x5C:
                ch = self.next_escaped()
                if ch in (0x70, 0x50):
                    node = char_node(self.family_after_p(ch == 0x50))
                else:
                    self.unread()
                    node = self.atom()
            elif ch == 0x5E:
                self.next()
                kind = ("unix_caret" if self.has(UNIX_LINES) else "caret") \
                    if self.has(MULTILINE) else "begin"
                node = Node(_ANCHORS[kind])
            elif ch == 0x24:
                self.next()
                kind = "unix_dollar" if self.has(UNIX_LINES) else "dollar"
                node = Node(_ANCHORS[kind + ("_m" if self.has(MULTILINE) else "")])
            elif ch == 0x2E:
                self.next()
                if self.has(DOTALL):
                    node = char_node(cs.ALL)
                elif self.has(UNIX_LINES):
                    node = char_node(cs.negate(((10, 10),)))
                else:
                    node = char_node(cs.negate(cs.LINE_TERMINATORS))
            elif ch in (0x7C, 0x29):
                break
            elif ch in (0x3F, 0x2A, 0x2B):
                self.next()
                raise self.error(f"Dangling meta character '{chr(ch)}'")
            elif ch == 0 and self.cursor >= self.length:
                break
            else:
                node = self.atom()
            parts.append(self.closure(node))
        if len(parts) == 1:
            return parts[0]
        return Node("".join(p.text for p in parts), "seq", parts=tuple(parts))

    def atom(self) -> Node:
        ch = self.peek()
        if ch in (0x2A, 0x2B, 0x3F, 0x7B) or (ch == 0 and self.cursor >= self.length):
            return Node("(?:)", "slice", 0)
        if ch == 0x5C:
            ch = self.next_escaped()
            if ch in (0x70, 0x50):
                return char_node(self.family_after_p(ch == 0x50))
            self.unread()
            v = self.escape(False, True, False)
            if v >= 0:
                return self.literal(v)
            assert self.root is not None
            return self.root
        self.next()
        return self.literal(ch)

    def literal(self, ch: int) -> Node:
        return char_node(self.single(ch))

    def ref(self, ref_num: int) -> Node:
        while True:
            ch = self.peek()
            if 0x30 <= ch <= 0x39:
                new = ref_num * 10 + (ch - 0x30)
                if self.group_count - 1 < new:
                    break
                ref_num = new
                self.read()
            else:
                break
        return self.backref(ref_num)

    def backref(self, n: int) -> Node:
        self.max_ref = max(self.max_ref, n)
        text = f"\\g<{n}>"
        if self.has(CASE_INSENSITIVE):
            text = f"(?i:{text})" if self.has(UNICODE_CASE) else f"(?ai:{text})"
        return Node(f"(?:{text})", "backref")

    def anchor_escape(self, c: str) -> Node | None:
        """``\\A \\B \\G \\R \\X \\Z \\b \\z`` outside a class."""
        if c == "A":
            return Node(_ANCHORS["begin"])
        if c == "G":
            return Node(_ANCHORS["last_match"])
        if c == "z":
            return Node(_ANCHORS["end"])
        if c == "Z":
            return Node(_ANCHORS["unix_dollar" if self.has(UNIX_LINES) else "dollar"])
        if c == "R":
            return Node("(?:\\r\\n|[\\n\\x0b\\x0c\\r\\x85\\u2028\\u2029])", "linebreak")
        if c == "X":
            return Node("\\X", "grapheme")
        if c == "b" and self.peek() == 0x7B:
            if self.skip() == 0x67:
                if self.read() == 0x7D:
                    return Node("(?:\\A|\\Z|(?<=\\A\\X+)(?=\\X))")
                return None
            self.unread()
            self.unread()
        left, right = _bound_texts(self.has(UNICODE_CHARACTER_CLASS))
        boundary = f"(?:{left}(?!{right})|(?!{left}){right})"
        return Node(boundary if c == "b" else f"(?!{boundary})")

    # ---- groups and flags
    def group0(self) -> Node | None:  # noqa: C901 - mirrors Pattern.group0
        save = self.flags
        self.root = None
        kind = "group"
        ch = self.next()
        if ch == 0x3F:
            ch = self.skip()
            if ch == 0x3A:
                body = self.expr()
                node = Node(f"(?:{body.text})", "seq", parts=(body,))
            elif ch in (0x3D, 0x21):
                body = self.expr()
                node = Node(f"(?{chr(ch)}{body.text})")
                kind = "assertion"
            elif ch == 0x3E:
                body = self.expr()
                node = Node(f"(?>{body.text})", "independent", parts=(body,))
                kind = "assertion"
            elif ch == 0x3C:
                ch = self.read()
                if ch not in (0x3D, 0x21):
                    name = self.groupname(ch)
                    if name in self.named:
                        raise self.error(f"Named capturing group <{name}> is already defined")
                    self.named[name] = self.group_count
                    self.group_count += 1
                    body = self.expr()
                    node = Node(f"({body.text})", "seq", parts=(body,))
                else:
                    body = self.expr()
                    node = self.lookbehind(body, ch == 0x3D)
                    kind = "assertion"
            elif ch in (0x24, 0x40):
                raise self.error("Unknown group type")
            else:
                self.unread()
                self.add_flag()
                ch = self.read()
                if ch == 0x29:
                    return None
                if ch != 0x3A:
                    raise self.error("Unknown inline modifier")
                body = self.expr()
                node = Node(f"(?:{body.text})", "seq", parts=(body,))
        else:
            self.group_count += 1
            body = self.expr()
            node = Node(f"({body.text})", "seq", parts=(body,))
        self.accept(0x29, "Unclosed group")
        self.flags = save
        return self.closure(node, kind)

    def lookbehind(self, body: Node, positive: bool) -> Node:
        info = Info()
        body.study(info)
        if not info.max_valid:
            raise self.error("Look-behind group does not have an obvious maximum length")
        if info.max < info.min or info.max < 0:  # Java tries no start position at all
            return Node("(?!)" if positive else "(?:)")
        return Node(f"(?<{'=' if positive else '!'}{body.text})")

    def add_flag(self) -> None:
        ch = self.peek()
        table = {0x69: CASE_INSENSITIVE, 0x6D: MULTILINE, 0x73: DOTALL, 0x64: UNIX_LINES,
                 0x75: UNICODE_CASE, 0x63: CANON_EQ, 0x78: COMMENTS,
                 0x55: UNICODE_CHARACTER_CLASS | UNICODE_CASE}
        while True:
            if ch in table:
                self.flags |= table[ch]
            elif ch == 0x2D:
                self.next()
                while True:
                    ch = self.peek()
                    if ch not in table:
                        return
                    self.flags &= ~table[ch]
                    self.next()
            else:
                return
            ch = self.next()

    # ---- quantifiers
    def qtype(self) -> str:
        ch = self.next()
        if ch == 0x3F:
            self.next()
            return "?"
        if ch == 0x2B:
            self.next()
            return "+"
        return ""

    def quantifier(self) -> tuple[int, int, str, str] | None:
        """The closure after an atom: (min, max, emitted quantifier, type suffix)."""
        ch = self.peek()
        if ch == 0x3F:
            return 0, 1, "?", self.qtype()
        if ch == 0x2A:
            return 0, MAX_REPS, "*", self.qtype()
        if ch == 0x2B:
            return 1, MAX_REPS, "+", self.qtype()
        if ch != 0x7B:
            return None
        ch = self.skip()
        if not 0x30 <= ch <= 0x39:
            raise self.error("Illegal repetition")
        cmin, cmax = 0, 0
        while True:
            cmin = cmin * 10 + ch - 0x30
            if cmin > MAX_REPS:
                raise self.error("Illegal repetition range")
            ch = self.read()
            if not 0x30 <= ch <= 0x39:
                break
        if ch == 0x2C:
            ch = self.read()
            if ch == 0x7D:
                self.unread()
                return cmin, MAX_REPS, _count_text(cmin, MAX_REPS), self.qtype()
            while 0x30 <= ch <= 0x39:
                cmax = cmax * 10 + ch - 0x30
                if cmax > MAX_REPS:
                    raise self.error("Illegal repetition range")
                ch = self.read()
        else:
            cmax = cmin
        if ch != 0x7D:
            raise self.error("Unclosed counted closure")
        if cmax < cmin:
            raise self.error("Illegal repetition range")
        self.unread()
        return cmin, cmax, _count_text(cmin, cmax), self.qtype()

    def closure(self, node: Node, kind: str = "atom") -> Node:
        q = self.quantifier()
        if q is None:
            return node
        cmin, cmax, text, suffix = q
        out = f"(?:{node.text}){text}{suffix}"
        if cmin == 0 and cmax == 1:
            if kind == "group" and suffix != "+":
                return Node(out, "branch", parts=(node, None))
            return Node(out, "ques", parts=(node,))
        if kind == "atom" and node.kind == "char" and cmax == MAX_REPS and suffix == "":
            return Node(out, "greedy", cmin)
        if kind == "group" and suffix != "+":
            sub = Info()
            node.study(sub)
            if not sub.det:
                return Node(out, "loop")
        return Node(out, "curly", cmin, cmax, parts=(node,))
