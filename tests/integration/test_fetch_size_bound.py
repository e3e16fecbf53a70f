"""fetch.message.max.bytes against a real broker: the queued-memory bound and oversized messages.

A consumer far behind a backlog holds at most streams x queued.max.message.chunks x
fetch.message.max.bytes of values in its chunk queues (the connector's ``queued_bytes_peak``
counter). Stated overhead outside that bound, not counted here: the chunk the application is
iterating (one fetch size per stream), the fetcher's batch being cut into chunks, and
librdkafka's prefetch (``queued.max.messages.kbytes`` = four fetch sizes per fetcher thread).
"""

from __future__ import annotations

import time

from connector_helpers import fast_config, wait_until

from zkconsumer import ZookeeperConsumerConnector
from zkconsumer.admin import produce
from zkconsumer.errors import ConsumerTimeoutException, MessageSizeTooLargeException

FETCH = 16384
CHUNKS = 2
VALUE = 2000
PER_PARTITION = 150


def test_a_consumer_behind_a_backlog_stays_within_the_bound_and_names_an_oversized_message(
        zk_connect, broker, new_topic, unique):
    topic, group = new_topic(2), unique("g")
    for p in range(2):
        produce(broker.bootstrap, topic, [bytes([65 + p]) * VALUE] * PER_PARTITION, partition=p)
    produce(broker.bootstrap, topic, [b"z" * (FETCH * 2)], partition=1)  # offset 150
    conn = ZookeeperConsumerConnector(fast_config(
        zk_connect, group, fetch_message_max_bytes=FETCH, queued_max_message_chunks=CHUNKS,
        consumer_timeout_ms=3000))
    try:
        it = iter(conn.create_message_streams({topic: 1})[topic][0])
        got = [next(it)]
        # The fetcher fills the queue and blocks, the backlog staying behind: with each chunk at
        # most FETCH bytes, more than (CHUNKS - 1) x FETCH queued means CHUNKS chunks, a full queue.
        wait_until(lambda: conn.metrics()["queued_bytes"] > (CHUNKS - 1) * FETCH, 30,
                   "the fetcher to fill the chunk queue")
        errors: list[str] = []
        deadline = time.monotonic() + 60
        while (len(got) < 2 * PER_PARTITION or len(errors) < 2) and time.monotonic() < deadline:
            try:
                got.append(next(it))
            except MessageSizeTooLargeException as exc:
                errors.append(str(exc))
            except ConsumerTimeoutException:
                break
        metrics = conn.metrics()
    finally:
        conn.shutdown()
    assert sorted((m.partition, m.offset) for m in got) == [
        (p, o) for p in range(2) for o in range(PER_PARTITION)]
    assert all(len(m.message) == VALUE for m in got)
    assert len(errors) >= 2 and all(
        f"on topic {topic} partition 1 at fetch offset {PER_PARTITION}." in e for e in errors)
    bound = 1 * CHUNKS * FETCH
    assert 0 < metrics["queued_bytes_peak"] <= bound, (metrics["queued_bytes_peak"], bound)
