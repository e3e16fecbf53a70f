"""The ``\\p{..}`` names of ``java.util.regex`` (``CharPredicates`` of Java 17) as character sets.

Three tables, looked up in the order ``Pattern.family`` uses: Unicode binary properties and
POSIX names for ``\\p{IsXxx}`` / ``UNICODE_CHARACTER_CLASS``, then the general categories,
ASCII POSIX classes and ``javaXxx`` methods, then scripts (``Is``) and blocks (``In``). Names
are case-sensitive except the binary properties, scripts and blocks, as in Java.
"""

from __future__ import annotations

from collections.abc import Callable

from zkconsumer.jregex import charset as cs
from zkconsumer.jregex.charset import Ranges


def _letters() -> Ranges:
    return cs.category("Lu", "Ll", "Lt", "Lm", "Lo")


def _cased_letters() -> Ranges:
    return cs.union(cs.prop("lowercase"), cs.prop("uppercase"), cs.prop("titlecase"))


def white_space() -> Ranges:
    return cs.union(cs.category("Zs", "Zl", "Zp"), ((0x09, 0x0D), (0x85, 0x85)))


def digit() -> Ranges:
    return cs.category("Nd")


def word() -> Ranges:
    """``UNICODE_CHARACTER_CLASS`` ``\\w``: alphabetic, marks, digits, connectors, joiners."""
    return cs.union(cs.prop("alphabetic"), cs.category("Mn", "Me", "Mc", "Nd", "Pc"),
                    ((0x200C, 0x200D),))


def _hex_digit() -> Ranges:
    return cs.union(digit(), ((0x30, 0x39), (0x41, 0x46), (0x61, 0x66), (0xFF10, 0xFF19),
                              (0xFF21, 0xFF26), (0xFF41, 0xFF46)))


def _blank() -> Ranges:
    return cs.union(cs.category("Zs"), ((0x09, 0x09),))


def _graph() -> Ranges:
    return cs.negate(cs.category("Zs", "Zl", "Zp", "Cc", "Cs", "Cn"))


def _print() -> Ranges:
    return cs.intersect(cs.union(_graph(), _blank()), cs.negate(cs.category("Cc")))


def _punct() -> Ranges:
    return cs.category("Pd", "Ps", "Pe", "Pc", "Po", "Pi", "Pf")


def _case(name: str, ci: bool) -> Ranges:
    return _cased_letters() if ci else cs.prop(name)


def posix(name: str, ci: bool) -> Ranges | None:
    """``forPOSIXName``: the Unicode versions of the POSIX classes (``UNICODE_CHARACTER_CLASS``)."""
    table: dict[str, Callable[[], Ranges]] = {
        "ALPHA": lambda: cs.prop("alphabetic"),
        "LOWER": lambda: _case("lowercase", ci),
        "UPPER": lambda: _case("uppercase", ci),
        "SPACE": white_space,
        "PUNCT": _punct,
        "XDIGIT": _hex_digit,
        "ALNUM": lambda: cs.union(cs.prop("alphabetic"), digit()),
        "CNTRL": lambda: cs.category("Cc"),
        "DIGIT": digit,
        "BLANK": _blank,
        "GRAPH": _graph,
        "PRINT": _print,
    }
    f = table.get(name.upper())
    return f() if f else None


def unicode_property(name: str, ci: bool) -> Ranges | None:
    """``forUnicodeProperty``: binary properties by name (any case), then POSIX names."""
    key = name.upper()
    table: dict[str, Callable[[], Ranges]] = {
        "ALPHABETIC": lambda: cs.prop("alphabetic"),
        "ASSIGNED": lambda: cs.negate(cs.category("Cn")),
        "CONTROL": lambda: cs.category("Cc"),
        "HEXDIGIT": _hex_digit, "HEX_DIGIT": _hex_digit,
        "IDEOGRAPHIC": lambda: cs.prop("ideographic"),
        "JOINCONTROL": lambda: ((0x200C, 0x200D),), "JOIN_CONTROL": lambda: ((0x200C, 0x200D),),
        "LETTER": _letters,
        "LOWERCASE": lambda: _case("lowercase", ci),
        "NONCHARACTERCODEPOINT": lambda: _nonchar(), "NONCHARACTER_CODE_POINT": lambda: _nonchar(),
        "TITLECASE": lambda: _case("titlecase", ci),
        "PUNCTUATION": _punct,
        "UPPERCASE": lambda: _case("uppercase", ci),
        "WHITESPACE": white_space, "WHITE_SPACE": white_space,
        "WORD": word,
    }
    f = table.get(key)
    return f() if f else posix(key, ci)


def _nonchar() -> Ranges:
    planes = [(p << 16 | 0xFFFE, p << 16 | 0xFFFF) for p in range(17)]
    return cs.normalise([*planes, (0xFDD0, 0xFDEF)])


_GROUPS = {"L": ("Lu", "Ll", "Lt", "Lm", "Lo"), "M": ("Mn", "Me", "Mc"), "N": ("Nd", "Nl", "No"),
           "Z": ("Zs", "Zl", "Zp"), "C": ("Cc", "Cf", "Co", "Cs", "Cn"),
           "P": ("Pd", "Ps", "Pe", "Pc", "Po", "Pi", "Pf"), "S": ("Sm", "Sc", "Sk", "So"),
           "LC": ("Lu", "Ll", "Lt"), "LD": ("Lu", "Ll", "Lt", "Lm", "Lo", "Nd")}


def java_property(name: str, ci: bool) -> Ranges | None:
    """``forProperty``: categories, ``L1``/``all``, ASCII POSIX classes and ``javaXxx`` methods."""
    if name in ("Lu", "Ll", "Lt"):
        return cs.category("Lu", "Ll", "Lt") if ci else cs.category(name)
    if name in cs.CATEGORY:
        return cs.category(name)
    if name in _GROUPS:
        return cs.category(*_GROUPS[name])
    p = cs.prop
    table: dict[str, Callable[[], Ranges]] = {
        "L1": lambda: ((0, 0xFF),), "all": lambda: cs.ALL, "ASCII": lambda: ((0, 0x7F),),
        "Alnum": lambda: cs.ASCII_ALNUM, "Alpha": lambda: cs.ASCII_ALPHA,
        "Blank": lambda: cs.ASCII_BLANK, "Cntrl": lambda: cs.ASCII_CNTRL,
        "Digit": lambda: cs.ASCII_DIGIT, "Graph": lambda: cs.ASCII_GRAPH,
        "Lower": lambda: cs.ASCII_ALPHA if ci else cs.ASCII_LOWER,
        "Print": lambda: ((0x20, 0x7E),), "Punct": lambda: cs.ASCII_PUNCT,
        "Space": lambda: cs.ASCII_SPACE,
        "Upper": lambda: cs.ASCII_ALPHA if ci else cs.ASCII_UPPER,
        "XDigit": lambda: cs.ASCII_XDIGIT,
        "javaLowerCase": lambda: _case("lowercase", ci),
        "javaUpperCase": lambda: _case("uppercase", ci),
        "javaTitleCase": lambda: _case("titlecase", ci),
        "javaAlphabetic": lambda: p("alphabetic"),
        "javaIdeographic": lambda: p("ideographic"),
        "javaDigit": digit,
        "javaDefined": lambda: p("defined"),
        "javaLetter": _letters,
        "javaLetterOrDigit": lambda: cs.union(_letters(), digit()),
        "javaJavaIdentifierStart": lambda: p("java_identifier_start"),
        "javaJavaIdentifierPart": lambda: p("java_identifier_part"),
        "javaUnicodeIdentifierStart": lambda: p("unicode_identifier_start"),
        "javaUnicodeIdentifierPart": lambda: p("unicode_identifier_part"),
        "javaIdentifierIgnorable": lambda: p("identifier_ignorable"),
        "javaSpaceChar": lambda: cs.category("Zs", "Zl", "Zp"),
        "javaWhitespace": lambda: p("whitespace"),
        "javaISOControl": lambda: ((0, 0x1F), (0x7F, 0x9F)),
        "javaMirrored": lambda: p("mirrored"),
    }
    f = table.get(name)
    return f() if f else None
