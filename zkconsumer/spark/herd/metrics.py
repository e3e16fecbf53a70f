"""The lab's herd metrics of real runs, computed by Spark from the rows the tasks returned.

Inputs are three DataFrames: the members' records (:data:`.task.RECORD_DDL`), what the
broker acknowledged (``run_id, partition, offset, seq``) and one window per run
(:data:`WINDOW_DDL`). Counting metrics are Spark aggregations over the event window; the two
that need the ownership intervals (time to stable, members paused) run the lab's own pure
functions on the executors, one run's timeline per group, so both modes and ``experiment
compare`` define them identically. Definitions (as in :mod:`zkconsumer.lab.metrics`, except
``rebalance_attempts``, which is the most attempts one member made, as the simulator counts it;
``attempts_total`` is the sum):

- ``coordination_requests``: client-counted requests (ZooKeeper operations, or group-coordinator
  requests) from the event until the group was stable, summed over member incarnations. Offset
  commits (ZooKeeper ``setData``, the leader mode's commit multi, ``OffsetCommit``) are left
  out: their number follows the commit interval and the traffic, not the protocol. The
  members sample their cumulative counters about every second, so "until stable" is each
  member's first sample after the stable instant (a rebalance that ends just before it, e.g.
  after a session expiry, is then fully counted; the window's end, ``quiet_s`` later, would
  add seconds of heartbeats);
- ``rebalance_attempts``: ZooKeeper family and KIP-848 groups (no JoinGroup): ``attempt``
  records per member; classic broker groups: JoinGroup requests per member; the maximum over
  members;
- ``conflicts``, ``failed_rebalances``, ``watch_notifications``, ``rollbacks``: coordination
  records in the window; ``lost``: acknowledged records never delivered by the end of the
  run (``drained`` says whether the members had caught up with the producer by then: if not,
  ``lost`` counts records still in flight, not records proven lost).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from typing import Any

from zkconsumer.metrics import COMMIT_MULTI
from zkconsumer.scenarios.protocols import ORIGINALS

log = logging.getLogger(__name__)

WINDOW_DDL = ("run_id string, protocol string, members int, partitions int, event string, "
              "seed int, family string, event_ts double, end_ts double, settled boolean, "
              "tasks int, session_timeout_ms int, victim string, drained boolean")
PRODUCED_DDL = "run_id string, partition int, offset long, seq long"
COMMIT_REQUESTS = ("setData", "OffsetCommit", COMMIT_MULTI)
SAMPLE_AFTER_S = 1.3  # one request sampling interval (1 s) and the members' poll slack


def interval_metrics(raws: Iterable[str], window: dict[str, Any]) -> tuple[float | None, int]:
    """(time to stable, members paused) of one run from its ``tl``/``lc`` records (executor)."""
    from zkconsumer.lab.intervals import build_intervals, departures
    from zkconsumer.lab.metrics import EventWindow, members_paused, time_to_stable
    from zkconsumer.lab.records import RunRecords, Timeline

    records = RunRecords()
    for raw in raws:
        records.add(json.loads(raw))
    records.sort()
    start, end = window["event_ts"], window["end_ts"]
    if start is None or end is None:
        return None, 0
    after = window["members"] + (1 if window["event"] == "join" else -1)
    names = {e.member for e in records.timeline} | {lc.member for lc in records.lifecycle}
    names.discard(window["victim"] or "")
    required = tuple(sorted(names)) if window["partitions"] >= after else ()
    intervals = build_intervals(records, end, Timeline.FETCHING)
    w = EventWindow(start, end, required)
    tts = time_to_stable(intervals, window["partitions"], w) if window["settled"] else None
    return tts, len(members_paused(intervals, w, departures(records)))


def stability_table(spark: Any, records: Any, windows: Any) -> Any:
    """``run_id, time_to_stable_s, members_paused`` per run (:func:`interval_metrics`)."""
    from pyspark.sql import functions as F

    by_run = {r["run_id"]: r.asDict() for r in windows.collect()}  # one small row per run
    timelines = (records.filter(F.col("kind").isin("tl", "lc")).select("run_id", "raw").rdd
                 .map(lambda r: (r[0], r[1])).groupByKey()
                 .map(lambda kv: (kv[0], *interval_metrics(kv[1], by_run[kv[0]]))))
    return spark.createDataFrame(timelines, "run_id string, time_to_stable_s double, "
                                            "members_paused int")


def request_deltas(records: Any, windows: Any, ivs: Any) -> Any:
    """Requests per (run, member, incarnation, request name) in the counting window.

    Each member's cumulative counter at its last sample before stable + ``SAMPLE_AFTER_S``
    (the window's end if it never settled) minus at its last sample before the event; every
    request name, offset commits included (the caller leaves them out of the total).
    """
    from pyspark.sql import functions as F

    stable_at = (windows.join(ivs, "run_id", "left").select(
        "run_id", "event_ts", F.when(F.col("time_to_stable_s").isNotNull(),
                                     F.col("event_ts") + F.col("time_to_stable_s")
                                     + SAMPLE_AFTER_S)
        .otherwise(F.col("end_ts")).alias("req_end")))
    samples = (records.filter(F.col("kind") == "rq").join(F.broadcast(stable_at), "run_id")
               .withColumn("c", F.from_json("raw", "struct<c: map<string, bigint>>")["c"])
               .select("run_id", "member", "incarnation", "ts", "event_ts", "req_end",
                       F.explode("c").alias("name", "value")))
    return (samples.groupBy("run_id", "member", "incarnation", "name").agg(
        F.max(F.when(F.col("ts") <= F.col("req_end"), F.col("value"))).alias("at_end"),
        F.max(F.when(F.col("ts") <= F.col("event_ts"), F.col("value"))).alias("at_start"))
        .withColumn("delta", F.greatest(F.coalesce("at_end", F.lit(0))
                                        - F.coalesce("at_start", F.lit(0)), F.lit(0))))


def metrics_table(spark: Any, records: Any, produced: Any, windows: Any) -> Any:
    """One row per run with the sweep table's columns (see :mod:`.tables`)."""
    from pyspark.sql import functions as F

    w = windows.select("run_id", "event_ts", "end_ts")
    rec = records.join(F.broadcast(w), "run_id")
    inwin = (F.col("ts") >= F.col("event_ts")) & (F.col("ts") <= F.col("end_ts"))

    def count_what(*whats: str) -> Any:
        return F.sum(F.when(F.col("what").isin(*whats), 1).otherwise(0))

    coord = (rec.filter((F.col("kind") == "co") & inwin).groupBy("run_id").agg(
        count_what("owner_conflict").alias("conflicts"),
        count_what("rebalance_failed", "assignment_lost").alias("failed_rebalances"),
        count_what("watch_fired").alias("watch_notifications"),
        count_what("rollback").alias("rollbacks"),
        count_what("attempt").alias("zk_attempts_total")))
    zk_attempts = (rec.filter((F.col("kind") == "co") & (F.col("what") == "attempt") & inwin)
                   .groupBy("run_id", "member").count()
                   .groupBy("run_id").agg(F.max("count").alias("zk_attempts")))

    ivs = stability_table(spark, records, windows).cache()
    deltas = request_deltas(records, windows, ivs).filter(~F.col("name").isin(*COMMIT_REQUESTS))
    requests = deltas.groupBy("run_id").agg(F.sum("delta").alias("coordination_requests"))
    joins = (deltas.filter(F.col("name") == "JoinGroup").groupBy("run_id", "member")
             .agg(F.sum("delta").alias("joins")).groupBy("run_id")
             .agg(F.max("joins").alias("broker_attempts"), F.sum("joins").alias("broker_total")))

    deliveries = rec.filter(F.col("kind") == "d")
    delivered = deliveries.groupBy("run_id").agg(
        F.count(F.lit(1)).alias("delivered"),
        F.countDistinct("partition", "offset").alias("distinct_delivered"))
    lost = (produced.join(deliveries.select("run_id", "partition", "offset").distinct(),
                          ["run_id", "partition", "offset"], "left_anti")
            .groupBy("run_id").agg(F.count(F.lit(1)).alias("lost")))
    produced_n = produced.groupBy("run_id").agg(F.count(F.lit(1)).alias("produced"))

    zk = F.col("family") == "zookeeper"
    # The original's JVM members count no requests and log no watch notification or rollback:
    # not observed, not zero.
    counted = ~F.col("protocol").isin(*ORIGINALS)
    # Members that count their own attempts: ZooKeeper members, and KIP-848 members (no
    # JoinGroup; one attempt record per reconciliation). Classic broker members write none.
    own = zk | ((F.col("broker_total") == 0) & (F.col("zk_attempts_total") > 0))
    table = (windows.join(coord, "run_id", "left").join(zk_attempts, "run_id", "left")
             .join(requests, "run_id", "left").join(joins, "run_id", "left")
             .join(delivered, "run_id", "left").join(lost, "run_id", "left")
             .join(produced_n, "run_id", "left").join(ivs, "run_id", "left")
             .na.fill(0, ["conflicts", "failed_rebalances", "watch_notifications", "rollbacks",
                          "zk_attempts_total", "zk_attempts", "coordination_requests",
                          "broker_attempts", "broker_total", "delivered", "distinct_delivered",
                          "lost", "produced", "members_paused"]))
    return table.select(
        "protocol", "members", "partitions", "event", "seed",
        F.when(counted, F.col("coordination_requests")).cast("long")
        .alias("coordination_requests"),
        F.when(own, F.col("zk_attempts")).otherwise(F.col("broker_attempts"))
        .cast("int").alias("rebalance_attempts"),
        F.col("conflicts").cast("int"), "time_to_stable_s", "members_paused",
        F.col("failed_rebalances").cast("int"), F.col("lost").cast("long"),
        F.lit("real").alias("mode"), F.lit(False).alias("simulated_only"),
        F.when(zk & counted, F.col("watch_notifications")).cast("long")
        .alias("watch_notifications"),
        F.when(own, F.col("zk_attempts_total")).otherwise(F.col("broker_total"))
        .cast("long").alias("attempts_total"),
        F.lit(None).cast("int").alias("members_woken"),
        F.when(counted, F.col("rollbacks")).cast("int").alias("rollbacks"),
        F.lit(None).cast("long").alias("zk_reads"), F.lit(None).cast("long").alias("zk_writes"),
        F.lit(None).cast("int").alias("leader_computations"),
        F.lit(None).cast("double").alias("max_unowned_s"),
        F.lit(None).cast("long").alias("sim_events"),
        "tasks", F.col("produced").cast("long"), F.col("delivered").cast("long"),
        (F.col("delivered") - F.col("distinct_delivered")).cast("long").alias("duplicates"),
        "session_timeout_ms", "settled", "drained")
