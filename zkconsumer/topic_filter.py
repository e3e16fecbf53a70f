"""Subscriptions: Whitelist/Blacklist topic filters and the static/wildcard ``TopicCount``.

Reproduces ``TopicFilter.scala`` and ``TopicCount.scala`` (spec detailed §1.3, §1.4, §3.7):

* a filter's regex is normalised as the original did (Java ``String.trim``, ``,`` -> ``|``,
  spaces removed, surrounding quotes stripped with the original's own ``replaceAll`` patterns),
  compiled in *Java's* regex dialect (:mod:`zkconsumer.jregex`: what ``Pattern.compile``
  rejects is rejected, what it accepts decides as it does) and matched against the *whole*
  topic name (Java ``matches``);
* internal topics (``__consumer_offsets``) are excluded from wildcard matches when
  ``exclude.internal.topics`` is on; static subscriptions never filter them;
* consumer thread ids are ``"<consumer id>-<n>"``, numbered from 0 per topic, and they sort as
  whole strings (``c-10`` before ``c-2``), the original's ``ConsumerThreadId.compare``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from zkconsumer.errors import InvalidConfig
from zkconsumer.identity import thread_id
from zkconsumer.jregex import JavaSyntaxError, compile_java
from zkconsumer.zk import paths
from zkconsumer.zk.codec import (
    BLACK_LIST_PATTERN,
    STATIC_PATTERN,
    WHITE_LIST_PATTERN,
    ConsumerRegistration,
)

log = logging.getLogger(__name__)

#: Kafka's ``Topic.InternalTopics`` in 0.8-0.10.
INTERNAL_TOPICS = frozenset({"__consumer_offsets"})


#: The original's quote-stripping patterns, in Java's dialect (``$`` also matches before a final
#: line terminator there, so they go through the same translation as every filter).
_LEADING_QUOTES = compile_java("""^["']+""")
_TRAILING_QUOTES = compile_java("""["']+$""")


def java_trim(s: str) -> str:
    """``String.trim``: strips every char <= U+0020 from both ends (not Unicode whitespace)."""
    start, end = 0, len(s)
    while start < end and s[start] <= " ":
        start += 1
    while end > start and s[end - 1] <= " ":
        end -= 1
    return s[start:end]


def normalise(raw: str) -> str:
    """``TopicFilter.regex``: trim, ``,`` -> ``|``, spaces removed, quotes stripped."""
    regex = java_trim(raw).replace(",", "|").replace(" ", "")
    regex = _LEADING_QUOTES.sub("", regex)
    return _TRAILING_QUOTES.sub("", regex)


class TopicFilter:
    """A regex over topic names; subclasses decide whether a match allows or denies."""

    pattern_name: str = ""

    def __init__(self, raw_regex: str) -> None:
        if not isinstance(raw_regex, str):
            raise InvalidConfig(f"topic filter must be a string regex, got {raw_regex!r}")
        self.regex = normalise(raw_regex)
        try:
            self._compiled = compile_java(self.regex)
        except JavaSyntaxError as exc:
            raise InvalidConfig(
                f"{self.regex} is an invalid regex. (java.util.regex: {exc})") from None

    def matches(self, topic: str) -> bool:
        return self._compiled.fullmatch(topic) is not None

    def is_topic_allowed(self, topic: str, exclude_internal_topics: bool) -> bool:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.regex!r})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.regex == self.regex  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.regex))


class Whitelist(TopicFilter):
    """Topics whose whole name matches the regex (``Whitelist("orders|pay.*")``)."""

    pattern_name = WHITE_LIST_PATTERN

    def is_topic_allowed(self, topic: str, exclude_internal_topics: bool) -> bool:
        allowed = self.matches(topic) and not (
            topic in INTERNAL_TOPICS and exclude_internal_topics)
        log.debug("%s filter %s topic %s", self, "allows" if allowed else "rejects", topic)
        return allowed


class Blacklist(TopicFilter):
    """Topics whose whole name does not match the regex."""

    pattern_name = BLACK_LIST_PATTERN

    def is_topic_allowed(self, topic: str, exclude_internal_topics: bool) -> bool:
        allowed = not self.matches(topic) and not (
            topic in INTERNAL_TOPICS and exclude_internal_topics)
        log.debug("%s filter %s topic %s", self, "allows" if allowed else "rejects", topic)
        return allowed


@dataclass(frozen=True)
class StaticTopicCount:
    """``{topic: number of streams}`` as given to ``create_message_streams``."""

    consumer_id: str
    counts: tuple[tuple[str, int], ...]

    @classmethod
    def of(cls, consumer_id: str, topic_count_map: Mapping[str, int]) -> StaticTopicCount:
        if not isinstance(topic_count_map, Mapping):
            raise InvalidConfig(f"topicCountMap must be a mapping, got {topic_count_map!r}")
        pairs = []
        for topic, n in topic_count_map.items():
            paths.validate_topic(topic)
            if isinstance(n, bool) or not isinstance(n, int) or n < 1:
                raise InvalidConfig(f"stream count for topic {topic!r} must be >= 1, got {n!r}")
            pairs.append((topic, n))
        return cls(consumer_id, tuple(pairs))

    @property
    def pattern(self) -> str:
        return STATIC_PATTERN

    def topics(self, all_topics: Iterable[str] | None = None) -> list[str]:
        return [t for t, _ in self.counts]

    def thread_ids_per_topic(self, all_topics: Iterable[str] | None = None) -> dict[str, list[str]]:
        return {t: sorted(thread_id(self.consumer_id, i) for i in range(n)) for t, n in self.counts}

    def registration(self, timestamp_ms: int | None = None) -> ConsumerRegistration:
        return ConsumerRegistration(self.counts, STATIC_PATTERN, timestamp_ms)


@dataclass(frozen=True)
class WildcardTopicCount:
    """A filter and a stream count; its topics are whatever currently matches."""

    consumer_id: str
    topic_filter: TopicFilter
    num_streams: int
    exclude_internal_topics: bool

    @property
    def pattern(self) -> str:
        return self.topic_filter.pattern_name

    def topics(self, all_topics: Iterable[str] | None = None) -> list[str]:
        return sorted(t for t in (all_topics or ())
                      if self.topic_filter.is_topic_allowed(t, self.exclude_internal_topics))

    def thread_ids_per_topic(self, all_topics: Iterable[str] | None = None) -> dict[str, list[str]]:
        threads = sorted(thread_id(self.consumer_id, i) for i in range(self.num_streams))
        return {t: list(threads) for t in self.topics(all_topics)}

    def registration(self, timestamp_ms: int | None = None) -> ConsumerRegistration:
        return ConsumerRegistration(
            ((self.topic_filter.regex, self.num_streams),), self.pattern, timestamp_ms)


TopicCount = StaticTopicCount | WildcardTopicCount


def topic_count_from_registration(consumer_id: str, reg: ConsumerRegistration,
                                  exclude_internal_topics: bool) -> TopicCount:
    """``TopicCount.constructTopicCount``: wildcard only for a non-empty white/black list.

    A wildcard member is re-evaluated by the *reader* against the current topic list with the
    reader's own ``exclude.internal.topics`` (the original's behaviour, spec detailed §1.3).
    """
    if not reg.is_wildcard:
        return StaticTopicCount(consumer_id, reg.subscription)
    regex, streams = reg.subscription[0]
    topic_filter: TopicFilter = (
        Whitelist(regex) if reg.pattern == WHITE_LIST_PATTERN else Blacklist(regex))
    return WildcardTopicCount(consumer_id, topic_filter, streams, exclude_internal_topics)


def needs_topic_list(registrations: Iterable[ConsumerRegistration]) -> bool:
    """Only wildcard members make the reader list ``/brokers/topics``."""
    return any(reg.is_wildcard for reg in registrations)
