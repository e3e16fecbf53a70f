"""static-range on the broker at hand: Tansu 0.6.0 is said not to honour static membership.

The probe's decision rule (``lab/probe.py``, unit-tested in ``tests/unit/test_lab_probe_rule.py``):
one quick restart that revokes the other member's partitions means "not honoured"; "honoured"
needs ``BOUNCES`` quiet restarts in a row. Tansu 0.6.0 revokes on most restarts, so the verdict
on it is "unsupported" except with a probability below 0.4 %.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from zkconsumer.lab import ExperimentSpec, RunStatus, Timing, run_experiment
from zkconsumer.lab.probe import broker_identity


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_static_membership_on_tansu_is_reported_unsupported_naming_the_broker(
        zk_connect: str, broker: object, tmp_path: Path) -> None:
    bootstrap = broker.bootstrap  # type: ignore[attr-defined]
    spec = ExperimentSpec(protocols=("static-range",), events=("rolling-bounce",), members=2,
                          partitions=4, zk_connect=zk_connect, bootstrap=bootstrap,
                          out_dir=str(tmp_path), timing=Timing(session_timeout_ms=6000))
    [result] = run_experiment(spec)
    if broker_identity(bootstrap).startswith("Tansu 0.6"):
        assert result.status == RunStatus.UNSUPPORTED.value, result.reason
        reason = result.reason or ""
        assert "Tansu 0.6.0" in reason and "does not honour" in reason, reason
        assert "group.instance.id" in reason and "from m01" in reason, reason
        assert result.metrics == {}, "an unsupported protocol reports no figures"
    else:
        # A broker implementing KIP-345 (Apache Kafka >= 2.3): measured, nobody else paused.
        assert result.status == RunStatus.OK.value, result.reason
        assert result.metrics["lost"] == 0
        assert result.metrics["members_paused"] == 0
