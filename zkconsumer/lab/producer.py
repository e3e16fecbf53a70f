"""Steady, slow producers running through a whole run, so losses and duplicates show.

Only what the broker acknowledged counts as produced (with its partition and offset from the
delivery report): losses are measured against that, never against the broker's end offsets,
which Tansu 0.6.0 reports wrongly. One record per batch (``producer_config``) for the same
reason. :class:`PacedProducer` is the paced sending thread; the subclasses decide what each
record is and what is kept of its acknowledgement.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from zkconsumer.admin.produce import producer_config
from zkconsumer.lab.metrics import Produced

log = logging.getLogger(__name__)


class PacedProducer:
    """Sends record ``n`` at ``n / rate`` s after the start until stopped, on its own thread."""

    def __init__(self, bootstrap: str, topic: str, partitions: int, rate: float,
                 thread_name: str) -> None:
        if partitions < 1:
            raise ValueError(f"partitions must be >= 1, got {partitions}")
        self.topic = topic
        self.partitions = partitions
        self.rate = max(rate, 0.1)
        self._bootstrap = bootstrap
        self._lock = threading.Lock()
        self._errors: list[str] = []
        self._sent = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=thread_name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 40.0) -> None:
        """Stop sending and wait until every record was acknowledged or failed."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    @property
    def errors(self) -> list[str]:
        with self._lock:
            return list(self._errors)

    @property
    def sent(self) -> int:
        return self._sent

    # --- what the subclasses decide ------------------------------------------------------------

    def _record(self, n: int) -> tuple[bytes | None, bytes, int, Any]:
        """Record ``n``: key, value, partition and a tag handed back with its acknowledgement."""
        raise NotImplementedError

    def _acknowledged(self, tag: Any, partition: int, offset: int) -> None:
        """Keep an acknowledged record (called under the lock)."""
        raise NotImplementedError

    def _label(self, tag: Any) -> str:
        return str(tag)

    # --- the thread ----------------------------------------------------------------------------

    def _on_delivery(self, tag: Any, err: object, msg: Any) -> None:
        with self._lock:
            if err is not None:
                self._errors.append(f"{self._label(tag)}: {err}")
            else:
                self._acknowledged(tag, msg.partition(), msg.offset())

    def _run(self) -> None:
        from confluent_kafka import Producer

        producer = Producer(producer_config(self._bootstrap))
        period = 1.0 / self.rate
        n = 0
        next_at = time.monotonic()
        while not self._stop.is_set():
            key, value, partition, tag = self._record(n)
            while True:
                try:
                    producer.produce(self.topic, key=key, value=value, partition=partition,
                                     on_delivery=lambda err, msg, t=tag: self._on_delivery(
                                         t, err, msg))
                    break
                except BufferError:  # the client's queue is full: let it deliver first
                    producer.poll(0.05)
            n += 1
            self._sent = n
            producer.poll(0)
            next_at += period
            self._stop.wait(max(0.0, next_at - time.monotonic()))
        remaining = producer.flush(30)
        if remaining:
            log.error("%d record(s) to %s never acknowledged", remaining, self.topic)
        log.info("sent %d record(s) to %s", n, self.topic)


class SteadyProducer(PacedProducer):
    """Values are sequence numbers; record ``seq`` goes to partition ``seq % partitions``.

    Every partition keeps receiving data during a rebalance.
    """

    def __init__(self, bootstrap: str, topic: str, partitions: int, rate: float) -> None:
        super().__init__(bootstrap, topic, partitions, rate, f"lab-producer-{topic}")
        self._produced: list[Produced] = []

    @property
    def produced(self) -> list[Produced]:
        with self._lock:
            return list(self._produced)

    def last_offsets(self) -> dict[str, int]:
        """The highest acknowledged offset per partition, keyed by its number as text (the
        keys of a task's ``delivered_max``)."""
        last: dict[str, int] = {}
        for p in self.produced:
            last[str(p.partition)] = max(last.get(str(p.partition), -1), p.offset)
        return last

    def _record(self, n: int) -> tuple[bytes | None, bytes, int, Any]:
        return None, str(n).encode(), n % self.partitions, n

    def _acknowledged(self, tag: Any, partition: int, offset: int) -> None:
        self._produced.append(Produced(partition, offset, tag))

    def _label(self, tag: Any) -> str:
        return f"seq {tag}"
