"""zkconsumer's topic filter against the JVM: the committed corpus, then Hypothesis cases.

One JVM (tests/unit/java_oracle.py) answers for ``java.util.regex`` and the original's
``kafka.consumer.Whitelist``/``Blacklist``; for every (pattern, topic) pair both sides must agree
on whether the filter compiles, the normalised regex, ``matches()`` and both list verdicts.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from java_oracle import Answer, JavaOracle

from zkconsumer import Blacklist, Whitelist
from zkconsumer.errors import InvalidConfig

CORPUS = json.loads((Path(__file__).parents[1] / "jregex" / "corpus.json").read_text("utf-8"))


@pytest.fixture(scope="module")
def oracle(kafka_build):
    o = JavaOracle(kafka_build("0.10.2"))
    yield o
    o.close()


def python_answer(raw: str, topics: list[str]) -> Answer:
    try:
        white, black = Whitelist(raw), Blacklist(raw)
    except InvalidConfig as exc:
        return Answer(str(exc))
    return Answer(None, white.regex, tuple(white.matches(t) for t in topics),
                  tuple(white.is_topic_allowed(t, True) for t in topics),
                  tuple(black.is_topic_allowed(t, True) for t in topics))


def disagreement(oracle: JavaOracle, raw: str, topics: list[str]) -> str | None:
    java, ours = oracle.ask(raw, topics), python_answer(raw, topics)
    if java.error is not None or ours.error is not None:
        if java.error is None or ours.error is None or java.error not in ours.error:
            return f"{raw!r}: java {java.error!r} / ours {ours.error!r}"
        return None
    if java.regex != ours.regex:
        return f"{raw!r}: normalised {java.regex!r} / {ours.regex!r}"
    for name in ("matches", "whitelist", "blacklist"):
        a, b = getattr(java, name), getattr(ours, name)
        wrong = [(t, x) for t, x, y in zip(topics, a, b, strict=True) if x != y]
        if wrong:
            return f"{raw!r}: {name} differs on (topic, java's verdict) {wrong[:5]!r}"
    return None


def test_every_corpus_pattern_compiles_and_matches_as_the_jvm_does(oracle):
    topics = CORPUS["topics"]
    failures = [d for p in CORPUS["patterns"] if (d := disagreement(oracle, p, topics))]
    assert not failures, f"{len(failures)} of {len(CORPUS['patterns'])}:\n" + "\n".join(failures)


def test_the_corpus_covers_rejections_and_acceptances(oracle):
    """The corpus is only worth its size if both outcomes occur in number."""
    rejected = sum(oracle.ask(p, []).error is not None for p in CORPUS["patterns"])
    assert 80 <= rejected <= len(CORPUS["patterns"]) - 300


# ---- generated cases: a grammar of Java constructs, and topic names around them
_CHARS = "abcAB._-é1"
_ESCAPES = [r"\d", r"\D", r"\w", r"\W", r"\s", r"\S", r"\h", r"\H", r"\v", r"\V", r"\R", r"\b",
            r"\B", r"\x41", r"\x{61}", r"\0141", r"\u0062", r"\t", r"\n", r"\.", r"\-", r"\z",
            r"\Z", r"\A", r"\G", r"\p{Lower}", r"\p{Upper}", r"\P{Alpha}", r"\p{javaLowerCase}",
            r"\p{IsLatin}", r"\p{InBasicLatin}", r"\p{L}", r"\pN", r"\p{Punct}",
            r"\p{IsAlphabetic}",
            r"\Qa.b\E", r"\Q-\E", r"\k<n>", r"\1", r"\2", r"\N{LATIN SMALL LETTER A}", r"\X"]
_FLAGS = ["(?i)", "(?-i)", "(?u)", "(?iu)", "(?U)", "(?x)", "(?s)", "(?m)", "(?d)", "(?-iu)"]
_JUNK = ["{", "}", "]", "[", "(", ")", "|", "*", "+", "?", "\\", "&&", "{1|3}", "(?P<n>", "(?#"]

_class_item = st.one_of(
    st.sampled_from(list("abcA._-é^&") + [r"\d", r"\w", r"\s", r"\p{Lower}", r"\p{L}", r"\h",
                                          r"\x41", r"\Q]\E", r"\u0065", r"\p{IsGreek}"]),
    st.tuples(st.sampled_from("aAe0"), st.sampled_from("czEZ9")).map(lambda t: f"{t[0]}-{t[1]}"),
)


@st.composite
def _class(draw, depth: int = 0) -> str:
    items = draw(st.lists(st.one_of(_class_item, st.just("[x-z]") if depth else _class_item),
                          min_size=1, max_size=4))
    if depth < 1 and draw(st.booleans()):
        items.insert(draw(st.integers(0, len(items))), draw(_class(depth + 1)))
    body = "".join(items)
    if draw(st.integers(0, 3)) == 0:
        body += "&&" + draw(_class(depth + 1) if depth < 1 else _class_item)
    return "[" + ("^" if draw(st.integers(0, 3)) == 0 else "") + body + "]"


_atom = st.one_of(st.sampled_from(list(_CHARS)), st.sampled_from(_ESCAPES), _class(),
                  st.just("."))
_quant = st.sampled_from(["", "", "", "?", "*", "+", "{2}", "{1,3}", "{0,}", "*?", "+?", "??",
                          "*+", "++", "{1,2}+", "{2}?"])


def _wrap(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    heads = ["(", "(?:", "(?=", "(?!", "(?<=", "(?<!", "(?>", "(?<n>", "(?i:", "(?-i:", "(?iu:"]
    return st.tuples(st.sampled_from(heads), inner).map(lambda t: f"{t[0]}{t[1]})")


_piece = st.recursive(
    st.tuples(_atom, _quant).map("".join),
    lambda inner: st.one_of(
        st.lists(inner, min_size=1, max_size=4).map("".join),
        st.tuples(inner, inner).map("|".join),
        st.tuples(_wrap(inner), _quant).map("".join),
        st.tuples(st.sampled_from(_FLAGS), inner).map("".join),
    ),
    max_leaves=8,
)
_pattern = st.one_of(_piece, st.tuples(_piece, st.sampled_from(_JUNK), _piece).map("".join))
_topic = st.text(alphabet=_CHARS + "\nxyz\u212a\u00c9", min_size=0, max_size=8)


@settings(max_examples=200, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(pattern=_pattern, topics=st.lists(_topic, min_size=1, max_size=6))
def test_generated_patterns_and_topics_decide_as_the_jvm_does(oracle, pattern, topics):
    assert disagreement(oracle, pattern, topics) is None
