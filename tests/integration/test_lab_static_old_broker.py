"""static-range on Apache Kafka 0.10.2: the lab says static membership cannot be requested there.

A 0.10.2 coordinator speaks JoinGroup up to v1; ``group.instance.id`` exists from JoinGroup v5
(Kafka 2.3, KIP-345). The probe reads that from the broker's ApiVersions answer and reports it,
instead of bouncing members that could never be static ("accepted but not honoured" would blame
the broker for a field it never received). The 2.4.1 and Tansu verdicts are in
``test_lab_compare.py``/``test_lab_static.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from zkconsumer.lab import ExperimentSpec, RunStatus, Timing, run_experiment


@pytest.mark.timeout(180)
def test_static_membership_on_kafka_0_10_2_cannot_be_requested(tmp_path: Path, kafka_build
                                                                ) -> None:
    home = kafka_build("0.10.2")
    spec = ExperimentSpec(protocols=("static-range",), events=("rolling-bounce",), members=2,
                          partitions=4, broker=f"kafka:{home}", out_dir=str(tmp_path),
                          timing=Timing(session_timeout_ms=6000))
    [result] = run_experiment(spec)
    assert result.status == RunStatus.UNSUPPORTED.value
    assert result.reason == (
        "apache-kafka-0.10.2.2 cannot be asked for static membership: its JoinGroup goes up to "
        "v1, and group.instance.id travels only in JoinGroup v5 and later (Apache Kafka 2.3, "
        "KIP-345), so no client can send it")
    assert result.details == {"broker": "apache-kafka-0.10.2.2"}
    assert result.metrics == {}, "an unsupported protocol reports no figures"
    # Decided from the broker's versions: no member was started to bounce.
    assert not (tmp_path / "runs" / "static-probe").exists()
