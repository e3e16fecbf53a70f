"""Produce test and demo data through confluent-kafka, one record per batch.

The embedded Tansu 0.6.0 answers ListOffsets ``latest`` with the last batch's base offset + 1,
so a multi-record batch makes every log-end offset (lag, ``auto.offset.reset=largest``) wrong.
Sending each record in a batch of its own keeps those figures true on every broker; the cost is
throughput (a few thousand records per second per producer here), which several producer
connections recover.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Sequence

from zkconsumer.errors import BrokerUnavailable, ZkConsumerError
from zkconsumer.zk import paths

ONE_RECORD_PER_BATCH = {"batch.num.messages": 1, "linger.ms": 0}
# librdkafka's own lines (a broker that went away, ...) join the process's logging instead of
# being written to stderr directly, so a command's log file keeps them and a console stays quiet.
RDKAFKA_LOG = logging.getLogger("zkconsumer.rdkafka")


class ProduceError(ZkConsumerError):
    """One or more records were not acknowledged by the broker."""


def producer_config(bootstrap: str, **overrides: object) -> dict[str, object]:
    return {
        "bootstrap.servers": bootstrap,
        "acks": "all",
        "enable.idempotence": False,
        "queue.buffering.max.messages": 1_000_000,
        "message.timeout.ms": 30_000,
        "log_level": 3,
        "logger": RDKAFKA_LOG,
        **ONE_RECORD_PER_BATCH,
        **overrides,
    }


def _as_bytes(value: bytes | str | None) -> bytes | None:
    if value is None or isinstance(value, bytes):
        return value
    return value.encode("utf-8")


def produce(bootstrap: str, topic: str, values: Iterable[bytes | str],
            *, keys: Sequence[bytes | str | None] | None = None,
            partition: int | None = None, connections: int = 1) -> int:
    """Send ``values`` to ``topic`` and wait for every acknowledgement; returns the count.

    Raises ProduceError listing the first failures if any record was not acknowledged: a test
    or demo must never believe it produced what the broker did not store.
    """
    paths.validate_topic(topic)
    records = [(_as_bytes(keys[i]) if keys is not None else None, _as_bytes(v))
               for i, v in enumerate(values)]
    if keys is not None and len(keys) != len(records):
        raise ValueError(f"got {len(keys)} keys for {len(records)} values")
    connections = max(1, min(connections, len(records) or 1))
    shards = [records[i::connections] for i in range(connections)]
    errors: list[str] = []
    lock = threading.Lock()

    def send(shard: list[tuple[bytes | None, bytes | None]]) -> None:
        from confluent_kafka import Producer

        producer = Producer(producer_config(bootstrap))

        def on_delivery(err: object, _msg: object) -> None:
            if err is not None:
                with lock:
                    errors.append(str(err))

        for key, value in shard:
            kwargs: dict[str, object] = {"key": key, "value": value, "on_delivery": on_delivery}
            if partition is not None:
                kwargs["partition"] = partition
            while True:
                try:
                    producer.produce(topic, **kwargs)
                    break
                except BufferError:
                    producer.poll(0.05)
            producer.poll(0)
        left = producer.flush(60)
        if left:
            with lock:
                errors.append(f"{left} records still unacknowledged after 60 s")

    threads = [threading.Thread(target=send, args=(s,), name=f"produce-{topic}-{i}")
               for i, s in enumerate(shards)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        if all("Transport" in e or "resolve" in e or "unreachable" in e for e in errors):
            raise BrokerUnavailable(f"broker {bootstrap} unreachable: {errors[0]}")
        raise ProduceError(f"{len(errors)} of {len(records)} records to {topic!r} failed: "
                           f"{'; '.join(errors[:3])}")
    return len(records)
