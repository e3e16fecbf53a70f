"""A group's offsets in the broker (the ``offsets.storage=kafka`` side), for the operator tools.

Requests go out as the connector's do (``offsets.kafka.BrokerOffsetChannel``): as a client of
the group with generation -1 and no member id, never as a member. One attempt each, with a
timeout; an error names the group and what the broker said.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping

from zkconsumer.errors import ZkConsumerError
from zkconsumer.identity import TopicPartition
from zkconsumer.offsets.kafka import BrokerOffsetChannel, ChannelError

log = logging.getLogger(__name__)

TOOL_CLIENT_ID = "zkconsumer-tools"


class BrokerOffsetsError(ZkConsumerError):
    """The broker did not answer an offset request, or refused it."""


def _channel(bootstrap: str, group: str, timeout_s: float) -> BrokerOffsetChannel:
    return BrokerOffsetChannel(group, TOOL_CLIENT_ID, lambda: bootstrap, int(timeout_s * 1000))


def fetch_broker_offsets(bootstrap: str, group: str, partitions: Iterable[tuple[str, int]],
                         timeout_s: float = 10.0) -> dict[tuple[str, int], int | None]:
    """The group's committed offset in the broker per partition; None where it has none."""
    tps = [TopicPartition(t, p) for t, p in partitions]
    if not tps:
        return {}
    channel = _channel(bootstrap, group, timeout_s)
    try:
        offsets, errors = channel.fetch(tps)
    except ChannelError as exc:
        raise BrokerOffsetsError(f"no answer from the group coordinator of {group!r} at "
                                 f"{bootstrap}: {exc}") from None
    finally:
        channel.close()
    if errors:
        raise BrokerOffsetsError(f"the broker refused the offset fetch for group {group!r}: "
                                 + ", ".join(f"{tp.topic}-{tp.partition}: {e}"
                                             for tp, e in sorted(errors.items())))
    return {(tp.topic, tp.partition): (o if (o := offsets.get(tp, -1)) >= 0 else None)
            for tp in tps}


def commit_broker_offsets(bootstrap: str, group: str, offsets: Mapping[tuple[str, int], int],
                          timeout_s: float = 10.0) -> None:
    """Store ``offsets`` as the group's committed offsets in the broker; all or an error."""
    if not offsets:
        return
    for (topic, p), offset in offsets.items():
        if offset < 0:
            raise ValueError(f"offset for {topic}-{p} must be >= 0, got {offset}")
    channel = _channel(bootstrap, group, timeout_s)
    try:
        errors = channel.commit({TopicPartition(t, p): o for (t, p), o in offsets.items()})
    except ChannelError as exc:
        raise BrokerOffsetsError(f"no answer from the group coordinator of {group!r} at "
                                 f"{bootstrap}: {exc}") from None
    finally:
        channel.close()
    failed = {tp: e for tp, e in errors.items() if e is not None}
    missing = [tp for tp in offsets if TopicPartition(*tp) not in errors]
    if failed or missing:
        detail = [f"{tp.topic}-{tp.partition}: {e}" for tp, e in sorted(failed.items())]
        detail += [f"{t}-{p}: no answer" for t, p in missing]
        hint = (" (the group has live broker-coordinated members: a commit from outside the "
                "group is refused while it is not empty)"
                if any(e == "UNKNOWN_MEMBER_ID" for e in failed.values()) else "")
        raise BrokerOffsetsError(f"the broker refused offsets for group {group!r}: "
                                 f"{', '.join(detail)}{hint}")


def kafka_view(zk_connect: str, group: str, tps: list[tuple[str, int]],
               zk_offsets: Mapping[tuple[str, int], int | None], bootstrap: str | None
               ) -> dict[tuple[str, int], int | None]:
    """The original checker's reading: the broker's offset, ZooKeeper's where it has none."""
    from zkconsumer.admin.cluster import bootstrap_servers, zk_session

    if bootstrap is None:
        with zk_session(zk_connect) as client:
            bootstrap = bootstrap_servers(client, zk_connect)
    stored = fetch_broker_offsets(bootstrap, group, tps)
    return {tp: stored.get(tp) if stored.get(tp) is not None else zk_offsets.get(tp)
            for tp in tps}
