"""A steady, slow producer running through the whole run, so losses and duplicates show.

Each value is its sequence number and goes to partition ``seq % partitions``, so every
partition keeps receiving data during a rebalance. Only what the broker acknowledged counts as
produced (with its partition and offset from the delivery report): losses are measured against
that, never against the broker's end offsets, which Tansu 0.6.0 reports wrongly.
"""

from __future__ import annotations

import logging
import threading
import time

from zkconsumer.admin.produce import producer_config
from zkconsumer.lab.metrics import Produced

log = logging.getLogger(__name__)


class SteadyProducer:
    def __init__(self, bootstrap: str, topic: str, partitions: int, rate: float) -> None:
        self.topic = topic
        self.partitions = partitions
        self.rate = max(rate, 0.1)
        self._bootstrap = bootstrap
        self._lock = threading.Lock()
        self._produced: list[Produced] = []
        self._errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"lab-producer-{topic}",
                                        daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 30.0) -> None:
        self._stop.set()
        self._thread.join(timeout)

    @property
    def produced(self) -> list[Produced]:
        with self._lock:
            return list(self._produced)

    @property
    def errors(self) -> list[str]:
        with self._lock:
            return list(self._errors)

    def _on_delivery(self, seq: int, err: object, msg: object) -> None:
        with self._lock:
            if err is not None:
                self._errors.append(f"seq {seq}: {err}")
            else:
                self._produced.append(Produced(msg.partition(), msg.offset(), seq))  # type: ignore[attr-defined]

    def _run(self) -> None:
        from confluent_kafka import Producer

        producer = Producer(producer_config(self._bootstrap))
        period = 1.0 / self.rate
        seq = 0
        next_at = time.monotonic()
        while not self._stop.is_set():
            producer.produce(self.topic, value=str(seq).encode(),
                             partition=seq % self.partitions,
                             on_delivery=lambda err, msg, s=seq: self._on_delivery(s, err, msg))
            seq += 1
            producer.poll(0)
            next_at += period
            self._stop.wait(max(0.0, next_at - time.monotonic()))
        remaining = producer.flush(30)
        if remaining:
            log.error("%d record(s) to %s never acknowledged", remaining, self.topic)
        log.info("produced %d record(s) to %s", seq, self.topic)
