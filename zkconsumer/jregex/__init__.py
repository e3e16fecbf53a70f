"""Java's regex dialect (``java.util.regex.Pattern``) on Python's ``regex`` package.

``compile_java(pattern)`` accepts exactly the patterns ``Pattern.compile`` accepts (raising
:class:`JavaSyntaxError` with Java's description otherwise) and returns a compiled pattern whose
``fullmatch`` answers what Java's ``Matcher.matches()`` answers.
"""

from __future__ import annotations

import functools

import regex

from zkconsumer.jregex.cursor import JavaSyntaxError
from zkconsumer.jregex.parser import Parser

__all__ = ["JavaSyntaxError", "compile_java", "translate"]


def translate(pattern: str) -> str:
    """The ``regex`` package's text for a Java pattern; raises :class:`JavaSyntaxError`."""
    try:
        return Parser(pattern).compile()
    except IndexError:
        # Java's parser reads its zero sentinels here and fails on what follows them.
        raise JavaSyntaxError("Unexpected end of pattern", len(pattern)) from None


@functools.lru_cache(maxsize=256)
def compile_java(pattern: str) -> regex.Pattern:
    return regex.compile(translate(pattern), regex.V0)
