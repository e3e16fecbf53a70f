"""Keyed, numbered messages at a steady rate, so losses and duplicates can be counted exactly.

Keys ``k000 .. k<n-1>`` take turns; each key has its own sequence (``k007:0``, ``k007:1``...)
and always goes to the same partition (``index % partitions``), so every partition keeps
receiving data through the chaos. The value carries key and number, so a consumer needs nothing
else to report what it got. Only what the broker acknowledged counts as produced. One record per
batch (``producer_config``): the embedded broker misreports end offsets otherwise.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass

from zkconsumer.admin.produce import producer_config

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Acked:
    key: str
    seq: int
    partition: int
    offset: int


def key_name(index: int) -> str:
    return f"k{index:03d}"


class KeyedProducer:
    def __init__(self, bootstrap: str, topic: str, partitions: int, keys: int,
                 rate: float) -> None:
        if keys < 1 or partitions < 1:
            raise ValueError(f"keys and partitions must be >= 1, got {keys}, {partitions}")
        self.topic = topic
        self.partitions = partitions
        self.keys = keys
        self.rate = max(rate, 0.1)
        self._bootstrap = bootstrap
        self._lock = threading.Lock()
        self._acked: list[Acked] = []
        self._errors: list[str] = []
        self._sent = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"chaos-producer-{topic}",
                                        daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 40.0) -> None:
        """Stop sending and wait until every record was acknowledged or failed."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    @property
    def acked(self) -> list[Acked]:
        with self._lock:
            return list(self._acked)

    @property
    def errors(self) -> list[str]:
        with self._lock:
            return list(self._errors)

    @property
    def sent(self) -> int:
        return self._sent

    def _on_delivery(self, key: str, seq: int, err: object, msg: object) -> None:
        with self._lock:
            if err is not None:
                self._errors.append(f"{key}:{seq}: {err}")
            else:
                self._acked.append(Acked(key, seq, msg.partition(), msg.offset()))  # type: ignore[attr-defined]

    def _run(self) -> None:
        from confluent_kafka import Producer

        producer = Producer(producer_config(self._bootstrap))
        period = 1.0 / self.rate
        seqs = [0] * self.keys
        n = 0
        next_at = time.monotonic()
        while not self._stop.is_set():
            index = n % self.keys
            key, seq = key_name(index), seqs[index]
            seqs[index] += 1
            n += 1
            while True:
                try:
                    producer.produce(
                        self.topic, key=key.encode(), value=f"{key}:{seq}".encode(),
                        partition=index % self.partitions,
                        on_delivery=lambda err, msg, k=key, s=seq: self._on_delivery(k, s, err,
                                                                                     msg))
                    break
                except BufferError:
                    producer.poll(0.05)
            self._sent = n
            producer.poll(0)
            next_at += period
            self._stop.wait(max(0.0, next_at - time.monotonic()))
        remaining = producer.flush(30)
        if remaining:
            log.error("%d record(s) to %s never acknowledged", remaining, self.topic)
        log.info("sent %d record(s) to %s", n, self.topic)
