"""``spark formation-spread``: where a formed broker-side group's heartbeat schedules stood.

    zkconsumer spark formation-spread --raw DIR [--raw DIR ...] --out FILE.csv

A KIP-848 member learns of a change only from its own next heartbeat, and librdkafka restarts
its heartbeat interval at every heartbeat it sends, so how long a real join or leave takes is
set by where the members' schedules stood when the lab applied its event. The records show it:
a member's assignment records come just after one of its heartbeats, so its last record of the
formation stands on its schedule. This job reads a real-mode sweep's raw output
(``DIR/records/<run>``, ``DIR/windows/<run>.json`` and the broker's interval in
``DIR/meta.json``, written by ``spark herd --mode real`` on Apache Kafka 4; for a classic
group, e.g. on Tansu, the interval is the lab's third of the session) and writes one row per
measured quantity, each against the group's last change of the formation (the last
``assigned``/``revoked`` record before the event):

- ``schedule``: a member's last formation record, wrapped into ±half an interval;
- ``idle_grant``: a member the formation gave nothing, at the grant the event brought it
  (its first heartbeat's schedule: it never acknowledged anything), wrapped the same way;
- ``tick_lead``: how long before its last formation record the member's last statistics
  sample came (modulo the 1 s statistics interval);
- ``event_lag``: the event after the last change (one row per run);
- ``straggler``: in a classic group, a member whose last formation record came more than
  ``STRAGGLER_GAP_S`` after the group's first one, at that many seconds after it; a run
  without such rows had no straggler;
- ``task_tick``: for each Spark task but task 0, how long after task 0's its clients' last
  statistics tick came (each client's last sample before the last change, wrapped into ±half
  the statistics interval; member ``task K``): negative when task 0, which hosts a join's
  joiner, started its clients last;
- ``producer_event``: the event after the lab producer's first record (one row per run, for
  every family; a ZooKeeper group's runs get only this row and ``event_lag``): where the
  event fell on the producer's cycle, which sets when a legacy member's stream and fetchers
  next wake (:mod:`zkconsumer.sim.producer_schedule`). The producer sends record ``n`` at
  ``n / rate`` after its first, so each delivery before the event gives its start plus that
  delivery's latency; the least over the run's deliveries (hundreds) is taken for its start;
- ``formation_read``: a ZooKeeper group's formation, read as a measure of the run's speed (one
  row per run): the median over its members of their first attempt's time from its start to
  their first plan (``co`` ``attempt`` to ``dc``), before the event. The group forms as a herd
  of the same size as the event's, on the same registry, so a run set whose machine ran slower
  shows it here before its event as well as after.

The KIP-848 model's formation spans (:data:`zkconsumer.sim.formation.KIP848_SCHEDULES_S` and
its neighbours) and Tansu's (:data:`zkconsumer.sim.formation.TANSU`) are read off these rows.
:func:`spread_rows` is pure.
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from zkconsumer.lab.drivers.broker import STATS_INTERVAL_MS
from zkconsumer.lab.member_config import lab_heartbeat_interval_ms
from zkconsumer.results.provenance import META_FILE, read_provenance, recorded_heartbeat_ms
from zkconsumer.scenarios.timing import Timing
from zkconsumer.tables import nearest_rank

COLUMNS = ("run_id", "members", "event", "heartbeat_ms", "kind", "member", "seconds")
KINDS = ("schedule", "idle_grant", "tick_lead", "event_lag", "straggler", "task_tick",
         "producer_event", "formation_read")
STATS_INTERVAL_S = STATS_INTERVAL_MS / 1000.0  # librdkafka's statistics.interval.ms in the lab
# A Tansu formation answered its members within 0.66 s of the first (a whole task late by up
# to that), or one look later, 1.00 s (0.998-1.005 s in results/scale/tansu-formation: the
# stragglers of :data:`zkconsumer.sim.formation.TANSU`); the gap between the two decides
STRAGGLER_GAP_S = 0.8


def wrap(offset_s: float, interval_s: float) -> float:
    """``offset_s`` modulo one interval, into [-interval/2, interval/2)."""
    return (offset_s + interval_s / 2) % interval_s - interval_s / 2


def producer_event_s(records: Iterable[dict[str, Any]], event_ts: float,
                     rate: float) -> float | None:
    """The event after the producer's first record: the least of ``ts - seq / rate`` over the
    deliveries (``d`` records with a ``seq``) before the event is the producer's start plus
    the quickest delivery; None without a delivery."""
    starts = [r["ts"] - int(r["seq"]) / rate for r in records
              if r["kind"] == "d" and r.get("seq") is not None and r["ts"] < event_ts]
    return round(event_ts - min(starts), 4) if starts else None


def formation_read_s(ordered: Iterable[dict[str, Any]], event_ts: float) -> float | None:
    """The median over the members of their first attempt's start (``co`` ``attempt``) to
    their first plan (``dc``), both before the event, from records in time order; None where
    no member planned."""
    started: dict[str, float] = {}
    reads: dict[str, float] = {}
    for r in ordered:
        if r["ts"] >= event_ts:
            break
        if r["kind"] == "co" and r["what"] == "attempt":
            started.setdefault(r["member"], r["ts"])
        elif r["kind"] == "dc" and r["member"] in started and r["member"] not in reads:
            reads[r["member"]] = r["ts"] - started[r["member"]]
    return round(statistics.median(reads.values()), 4) if reads else None


def spread_rows(records: Iterable[dict[str, Any]], window: dict[str, Any],
                heartbeat_ms: int, classic: bool = False,
                rate: float = Timing().produce_rate) -> list[dict[str, Any]]:
    """The rows of one run from its records (``kind``, ``ts``, ``member``, ``what``, and
    ``task`` for the ``task_tick`` rows, ``seq`` for the deliveries); ``straggler`` rows for a
    ``classic`` broker group only, a ZooKeeper group's (``family``) only its event's;
    ``rate``: the lab producer's messages a second."""
    interval = heartbeat_ms / 1000.0
    event = float(window["event_ts"])
    ordered = sorted(records, key=lambda r: r["ts"])
    formation = [r for r in ordered if r["kind"] == "tl" and r["ts"] < event
                 and r["what"] in ("assigned", "revoked")]
    base = {"run_id": window["run_id"], "members": int(window["members"]),
            "event": window["event"], "heartbeat_ms": heartbeat_ms}
    if not formation:
        return []
    last_change = formation[-1]["ts"]
    last_record = {r["member"]: r["ts"] for r in formation}
    rows = [dict(base, kind="event_lag", member="", seconds=round(event - last_change, 4))]
    on_producer = producer_event_s(ordered, event, rate)
    if on_producer is not None:
        rows.append(dict(base, kind="producer_event", member="", seconds=on_producer))
    if window.get("family") == "zookeeper":  # no heartbeats, no statistics ticks
        read = formation_read_s(ordered, event)
        if read is not None:
            rows.append(dict(base, kind="formation_read", member="", seconds=read))
        return rows
    for member, ts in sorted(last_record.items()):
        rows.append(dict(base, kind="schedule", member=member,
                         seconds=round(wrap(ts - last_change, interval), 4)))
        samples = [r["ts"] for r in ordered
                   if r["kind"] == "rq" and r["member"] == member and r["ts"] < ts]
        if samples:
            rows.append(dict(base, kind="tick_lead", member=member,
                             seconds=round((ts - samples[-1]) % STATS_INTERVAL_S, 4)))
    if classic:
        first = min(last_record.values())
        rows += [dict(base, kind="straggler", member=member, seconds=round(ts - first, 4))
                 for member, ts in sorted(last_record.items())
                 if ts - first > STRAGGLER_GAP_S]
    started = {r["member"] for r in ordered
               if r["kind"] == "lc" and r["what"] == "starting" and r["ts"] < event}
    for member in sorted(started - set(last_record)):
        grants = [r["ts"] for r in ordered if r["kind"] == "tl" and r["what"] == "assigned"
                  and r["member"] == member and event < r["ts"] < event + interval + 0.5]
        if grants:
            rows.append(dict(base, kind="idle_grant", member=member,
                             seconds=round(wrap(grants[0] - last_change, interval), 4)))
    rows += [dict(base, kind="task_tick", member=f"task {task}", seconds=lag)
             for task, lag in task_tick_lags(ordered, started, last_change)]
    return rows


def task_tick_lags(ordered: Sequence[dict[str, Any]], members: set[str], last_change: float
                   ) -> list[tuple[str, float]]:
    """(task, lag) for each task but task 0: its clients' latest statistics tick after task
    0's, each client's tick being its last sample before ``last_change``, wrapped into ±half
    the statistics interval around it."""
    ticks: dict[str, float] = {}
    task_of: dict[str, str] = {}
    for r in ordered:
        if r["kind"] == "rq" and r["member"] in members and r["ts"] < last_change:
            ticks[r["member"]] = r["ts"]
            task_of[r["member"]] = str(r.get("task", ""))
    latest: dict[str, float] = {}
    for member, ts in ticks.items():
        phase = wrap(ts - last_change, STATS_INTERVAL_S)
        task = task_of[member]
        latest[task] = max(latest.get(task, phase), phase)
    if "0" not in latest:
        return []
    return [(task, round(wrap(latest[task] - latest["0"], STATS_INTERVAL_S), 4))
            for task in sorted(latest) if task != "0"]


def quantiles(rows: Sequence[dict[str, Any]], kind: str
              ) -> tuple[int, float | None, float | None, float | None]:
    """(n, 5 %, median, 95 %) of one kind's seconds (nearest rank)."""
    values = [float(r["seconds"]) for r in rows if r["kind"] == kind]
    return (len(values), *(nearest_rank(values, q) for q in (0.05, 0.5, 0.95)))


def broker_heartbeat_ms(raw: Path) -> tuple[int, bool]:
    """The heartbeat interval of the sweep's members and whether they are a classic group: the
    KIP-848 one its broker gave them, or else the classic members' own, a third of the session
    timeout its ``meta.json`` records."""
    hb = recorded_heartbeat_ms(raw)
    if hb is not None:
        return hb, False
    session = (read_provenance(raw).extra.get("session_timeout_ms")
               if (raw / META_FILE).is_file() else None)
    if session is None:
        raise ValueError(f"{raw}: meta.json names neither a KIP-848 heartbeat interval nor a "
                         "session timeout (the local output of `spark herd --mode real`)")
    return lab_heartbeat_interval_ms(int(str(session))), True


def add_arguments(p: argparse.ArgumentParser) -> None:
    from zkconsumer.spark.herd.request_types import add_records_arguments

    add_records_arguments(p, "a real-mode output directory (records/, windows/, meta.json); "
                             "may repeat")


def run(args: argparse.Namespace, spark: Any = None) -> int:
    """The job; ``spark`` reuses a session (tests), else one is created and stopped."""
    from zkconsumer.results import capture
    from zkconsumer.results.provenance import write_rows_csv
    from zkconsumer.spark.herd.request_types import (
        raw_windows,
        records_job_command,
        run_records,
    )
    from zkconsumer.spark.session import session_for

    prov = capture(records_job_command("formation-spread", args))
    inputs = [(raw, raw_windows(raw), broker_heartbeat_ms(raw)) for raw in args.raw]
    rows: list[dict[str, Any]] = []
    with session_for(spark, args.master, "zkconsumer-formation-spread") as session:
        for raw, windows, (hb, classic) in inputs:
            for w in windows:
                rows += spread_rows(run_records(session, raw, w["run_id"],
                                                ("tl", "rq", "lc", "d", "co", "dc")),
                                    w, hb, classic)
    write_rows_csv(args.out, COLUMNS, rows, prov)
    for kind in KINDS:
        n, lo, mid, hi = quantiles(rows, kind)
        if n:
            print(f"{kind}: n = {n}, 5 % {lo:+.3f} s, median {mid:+.3f} s, 95 % {hi:+.3f} s")
    print(f"wrote {args.out}: {len(rows)} rows from {len(args.raw)} sweeps")
    return 0
