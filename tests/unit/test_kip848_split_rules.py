"""Which split-brain scenarios the KIP-848 groups run at scale: real members only, stale view and
storm (the simulator has no model of them; a KIP-848 member has no ZooKeeper session to lose)."""

from __future__ import annotations

import pytest

from zkconsumer.scenarios.splitbrain import (
    PROTOCOLS,
    REAL_PROTOCOLS,
    ZOMBIE_NOT_APPLICABLE,
    not_applicable,
)
from zkconsumer.spark.splitbrain.job import add_arguments, grid


def parse(*argv: str):
    import argparse

    p = argparse.ArgumentParser()
    add_arguments(p)
    return p.parse_args(["--out", "x", *argv])


def test_kip848_groups_run_stale_view_and_storm_with_real_members_only() -> None:
    assert "consumer-uniform" in REAL_PROTOCOLS and "consumer-range" in REAL_PROTOCOLS
    assert "consumer-uniform" not in PROTOCOLS
    assert not_applicable("consumer-uniform", "stale-view") is None
    assert not_applicable("consumer-range", "storm") is None
    assert not_applicable("consumer-uniform", "zombie") == ZOMBIE_NOT_APPLICABLE


def test_the_spark_job_takes_kip848_groups_in_real_mode_and_refuses_them_in_sim_mode() -> None:
    cells = grid(parse("--mode", "real", "--protocols", "consumer-uniform", "--scenarios",
                       "storm", "--members", "4"))
    assert [(c.protocol, c.scenario, c.members) for c in cells] == [
        ("consumer-uniform", "storm", 4)]
    with pytest.raises(ValueError, match="consumer-uniform"):
        grid(parse("--mode", "sim", "--protocols", "consumer-uniform", "--scenarios", "storm"))
