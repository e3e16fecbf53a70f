"""A run that cannot be measured is reported as failed, and the experiment goes on."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from zkconsumer.lab import ExperimentSpec, RunStatus, Timing, run_experiment


@pytest.mark.timeout(180)
def test_a_group_that_never_forms_fails_its_run_and_the_next_run_still_happens(
        zk_connect: str, broker: object, tmp_path: Path) -> None:
    stream = io.StringIO()
    spec = ExperimentSpec(
        protocols=("zk-range", "eager-range"), events=("join",), members=2, partitions=2,
        zk_connect=zk_connect, bootstrap=broker.bootstrap,  # type: ignore[attr-defined]
        out_dir=str(tmp_path), progress=True,
        # no group can settle (3 s without change) within 1 s: every run must fail, each alone
        timing=Timing(formation_deadline_s=1.0, quiet_s=3.0))
    results = run_experiment(spec, progress_stream=stream)
    assert [(r.protocol, r.status) for r in results] == [
        ("zk-range", RunStatus.FAILED.value), ("eager-range", RunStatus.FAILED.value)]
    for r in results:
        assert "did not form a stable group" in (r.reason or "")
        assert r.metrics == {}
    assert stream.getvalue().count("FAILED") == 2
