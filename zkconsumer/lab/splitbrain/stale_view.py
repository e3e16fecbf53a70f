"""Stale view: some members see the group late, so members decide from different views.

Every self-coordinating member reads ``/ids`` and the owner znodes itself and acts on what it
read. Here the server→client direction of the *lagging* members' connections is delayed by
``delay_ms`` (watch notifications and every read response), so a lagging member learns of a
change late, still holds its old partitions while the others claim them (owner conflicts,
rollbacks, retries after ``rebalance.backoff.ms``, and after ``rebalance.max.retries`` a
rebalance that gives up), and decides from a view that is already old when it claims.

Why it is reliable, not lucky: the lagging members are the last ones of the group, and in a
range assignment a newcomer (named after everybody) takes its partitions from the end of the
list, i.e. from a lagging member. That member keeps its owner znodes until its watch, then its
own reads, have crossed the delay, several round trips of ``delay_ms`` each; the newcomer claims
within milliseconds, so its first claim meets the old owner. A second newcomer registering
``join_gap_s`` after the first (a ZooKeeper member's gap counts from the previous newcomer's
registration, so the machine's load does not stretch it) changes the group again while the
lagging members are still reading, so their decision is made from a view the others have left
(``conflicting_decisions``).

For a broker-side group the same delay applies to the member's broker connection (heartbeats,
JoinGroup/SyncGroup, fetches): there is no owner to conflict with, only a slower rebalance.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from zkconsumer.lab.group import member_name
from zkconsumer.lab.metrics import EventWindow, decision_rounds
from zkconsumer.lab.runs import RunResult
from zkconsumer.lab.servers import Servers
from zkconsumer.lab.splitbrain.harness import SplitRun
from zkconsumer.lab.splitbrain.spec import SplitBrainSpec
from zkconsumer.scenarios.protocols import ZOOKEEPER

log = logging.getLogger(__name__)

EVENT = "stale-view"


def lagging_members(members: int, lagging: int) -> list[str]:
    """The last ``lagging`` members of a group of ``members``."""
    return [member_name(i) for i in range(members - lagging, members)]


def run_stale_view(spec: SplitBrainSpec, protocol: str, repeat: int, servers: Servers,
                   records_dir: Path, kafka_home: str = "") -> RunResult:
    """``kafka_home``: the 0.10.2 build of an original protocol's members."""
    delay_ms = spec.effective_delay_ms
    with SplitRun(spec, protocol, repeat, servers, records_dir, EVENT,
                  kafka_home=kafka_home) as run:
        assert run.proxies is not None
        run.form()
        lagging = lagging_members(spec.members, spec.effective_lagging)
        for name in lagging:
            run.proxies.get(name).set_latency(downstream_ms=delay_ms)
        event_ts = time.time()
        run.phases["first_join"] = event_ts
        newcomers: list[str] = []
        for j in range(spec.joins):
            if j:
                if run.driver.family == ZOOKEEPER:
                    # the gap runs from the previous newcomer's registration, not from its
                    # start: on a loaded machine connecting alone can take longer than the gap
                    run.group.wait_rebalancing(newcomers[-1], spec.timing.session_timeout_ms
                                               / 1000.0)
                time.sleep(spec.effective_join_gap_s)  # the event's shape, not an assertion
            name = member_name(spec.members + j)
            run.group.spawn(name)
            newcomers.append(name)
        run.phases["last_join"] = time.time()
        settled = run.group.wait_settled(spec.timing.event_deadline_s)
        result = run.finish(event_ts, settled, details={
            "lagging": lagging, "newcomers": newcomers, "delay_ms": delay_ms,
        })
    window = EventWindow(event_ts, result.details["end_ts"], ())
    result.details["decision_rounds"] = [
        {"start_s": round(r.start - event_ts, 3), "end_s": round(r.end - event_ts, 3),
         "distinct_views": r.distinct_views,
         "dissenters": [f"{m}.{i}" for m, i in r.dissenters]}
        for r in decision_rounds(run.group.records.decisions, window)]
    return result
