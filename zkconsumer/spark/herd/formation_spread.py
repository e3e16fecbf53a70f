"""``spark formation-spread``: where a formed KIP-848 group's heartbeat schedules stood.

    zkconsumer spark formation-spread --raw DIR [--raw DIR ...] --out FILE.csv

A KIP-848 member learns of a change only from its own next heartbeat, and librdkafka restarts
its heartbeat interval at every heartbeat it sends, so how long a real join or leave takes is
set by where the members' schedules stood when the lab applied its event. The records show it:
a member's assignment records come just after one of its heartbeats, so its last record of the
formation stands on its schedule. This job reads a real-mode sweep's raw output
(``DIR/records/<run>``, ``DIR/windows/<run>.json`` and the broker's interval in
``DIR/meta.json``, written by ``spark herd --mode real`` on Apache Kafka 4) and writes one row
per measured quantity, each against the group's last change of the formation (the last
``assigned``/``revoked`` record before the event):

- ``schedule``: a member's last formation record, wrapped into ±half an interval;
- ``idle_grant``: a member the formation gave nothing, at the grant the event brought it
  (its first heartbeat's schedule: it never acknowledged anything), wrapped the same way;
- ``tick_lead``: how long before its last formation record the member's last statistics
  sample came (modulo the 1 s statistics interval);
- ``event_lag``: the event after the last change (one row per run).

The KIP-848 model's formation spans (:data:`zkconsumer.sim.formation.KIP848_SCHEDULES_S` and
its neighbours) are read off these rows of the fitting runs. :func:`spread_rows` is pure.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from zkconsumer.results.provenance import recorded_heartbeat_ms
from zkconsumer.tables import nearest_rank

COLUMNS = ("run_id", "members", "event", "heartbeat_ms", "kind", "member", "seconds")
KINDS = ("schedule", "idle_grant", "tick_lead", "event_lag")
STATS_INTERVAL_S = 1.0  # librdkafka's statistics.interval.ms in the lab


def wrap(offset_s: float, interval_s: float) -> float:
    """``offset_s`` modulo one interval, into [-interval/2, interval/2)."""
    return (offset_s + interval_s / 2) % interval_s - interval_s / 2


def spread_rows(records: Iterable[dict[str, Any]], window: dict[str, Any],
                heartbeat_ms: int) -> list[dict[str, Any]]:
    """The rows of one run from its records (``kind``, ``ts``, ``member``, ``what``)."""
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
    for member, ts in sorted(last_record.items()):
        rows.append(dict(base, kind="schedule", member=member,
                         seconds=round(wrap(ts - last_change, interval), 4)))
        samples = [r["ts"] for r in ordered
                   if r["kind"] == "rq" and r["member"] == member and r["ts"] < ts]
        if samples:
            rows.append(dict(base, kind="tick_lead", member=member,
                             seconds=round((ts - samples[-1]) % STATS_INTERVAL_S, 4)))
    started = {r["member"] for r in ordered
               if r["kind"] == "lc" and r["what"] == "starting" and r["ts"] < event}
    for member in sorted(started - set(last_record)):
        grants = [r["ts"] for r in ordered if r["kind"] == "tl" and r["what"] == "assigned"
                  and r["member"] == member and event < r["ts"] < event + interval + 0.5]
        if grants:
            rows.append(dict(base, kind="idle_grant", member=member,
                             seconds=round(wrap(grants[0] - last_change, interval), 4)))
    return rows


def quantiles(rows: Sequence[dict[str, Any]], kind: str
              ) -> tuple[int, float | None, float | None, float | None]:
    """(n, 5 %, median, 95 %) of one kind's seconds (nearest rank)."""
    values = [float(r["seconds"]) for r in rows if r["kind"] == kind]
    return (len(values), *(nearest_rank(values, q) for q in (0.05, 0.5, 0.95)))


def broker_heartbeat_ms(raw: Path) -> int:
    """The KIP-848 heartbeat interval the sweep's broker gave its members (its ``meta.json``)."""
    hb = recorded_heartbeat_ms(raw)
    if hb is None:
        raise ValueError(f"{raw}: meta.json names no KIP-848 heartbeat interval (a sweep of "
                         "consumer-* groups on Apache Kafka 4: `spark herd --mode real "
                         "--broker kafka:...kafka-4.0`)")
    return hb


def add_arguments(p: argparse.ArgumentParser) -> None:
    from zkconsumer.spark.herd.request_types import add_records_arguments

    add_records_arguments(p, "a real-mode output directory of KIP-848 runs (records/, "
                             "windows/, meta.json); may repeat")


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
        for raw, windows, hb in inputs:
            for w in windows:
                rows += spread_rows(run_records(session, raw, w["run_id"], ("tl", "rq", "lc")),
                                    w, hb)
    write_rows_csv(args.out, COLUMNS, rows, prov)
    for kind in KINDS:
        n, lo, mid, hi = quantiles(rows, kind)
        if n:
            print(f"{kind}: n = {n}, 5 % {lo:+.3f} s, median {mid:+.3f} s, 95 % {hi:+.3f} s")
    print(f"wrote {args.out}: {len(rows)} rows from {len(args.raw)} sweeps")
    return 0
