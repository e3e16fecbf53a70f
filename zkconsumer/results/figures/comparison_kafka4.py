"""docs/comparison.md's Apache Kafka 4 block: every protocol of the lab, KIP-848's among them,
against one Apache Kafka 4 (KRaft) broker, one table per committed chunk
(``results/comparison/compare-apache-kafka-4*``), headed by the KIP-848 heartbeat interval its
broker gave the groups (``meta.json`` ``extra``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from zkconsumer.results.comparison_data import load_runs
from zkconsumer.results.figures.comparison import (
    EVENTS,
    SOURCE,
    folders,
    median_of,
    num,
    select,
)
from zkconsumer.results.provenance import read_provenance
from zkconsumer.results.registry import Context, figure
from zkconsumer.scenarios.protocols import COMPARED_KAFKA4

KAFKA4_PREFIX = "compare-apache-kafka-4"
KAFKA4_PROTOCOLS = COMPARED_KAFKA4
KAFKA4_COLUMNS = (("time_to_stable_s", "stable s"), ("members_paused", "paused"),
                  ("members_idle", "idle"), ("partitions_revoked", "revoked"),
                  ("partition_seconds_unavailable", "part·s"),
                  ("group_rebalances", "rebal."), ("duplicates", "dups"), ("lost", "lost"))


def kafka4_value(run: dict[str, Any], key: str) -> Any:
    """A metric of a run, or one of its extras (``partitions_revoked``, ``members_idle``)."""
    if key in run["metrics"]:
        return run["metrics"][key]
    return ((run.get("details") or {}).get("extra_metrics") or {}).get(key)


def kafka4_table(runs: Sequence[dict[str, Any]]) -> list[str]:
    """Protocols x events of one Apache Kafka 4 chunk: medians over the repeats that ran."""
    protocols = [p for p in KAFKA4_PROTOCOLS if any(r["protocol"] == p for r in runs)]
    head = ["event", "protocol", "n"] + [short for _, short in KAFKA4_COLUMNS]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for event in EVENTS:
        for protocol in protocols:
            cell = select(runs, protocol, event)
            if not cell:
                continue
            ok = [r for r in cell if r["status"] == "ok"]
            values = ([num(median_of(ok, key, lambda r, k=key: kafka4_value(r, k)))
                       for key, _ in KAFKA4_COLUMNS] if ok
                      else [f"**{cell[0]['status']}**"] + [""] * (len(KAFKA4_COLUMNS) - 1))
            lines.append("| " + " | ".join([event, protocol, f"{len(ok)}/{len(cell)}",
                                            *values]) + " |")
    return lines


@figure("comparison-kafka4", source=f"{SOURCE}/{KAFKA4_PREFIX}*")
def comparison_kafka4(ctx: Context) -> str:
    """Every protocol, KIP-848's among them, against one Apache Kafka 4 broker: one table per
    committed chunk, headed by the KIP-848 heartbeat its broker gave the groups."""
    chunks = folders(ctx, KAFKA4_PREFIX)
    if not chunks:
        return "_No Apache Kafka 4 runs committed yet._"
    lines: list[str] = []
    for folder in chunks:
        meta = read_provenance(folder)
        runs = load_runs(folder)
        hb = meta.extra.get("consumer_heartbeat_interval_ms")
        source = meta.extra.get("consumer_heartbeat_source", "")
        ok = [r for r in runs if r["status"] == "ok"]
        lost = sum(int(r["metrics"].get("lost") or 0) for r in ok)
        lines += [f"`{folder.name}`: KIP-848 heartbeat {hb} ms"
                  + (f" ({source})" if source else "") + f"; {meta.conditions()}; "
                  f"`{meta.command}`", ""]
        lines += kafka4_table(runs)
        lines += ["", f"Records lost over the chunk's {len(ok)} measured runs: {lost}."]
        reasons = sorted({r["reason"] for r in runs if r["status"] != "ok" and r.get("reason")})
        lines += [f"Not measured: \"{reason}\"." for reason in reasons]
        lines.append("")
    return "\n".join(lines).rstrip()
