"""Every znode path the project reads or writes, built from validated names, and nowhere else.

kazoo's path join drops everything before an absolute component, so a group named ``/x`` or
``../../brokers`` would escape its subtree. Each builder therefore validates the names it is given
(Kafka's rules: ASCII alphanumerics, ``.``, ``_`` and ``-``, 1 to 249 characters, never ``.`` or
``..``) before a path exists. The layout is the one Kafka 0.8-0.10 used (``ZkUtils.scala``).
"""

from __future__ import annotations

import re

from zkconsumer.errors import InvalidName

MAX_NAME_LENGTH = 249
_LEGAL_NAME = re.compile(r"[a-zA-Z0-9._-]+")
# Consumer ids embed a host name and are free-form in the original ("for testing only"); we still
# refuse anything that could change the meaning of a path.
_LEGAL_MEMBER = re.compile(r"[a-zA-Z0-9._:@+=-]+")

CONSUMERS = "/consumers"
BROKERS = "/brokers"
BROKER_IDS = "/brokers/ids"
BROKER_TOPICS = "/brokers/topics"
CONTROLLER = "/controller"
CONTROLLER_EPOCH = "/controller_epoch"
SHARED = frozenset({CONSUMERS, BROKERS, BROKER_TOPICS, BROKER_IDS})  # parents every group shares
SPARK_RUNS = "/zkconsumer-spark"  # the Spark herd job's run directories


def _check(kind: str, name: object, pattern: re.Pattern[str], max_len: int) -> str:
    if not isinstance(name, str):
        raise InvalidName(f"{kind} name must be a string, got {name!r}")
    if not name:
        raise InvalidName(f"{kind} name must not be empty")
    if len(name) > max_len:
        raise InvalidName(
            f"{kind} name {name[:40]!r}... is {len(name)} characters long; the limit is {max_len}"
        )
    if name in (".", ".."):
        raise InvalidName(f"{kind} name {name!r} is illegal: '.' and '..' are not allowed")
    if not pattern.fullmatch(name):
        raise InvalidName(
            f"{kind} name {name!r} is illegal, it contains a character other than "
            "ASCII alphanumerics, '.', '_' and '-'"
            if pattern is _LEGAL_NAME
            else f"{kind} name {name!r} contains a character that is not allowed in a znode name"
        )
    return name


def validate_topic(topic: object) -> str:
    """Return ``topic`` unchanged if Kafka accepts it as a topic name, else raise InvalidName."""
    return _check("topic", topic, _LEGAL_NAME, MAX_NAME_LENGTH)


def validate_group(group: object) -> str:
    """Return ``group`` unchanged if it is a legal ``group.id`` (same characters as a topic)."""
    return _check("group", group, _LEGAL_NAME, MAX_NAME_LENGTH)


def validate_member(member: object) -> str:
    """Return a consumer id or consumer thread id if it is safe as a single znode name."""
    return _check("consumer id", member, _LEGAL_MEMBER, 1024)


def _partition(partition: object) -> str:
    if isinstance(partition, bool) or not isinstance(partition, int) or partition < 0:
        raise InvalidName(f"partition must be a non-negative integer, got {partition!r}")
    return str(partition)


def _broker_id(broker_id: object) -> str:
    if isinstance(broker_id, bool) or not isinstance(broker_id, int) or broker_id < 0:
        raise InvalidName(f"broker id must be a non-negative integer, got {broker_id!r}")
    return str(broker_id)


# --- brokers and topics (written by brokers and the controller, read by consumers) -------------


def broker(broker_id: int) -> str:
    return f"{BROKER_IDS}/{_broker_id(broker_id)}"


def topic(name: str) -> str:
    return f"{BROKER_TOPICS}/{validate_topic(name)}"


def topic_partitions(name: str) -> str:
    return f"{topic(name)}/partitions"


def partition_state(name: str, partition: int) -> str:
    return f"{topic_partitions(name)}/{_partition(partition)}/state"


# --- consumer groups ---------------------------------------------------------------------------


def group(name: str) -> str:
    return f"{CONSUMERS}/{validate_group(name)}"


def consumer_ids(group_name: str) -> str:
    return f"{group(group_name)}/ids"


def consumer_registration(group_name: str, consumer_id: str) -> str:
    return f"{consumer_ids(group_name)}/{validate_member(consumer_id)}"


def owners(group_name: str) -> str:
    return f"{group(group_name)}/owners"


def topic_owners(group_name: str, topic_name: str) -> str:
    return f"{owners(group_name)}/{validate_topic(topic_name)}"


def owner(group_name: str, topic_name: str, partition: int) -> str:
    return f"{topic_owners(group_name, topic_name)}/{_partition(partition)}"


def offsets(group_name: str) -> str:
    return f"{group(group_name)}/offsets"


def topic_offsets(group_name: str, topic_name: str) -> str:
    return f"{offsets(group_name)}/{validate_topic(topic_name)}"


def offset(group_name: str, topic_name: str, partition: int) -> str:
    return f"{topic_offsets(group_name, topic_name)}/{_partition(partition)}"


def parse_offset(path: str) -> tuple[str, str, int]:
    """``(group, topic, partition)`` of an offsets znode path, the inverse of :func:`offset`.

    Raises ``InvalidName`` naming the path unless it has exactly that shape with legal names, so
    a path read from a file can be rebuilt from its parts and cannot name any other znode.
    """
    parts = path.split("/")
    if len(parts) != 6 or parts[0] != "" or "/" + parts[1] != CONSUMERS or parts[3] != "offsets":
        raise InvalidName(f"{path!r} is not an offsets path "
                          "'/consumers/<group>/offsets/<topic>/<partition>'")
    group_name, topic_name, partition = validate_group(parts[2]), validate_topic(parts[4]), parts[5]
    if not (partition.isascii() and partition.isdigit()):
        raise InvalidName(f"partition {partition!r} of {path!r} is not a non-negative integer")
    return group_name, topic_name, int(partition)


# --- leader coordination (coordination.mode=leader) ---------------------------------------------


def leader_election(group_name: str) -> str:
    """Parent of the election's ephemeral sequential candidates."""
    return f"{group(group_name)}/leader"


def leader_candidate(group_name: str, name: str) -> str:
    """One election candidate, named by ZooKeeper's sequential create (``n_0000000007``)."""
    return f"{leader_election(group_name)}/{validate_member(name)}"


def assignment(group_name: str) -> str:
    """The leader's published assignment, with its generation, in one znode."""
    return f"{group(group_name)}/assignment"


def child(parent: str, name: str) -> str:
    """``parent/name`` for a ``name`` ZooKeeper itself listed under ``parent``.

    Not validated, on purpose: it names what exists (to walk a tree, or to report a corrupt or
    foreign znode by its real path), never a znode to create from outside input.
    """
    return ("" if parent == "/" else parent.rstrip("/")) + "/" + name


def spark_run(run_id: str) -> str:
    """The Spark herd job's run directory (``zkconsumer.spark.task_control``)."""
    return child(SPARK_RUNS, _check("spark run", run_id, _LEGAL_NAME, MAX_NAME_LENGTH))

