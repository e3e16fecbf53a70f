"""Keyed, numbered messages at a steady rate, so losses and duplicates can be counted exactly.

Keys ``k000 .. k<n-1>`` take turns; each key has its own sequence (``k007:0``, ``k007:1``...)
and always goes to the same partition (``index % partitions``), so every partition keeps
receiving data through the chaos. The value carries key and number, so a consumer needs nothing
else to report what it got. Only what the broker acknowledged counts as produced
(``lab/producer.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from zkconsumer.lab.producer import PacedProducer


@dataclass(frozen=True)
class Acked:
    key: str
    seq: int
    partition: int
    offset: int


def key_name(index: int) -> str:
    return f"k{index:03d}"


class KeyedProducer(PacedProducer):
    def __init__(self, bootstrap: str, topic: str, partitions: int, keys: int,
                 rate: float) -> None:
        if keys < 1 or partitions < 1:
            raise ValueError(f"keys and partitions must be >= 1, got {keys}, {partitions}")
        super().__init__(bootstrap, topic, partitions, rate, f"chaos-producer-{topic}")
        self.keys = keys
        self._seqs = [0] * keys
        self._acked: list[Acked] = []

    @property
    def acked(self) -> list[Acked]:
        with self._lock:
            return list(self._acked)

    def _record(self, n: int) -> tuple[bytes | None, bytes, int, Any]:
        index = n % self.keys
        key, seq = key_name(index), self._seqs[index]
        self._seqs[index] += 1
        return key.encode(), f"{key}:{seq}".encode(), index % self.partitions, (key, seq)

    def _acknowledged(self, tag: Any, partition: int, offset: int) -> None:
        key, seq = tag
        self._acked.append(Acked(key, seq, partition, offset))

    def _label(self, tag: Any) -> str:
        return f"{tag[0]}:{tag[1]}"
