"""The cursor of Java's ``Pattern`` parser: its peek/read/next rules and the ``\\Q..\\E`` pre-pass.

Kept apart so the structure parser reads like Java's: every primitive moves the cursor exactly as
``Pattern`` does, including the whitespace and ``#`` comments ``COMMENTS`` mode skips, because
which strings compile depends on those details.
"""

from __future__ import annotations

UNIX_LINES, CASE_INSENSITIVE, COMMENTS, MULTILINE = 0x01, 0x02, 0x04, 0x08
DOTALL, UNICODE_CASE, CANON_EQ, UNICODE_CHARACTER_CLASS = 0x20, 0x40, 0x80, 0x100


class JavaSyntaxError(Exception):
    """``PatternSyntaxException``: a description and the index Java reports."""

    def __init__(self, description: str, index: int) -> None:
        super().__init__(f"{description} near index {index}")
        self.description = description
        self.index = index


class Cursor:
    """The pattern as code points with Java's two trailing zeros, and a cursor over it."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.temp = [ord(c) for c in pattern]
        self.length = len(self.temp)
        self._remove_qe_quoting()
        self.temp += [0, 0]
        self.cursor = 0
        self.flags = 0

    def error(self, desc: str) -> JavaSyntaxError:
        return JavaSyntaxError(desc, self.cursor - 1)

    def has(self, f: int) -> bool:
        return bool(self.flags & f)

    def _is_space(self, ch: int) -> bool:
        return ch in (0x20, 0x09, 0x0A, 0x0B, 0x0C, 0x0D)

    def _is_line_sep(self, ch: int) -> bool:
        if self.has(UNIX_LINES):
            return ch == 0x0A
        return ch in (0x0A, 0x0D, 0x85, 0x2028, 0x2029)

    def _peek_past_ws(self, ch: int) -> int:
        while self._is_space(ch) or ch == 0x23:
            while self._is_space(ch):
                self.cursor += 1
                ch = self.temp[self.cursor]
            if ch == 0x23:
                ch = self._peek_past_line()
        return ch

    def _parse_past_ws(self, ch: int) -> int:
        while self._is_space(ch) or ch == 0x23:
            while self._is_space(ch):
                ch = self.temp[self.cursor]
                self.cursor += 1
            if ch == 0x23:
                ch = self._parse_past_line()
        return ch

    def _parse_past_line(self) -> int:
        ch = self.temp[self.cursor]
        self.cursor += 1
        while ch != 0 and not self._is_line_sep(ch):
            ch = self.temp[self.cursor]
            self.cursor += 1
        if ch == 0 and self.cursor > self.length:
            self.cursor = self.length
            ch = self.temp[self.cursor]
            self.cursor += 1
        return ch

    def _peek_past_line(self) -> int:
        self.cursor += 1
        ch = self.temp[self.cursor]
        while ch != 0 and not self._is_line_sep(ch):
            self.cursor += 1
            ch = self.temp[self.cursor]
        if ch == 0 and self.cursor > self.length:
            self.cursor = self.length
            ch = self.temp[self.cursor]
        return ch

    def peek(self) -> int:
        ch = self.temp[self.cursor]
        return self._peek_past_ws(ch) if self.has(COMMENTS) else ch

    def read(self) -> int:
        ch = self.temp[self.cursor]
        self.cursor += 1
        return self._parse_past_ws(ch) if self.has(COMMENTS) else ch

    def next(self) -> int:
        self.cursor += 1
        ch = self.temp[self.cursor]
        return self._peek_past_ws(ch) if self.has(COMMENTS) else ch

    def next_escaped(self) -> int:
        self.cursor += 1
        return self.temp[self.cursor]

    def skip(self) -> int:
        ch = self.temp[self.cursor + 1]
        self.cursor += 2
        return ch

    def unread(self) -> None:
        self.cursor -= 1

    def accept(self, ch: int, desc: str) -> None:
        test = self.temp[self.cursor]
        self.cursor += 1
        if self.has(COMMENTS):
            test = self._parse_past_ws(test)
        if ch != test:
            raise self.error(desc)

    # ---- \Q..\E pre-pass (Pattern.RemoveQEQuoting)
    def _remove_qe_quoting(self) -> None:
        t, n, i = self.temp, self.length, 0
        while i < n - 1:
            if t[i] != 0x5C:
                i += 1
            elif t[i + 1] != 0x51:
                i += 2
            else:
                break
        if i >= n - 1:
            return
        out = t[:i]
        i += 2
        in_quote, begin_quote = True, True
        while i < n:
            c = t[i]
            i += 1
            if c >= 128 or (0x41 <= c <= 0x5A) or (0x61 <= c <= 0x7A):
                out.append(c)
            elif 0x30 <= c <= 0x39:
                if begin_quote:
                    out += [0x5C, 0x78, 0x33]
                out.append(c)
            elif c != 0x5C:
                if in_quote:
                    out.append(0x5C)
                out.append(c)
            elif in_quote:
                if i < n and t[i] == 0x45:
                    i += 1
                    in_quote = False
                else:
                    out += [0x5C, 0x5C]
            else:
                if i < n and t[i] == 0x51:
                    i += 1
                    in_quote, begin_quote = True, True
                    continue
                out.append(c)
                if i != n:
                    out.append(t[i])
                    i += 1
            begin_quote = False
        self.temp, self.length = out, len(out)

