"""The leader mode in the lab's own scenarios (small groups): no herd, no split brain.

The same harness and metrics as the legacy runs (``lab/herd/run.py``, ``lab/splitbrain``); the full
sweeps and their figures are in ``docs/leader.md``.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from zkconsumer.lab.herd.run import run_herd
from zkconsumer.lab.herd.spec import HERD_TIMING, HerdSpec
from zkconsumer.lab.runs import RunStatus
from zkconsumer.lab.servers import Servers
from zkconsumer.lab.splitbrain import SplitBrainSpec, run_stale_view, run_zombie
from zkconsumer.lab.splitbrain.spec import DEFAULT_TIMING

TIMING = replace(DEFAULT_TIMING, session_timeout_ms=3000, quiet_s=1.0)
PROTOCOL = "zk-leader-range"


@pytest.mark.timeout(180)
def test_zombie_is_never_double_owned_and_its_commits_never_win(zk_connect, broker, tmp_path):
    spec = SplitBrainSpec(scenario="zombie", protocols=(PROTOCOL,), members=2, partitions=4,
                          timing=TIMING, overlap_s=1.0)
    result = run_zombie(spec, PROTOCOL, 0, Servers(zk_connect, broker.bootstrap),
                        tmp_path / "zombie")
    assert result.status == RunStatus.OK.value, result.reason
    m, d = result.metrics, result.details
    assert d["takeover_s"] is not None, "the survivor took the zombie's partitions over"
    assert d["pause_s"] > 3.0, "cut off for longer than the session timeout"
    assert m["double_owned_intervals"] == 0 and m["double_owned_s"] == 0
    assert m["zombie_overlap_deliveries"] == 0 and not d["overlaps"]
    assert m["offset_regressions"] == 0, "no commit of the zombie was accepted late"
    assert m["lost"] == 0


@pytest.mark.timeout(180)
def test_stale_view_makes_no_conflicting_decision_and_no_failed_rebalance(
        zk_connect, broker, tmp_path):
    spec = SplitBrainSpec(scenario="stale-view", protocols=(PROTOCOL,), members=3,
                          partitions=6, timing=TIMING)
    result = run_stale_view(spec, PROTOCOL, 0, Servers(zk_connect, broker.bootstrap),
                            tmp_path / "stale")
    assert result.status == RunStatus.OK.value, result.reason
    m, d = result.metrics, result.details
    assert d["lagging"] == ["m02"] and d["newcomers"] == ["m03", "m04"]
    assert m["conflicting_decisions"] == 0, "only the leader decides"
    assert m["conflicts"] == 0 and m["rollbacks"] == 0
    assert m["failed_rebalances"] == 0
    assert d["settled"] and m["lost"] == 0


@pytest.mark.timeout(240)
def test_herd_a_join_costs_requests_linear_in_the_group_and_no_conflict(
        zk_connect, broker, tmp_path):
    spec = HerdSpec(protocols=(PROTOCOL,), members=(2, 6), partitions=4, events=("join",),
                    timing=replace(HERD_TIMING, quiet_s=1.0), ping_window_s=0.5,
                    settle_margin_s=0.6, zk_connect=zk_connect, bootstrap=broker.bootstrap,
                    dedicated_zookeeper=False, out_dir=str(tmp_path / "herd"))
    result = run_herd(spec)
    runs = {r.members: r for r in result.runs}
    assert all(r.status == RunStatus.OK.value for r in runs.values()), \
        [r.reason for r in runs.values()]
    small, large = runs[2].metrics, runs[6].metrics
    for m in (small, large):
        assert m["conflicts"] == 0 and m["conflicting_decisions"] == 0
        assert m["failed_rebalances"] == 0
    # Legacy: every member reads every registration, ~N² requests (x9 from N=2 to N=6).
    # Leader: one record read per member plus the movers' claims, at most linear (x3).
    assert large["coordination_requests"] <= 3 * small["coordination_requests"] + 10
    # Watches: one membership notification (the leader's) and one record notification per
    # member, plus at most one owner-deletion notification per partition.
    assert large["watch_notifications"] <= 1 + 7 + 4
