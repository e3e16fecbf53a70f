"""static-range on the broker at hand: honoured (a bounce moves nothing) or said unsupported."""

from __future__ import annotations

from pathlib import Path

import pytest

from zkconsumer.lab import ExperimentSpec, RunStatus, Timing, run_experiment
from zkconsumer.lab.probe import broker_identity


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_static_membership_is_measured_or_reported_unsupported_naming_the_broker(
        zk_connect: str, broker: object, tmp_path: Path) -> None:
    bootstrap = broker.bootstrap  # type: ignore[attr-defined]
    spec = ExperimentSpec(protocols=("static-range",), events=("rolling-bounce",), members=2,
                          partitions=4, zk_connect=zk_connect, bootstrap=bootstrap,
                          out_dir=str(tmp_path), timing=Timing(session_timeout_ms=6000))
    [result] = run_experiment(spec)
    if broker_identity(bootstrap).startswith("Tansu 0.6"):
        assert result.status == RunStatus.UNSUPPORTED.value
        assert "Tansu 0.6.0" in (result.reason or "")
        assert "group.instance.id" in (result.reason or "")
        assert result.metrics == {}
    else:
        assert result.status == RunStatus.OK.value, result.reason
        assert result.metrics["members_paused"] == 0
