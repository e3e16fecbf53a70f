"""The assignment znode: the leader's decision for one generation, encoded as JSON (pure).

``/consumers/<group>/assignment`` holds::

    {"version": 1, "generation": 7, "leader": "<consumer id>",
     "assignment": {"<consumer id>": {"<topic>": [0, 3]}}}

Every member of the group is listed, with ``{}`` when it gets nothing, so that a member can tell
"not yet seen by the leader" (absent) from "nothing for me" (present, empty). The generation
number increases by one with every publication; the znode's version increases with it and is
what offset commits are fenced on (see ``claims.py``). Decoding validates everything, since a
member acts on this data: a partition assigned twice would be a split decision.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field

from zkconsumer.errors import CorruptZnode
from zkconsumer.identity import TopicPartition

log = logging.getLogger(__name__)

RECORD_VERSION = 1

MemberAssignment = Mapping[str, tuple[int, ...]]


@dataclass(frozen=True)
class AssignmentRecord:
    """One published generation: who owns what, decided by ``leader``."""

    generation: int
    leader: str
    members: Mapping[str, MemberAssignment] = field(default_factory=dict)

    def partitions_of(self, member: str) -> frozenset[TopicPartition]:
        return frozenset(TopicPartition(t, p)
                         for t, parts in self.members.get(member, {}).items() for p in parts)

    def owners(self) -> dict[TopicPartition, str]:
        """Partition -> member, over the whole group."""
        return {tp: member for member in self.members for tp in self.partitions_of(member)}

    def same_decision(self, other: AssignmentRecord | None) -> bool:
        """Same members and same partitions (generation and leader aside)."""
        return other is not None and _normal(self.members) == _normal(other.members)


def _normal(members: Mapping[str, MemberAssignment]) -> dict[str, dict[str, tuple[int, ...]]]:
    return {m: {t: tuple(sorted(p)) for t, p in a.items() if p} for m, a in members.items()}


def encode_assignment(record: AssignmentRecord) -> bytes:
    body = {
        "version": RECORD_VERSION,
        "generation": record.generation,
        "leader": record.leader,
        "assignment": {m: {t: sorted(p) for t, p in sorted(a.items())}
                       for m, a in sorted(record.members.items())},
    }
    return json.dumps(body, separators=(",", ":"), sort_keys=True).encode()


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def decode_assignment(path: str, data: bytes | None) -> AssignmentRecord:
    """Parse and validate; :class:`CorruptZnode` names the path and what is wrong."""
    def bad(why: str) -> CorruptZnode:
        shown = (data or b"")[:200].decode("utf-8", "replace")
        return CorruptZnode(f"{path}: {why} in {shown!r}")

    try:
        body = json.loads((data or b"").decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise bad("not JSON") from None
    if not isinstance(body, dict):
        raise bad("not a JSON object")
    if body.get("version") != RECORD_VERSION:
        raise bad(f"unsupported version {body.get('version')!r}")
    generation, leader, assignment = body.get("generation"), body.get("leader"), \
        body.get("assignment")
    if not _is_int(generation) or generation < 1:
        raise bad(f"generation must be an integer >= 1, got {generation!r}")
    if not isinstance(leader, str) or not leader:
        raise bad(f"leader must be a non-empty string, got {leader!r}")
    if not isinstance(assignment, dict):
        raise bad("assignment must be an object")
    members: dict[str, dict[str, tuple[int, ...]]] = {}
    seen: dict[TopicPartition, str] = {}
    for member, topics in assignment.items():
        if not member or not isinstance(topics, dict):
            raise bad(f"member {member!r} must map to an object of topics")
        parts_by_topic: dict[str, tuple[int, ...]] = {}
        for topic, parts in topics.items():
            if not topic or not isinstance(parts, list) or \
                    not all(_is_int(p) and p >= 0 for p in parts):
                raise bad(f"{member}/{topic} must be a list of partitions >= 0")
            for p in parts:
                tp = TopicPartition(topic, p)
                if tp in seen:
                    raise bad(f"partition {topic}/{p} assigned to both {seen[tp]} and {member}")
                seen[tp] = member
            parts_by_topic[topic] = tuple(sorted(parts))
        members[member] = parts_by_topic
    return AssignmentRecord(generation, leader, members)
