"""The KIP-848-at-scale renderer's pure parts: the balanced share, the N-law between the largest
sizes, and the split-brain rows."""

from __future__ import annotations

from zkconsumer.results.figures.kip848_scale import Sweep, balanced_share, split_table


def herd_run(protocol: str, event: str, n: int, **metrics: object) -> dict:
    return {"protocol": protocol, "event": event, "members": n, "status": "ok",
            "metrics": metrics}


def test_a_balanced_assignment_moves_the_newcomers_share() -> None:
    assert [balanced_share(128, n) for n in (4, 8, 16, 32, 64)] == [25, 14, 7, 3, 1]
    assert balanced_share(8, 8) == 0


def test_the_slope_between_the_two_largest_sizes_shows_the_n_law() -> None:
    runs = [herd_run("zk-range", "join", n, coordination_requests=r)
            for n, r in ((4, 900), (32, 1000), (64, 4000))]
    runs.append(herd_run("consumer-uniform", "join", 64, coordination_requests=300))
    sweep = Sweep("herd-apache-kafka-4.0.2-hb1000", "apache-kafka-4.0.2", 1000, "", "", 128,
                  runs, {})
    assert sweep.local_slope("zk-range", "join") == 2.0
    assert sweep.local_slope("consumer-uniform", "join") is None   # no point at N = 32
    assert sweep.label() == "apache-kafka-4.0.2, KIP-848 heartbeat 1000 ms"


def test_zombie_rows_give_medians_ranges_and_the_refusals() -> None:
    def zombie(protocol: str, refused: int, errors: tuple[str, ...]) -> dict:
        return {"protocol": protocol, "event": "zombie", "status": "ok",
                "metrics": {"late_commits_rejected": refused, "late_commits_accepted": 0,
                            "offset_regressions": 0, "double_owned_s": 10.5,
                            "zombie_overlap_deliveries": 61, "zombie_stopped_s": 10.1,
                            "stable_after_resume_s": 2.4, "lost": 0},
                "details": {"zombie_view": {"rejections": list(errors)}}}

    runs = [zombie("consumer-uniform", 21, ("UNKNOWN_MEMBER_ID",)),
            zombie("consumer-uniform", 19, ("UNKNOWN_MEMBER_ID",)),
            zombie("consumer-uniform", 20, ()),
            {"protocol": "zk-range", "event": "zombie", "status": "failed", "metrics": {}}]
    lines = split_table(runs, "zombie")
    assert lines[0].endswith("| lost | refused with |")
    # in the protocol table's order: the legacy group first
    assert lines[2] == "| zk-range | 0/1 | — | — | — | — | — | — | — | — | — |"
    assert lines[3] == ("| consumer-uniform | 3/3 | 20 (19–21) | 0 | 0 | 10.5 | 61 | 10.1 | "
                        "2.4 | 0 | `UNKNOWN_MEMBER_ID` |")


def test_spark_rows_name_the_broker_and_heartbeat_of_their_run(tmp_path) -> None:
    import json

    from zkconsumer.results.figures.kip848_scale import kip848_spark
    from zkconsumer.results.registry import Context

    folder = tmp_path / "comparison" / "spark-herd-apache-kafka-4.0.2-hb1000"
    folder.mkdir(parents=True)
    (folder / "sweep.csv").write_text(
        "protocol,members,partitions,event,seed,coordination_requests,rebalance_attempts,"
        "members_paused,time_to_stable_s,lost\n"
        "consumer-uniform,4,8,join,0,41,1,1,1.234,0\n")
    (folder / "meta.json").write_text(json.dumps({
        "broker": "apache-kafka-4.0.2", "command": "zkconsumer spark herd --mode real",
        "date": "2026-11-27T10:00:00Z", "revision": "0" * 40,
        "extra": {"consumer_heartbeat_interval_ms": 1000},
        "machine": {"cores": 2, "python": "3.11.7"}}))
    text = kip848_spark(Context(results=tmp_path, figures=tmp_path))
    assert "apache-kafka-4.0.2, KIP-848 heartbeat 1000 ms, one seed per row" in text
    assert "| consumer-uniform | join | 4 | 8 | 41 | 1 | 1 | 1.23 | 0 |" in text
