"""Watches a group's committed offsets from outside, to catch a stale owner's late commits.

Nothing in the ZooKeeper protocol stops a member that lost its session from writing
``/consumers/<group>/offsets/...`` once it reconnects, and a broker that does not check the
generation of an OffsetCommit accepts a fenced member's too. Either way the visible symptom is
the same: a partition's committed offset moves *backwards* (the stale owner commits what it had
consumed before the new owner moved on). The watcher samples the committed offsets a few times
a second through its own client (not through any member's proxy) and records every regression.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

log = logging.getLogger(__name__)

SAMPLE_S = 0.2


@dataclass(frozen=True)
class Regression:
    ts: float
    partition: int
    before: int
    after: int


def regressions(samples: list[tuple[float, dict[int, int]]]) -> list[Regression]:
    """Every backward move of a partition's committed offset between consecutive samples."""
    out: list[Regression] = []
    last: dict[int, int] = {}
    for ts, offsets in samples:
        for p, off in sorted(offsets.items()):
            if p in last and off < last[p]:
                out.append(Regression(ts, p, last[p], off))
            last[p] = off
    return out


def zookeeper_reader(zk_connect: str, group: str, topic: str, partitions: int
                     ) -> tuple[Callable[[], dict[int, int]], Callable[[], None]]:
    from kazoo.client import KazooClient

    from zkconsumer.zk import codec, paths

    client = KazooClient(hosts=zk_connect, timeout=10.0)
    client.start(timeout=15)

    def read() -> dict[int, int]:
        out = {}
        for p in range(partitions):
            path = paths.offset(group, topic, p)
            try:
                data, _ = client.get(path)
            except Exception:  # not committed yet, or the server is away for a moment
                continue
            out[p] = codec.decode_offset(path, data)
        return out

    def close() -> None:
        client.stop()
        client.close()

    return read, close


def broker_reader(bootstrap: str, group: str, topic: str, partitions: int
                  ) -> tuple[Callable[[], dict[int, int]], Callable[[], None]]:
    from confluent_kafka import Consumer, TopicPartition

    # OffsetFetch needs no membership: this client never joins the group it reads.
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                         "enable.auto.commit": False, "log_level": 0})
    tps = [TopicPartition(topic, p) for p in range(partitions)]

    def read() -> dict[int, int]:
        try:
            got = consumer.committed(tps, timeout=2.0)
        except Exception:
            return {}
        return {tp.partition: tp.offset for tp in got if tp.error is None and tp.offset >= 0}

    def close() -> None:
        consumer.close()

    return read, close


class CommitWatcher:
    """Samples committed offsets on a thread between :meth:`start` and :meth:`stop`."""

    def __init__(self, read: Callable[[], dict[int, int]], close: Callable[[], None]) -> None:
        self._read = read
        self._close = close
        self.samples: list[tuple[float, dict[int, int]]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="commit-watcher", daemon=True)

    @classmethod
    def for_family(cls, family: str, *, zk_connect: str, bootstrap: str, group: str,
                   topic: str, partitions: int) -> CommitWatcher:
        if family == "zookeeper":
            return cls(*zookeeper_reader(zk_connect, group, topic, partitions))
        return cls(*broker_reader(bootstrap, group, topic, partitions))

    def start(self) -> CommitWatcher:
        self._thread.start()
        return self

    def stop(self) -> list[Regression]:
        """Stop sampling, take one last sample (the members have stopped by now: it holds their
        final commits) and return the regressions seen."""
        self._stop.set()
        self._thread.join(10)
        try:
            self.samples.append((time.time(), self._read()))
        except Exception:
            log.debug("final committed offsets unreadable", exc_info=True)
        try:
            self._close()
        except Exception:
            log.debug("closing the commit watcher's client failed", exc_info=True)
        return regressions(self.samples)

    @property
    def final(self) -> dict[int, int] | None:
        """The committed offsets of the last sample (partition -> next offset to read), None
        when no sample was read."""
        return dict(self.samples[-1][1]) if self.samples else None

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.samples.append((time.time(), self._read()))
            except Exception:
                log.debug("committed offsets unreadable for now", exc_info=True)
            self._stop.wait(SAMPLE_S)
