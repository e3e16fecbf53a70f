"""The peer-throughput benchmark's raw data and the figures derived from it (pure).

``benchmarks/peers.py`` consumes one topic in interleaved rounds through several consumers of
the ZooKeeper era: the original's ``kafka.tools.ConsumerPerformance --zookeeper`` (the Scala
``ZookeeperConsumerConnector``), this project's connector, pykafka's ``BalancedConsumer`` and a
bare confluent-kafka consumer. This module parses what each consumer reports, keeps one
:class:`RoundResult` per consumer and round (``rounds.csv``), and computes the ratios the docs
show: per round, each consumer's steady rate over a reference's (the original, the bare
client), summarised by the median and the range of those per-round ratios. A load swing on the
shared machine hits every consumer of a round alike, which is why ratios are taken per round
before the median, never between medians.
"""

from __future__ import annotations

import csv
import io
import re
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

# The consumers, in the order tables show them; ``original`` and ``bare`` are the references.
ORIGINAL = "original"
ORIGINAL_STREAM = "original-stream"
BARE = "bare"
PEERS = (ORIGINAL, ORIGINAL_STREAM, "zkconsumer", "zkconsumer-before", "pykafka",
         "pykafka-rdkafka", BARE)
ROUND_FIELDS = ("round", "peer", "order", "messages", "steady_s", "cpu_s", "end_to_end_s",
                "load1")

# ConsumerPerformance's one result line (0.10.2, without --show-detailed-stats):
# start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec
_PERF_LINE = re.compile(
    r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3}), (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3}), "
    r"([0-9.]+), ([0-9.]+), (\d+), ([0-9.]+)\s*$")
_PERF_TIME = "%Y-%m-%d %H:%M:%S:%f"


@dataclass(frozen=True)
class PerfLine:
    """ConsumerPerformance's report: start and end as local epoch seconds (the tool prints local
    wall-clock times to the millisecond), megabytes and messages read."""

    start: float
    end: float
    megabytes: float
    messages: int

    @property
    def elapsed(self) -> float:
        return self.end - self.start


def parse_consumer_performance(stdout: str) -> PerfLine:
    """The result line of ``ConsumerPerformance``'s output; ``ValueError`` names the output
    when there is none (the tool failed, or printed a different format)."""
    for line in stdout.splitlines():
        m = _PERF_LINE.match(line.strip())
        if m:
            start = datetime.strptime(m.group(1), _PERF_TIME).timestamp()
            end = datetime.strptime(m.group(2), _PERF_TIME).timestamp()
            return PerfLine(start, end, float(m.group(3)), int(m.group(5)))
    raise ValueError(f"no ConsumerPerformance result line in its output: {stdout[-400:]!r}")


def interpolate(samples: Sequence[tuple[float, float]], at: float) -> float:
    """The value at time ``at`` on the piecewise-linear curve through ``samples`` ((time,
    value), time ascending): a process's CPU time read every few milliseconds, asked at the
    instants its own report names. Outside the samples the nearest sample's value."""
    if not samples:
        raise ValueError("interpolate: no samples")
    if at <= samples[0][0]:
        return samples[0][1]
    for (t0, v0), (t1, v1) in zip(samples, samples[1:], strict=False):
        if t0 <= at <= t1:
            return v0 if t1 == t0 else v0 + (v1 - v0) * (at - t0) / (t1 - t0)
    return samples[-1][1]


@dataclass(frozen=True)
class RoundResult:
    """One consumer's pass over the topic in one round. ``steady_s``: first to last message
    (ConsumerPerformance: from starting its stream threads, after its own one-second pause,
    to the last message); ``cpu_s``: CPU time of the whole consumer process (all threads) over
    that span; ``end_to_end_s``: from starting the process to its exit; ``order``: its place in
    the round; ``load1``: the machine's one-minute load average when it started."""

    round: int
    peer: str
    order: int
    messages: int
    steady_s: float
    cpu_s: float
    end_to_end_s: float
    load1: float

    @property
    def rate(self) -> float:
        return self.messages / self.steady_s

    @property
    def cpu_us_per_message(self) -> float:
        return self.cpu_s / self.messages * 1e6


def rounds_csv(results: Iterable[RoundResult]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(ROUND_FIELDS)
    for r in results:
        writer.writerow((r.round, r.peer, r.order, r.messages, f"{r.steady_s:.6f}",
                         f"{r.cpu_s:.6f}", f"{r.end_to_end_s:.3f}", f"{r.load1:.2f}"))
    return out.getvalue()


def read_rounds(text: str) -> list[RoundResult]:
    """``rounds.csv`` back into results; ``ValueError`` names a row that does not parse."""
    rows = []
    for i, row in enumerate(csv.DictReader(io.StringIO(text)), 2):
        try:
            rows.append(RoundResult(int(row["round"]), row["peer"], int(row["order"]),
                                    int(row["messages"]), float(row["steady_s"]),
                                    float(row["cpu_s"]), float(row["end_to_end_s"]),
                                    float(row["load1"])))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"rounds.csv line {i}: {row!r}: {exc}") from exc
    return rows


@dataclass(frozen=True)
class Spread:
    """Median and range of a set of per-round values."""

    median: float
    low: float
    high: float
    n: int

    @classmethod
    def of(cls, values: Sequence[float]) -> Spread:
        if not values:
            raise ValueError("Spread.of: no values")
        return cls(statistics.median(values), min(values), max(values), len(values))


@dataclass(frozen=True)
class PeerSummary:
    """One consumer over all rounds: rate and CPU per message, and its per-round ratios of
    steady rate to each reference present in the same round (None where a reference is
    missing from every round, or for the reference itself)."""

    peer: str
    rate: Spread
    cpu_us: Spread
    vs_original: Spread | None
    vs_bare: Spread | None
    vs_original_stream: Spread | None = None


def ratios(results: Sequence[RoundResult], peer: str, reference: str) -> Spread | None:
    """``peer``'s steady rate over ``reference``'s, per round where both ran, summarised (the
    last pass of a consumer that ran twice in a round stands for it)."""
    return _ratios(results, peer, reference)


def _ratios(results: Sequence[RoundResult], peer: str, reference: str) -> Spread | None:
    by_round = {(r.round, r.peer): r for r in results}
    values = [r.rate / by_round[(r.round, reference)].rate for r in results
              if r.peer == peer and (r.round, reference) in by_round]
    return Spread.of(values) if values and peer != reference else None


def summarise(results: Sequence[RoundResult]) -> list[PeerSummary]:
    """One summary per consumer present, in :data:`PEERS` order (others after, by name)."""
    present = {r.peer for r in results}
    order = [p for p in PEERS if p in present] + sorted(present - set(PEERS))
    out = []
    for peer in order:
        mine = [r for r in results if r.peer == peer]
        out.append(PeerSummary(peer, Spread.of([r.rate for r in mine]),
                               Spread.of([r.cpu_us_per_message for r in mine]),
                               _ratios(results, peer, ORIGINAL), _ratios(results, peer, BARE),
                               _ratios(results, peer, ORIGINAL_STREAM)))
    return out


def goal_met(summaries: Sequence[PeerSummary], peer: str = "zkconsumer",
             vs_original: float = 1.0, vs_bare: float = 0.95) -> bool | None:
    """The data path's goal: ``peer``'s median per-round ratio at least ``vs_original`` to the
    original and ``vs_bare`` to the bare client; None when a ratio is missing."""
    s = next((x for x in summaries if x.peer == peer), None)
    if s is None or s.vs_original is None or s.vs_bare is None:
        return None
    return s.vs_original.median >= vs_original and s.vs_bare.median >= vs_bare
