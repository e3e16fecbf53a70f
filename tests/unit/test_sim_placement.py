"""The placement model: members in processes (one CPU job at a time each), processes on cores."""

from __future__ import annotations

import pytest

from zkconsumer.sim.engine import Engine
from zkconsumer.sim.placement import (
    PER_MEMBER,
    CorePool,
    PlacedCpus,
    Placement,
    ProcessCpu,
    cpu_shares,
    here,
    parse_placement,
    recorded,
    spread,
)


def finish(placement: Placement, jobs: list[tuple[int, float]]) -> list[float]:
    engine = Engine()
    cpus = PlacedCpus(engine, placement)
    out: dict[int, float] = {}
    for i, (member, work) in enumerate(jobs):
        cpu = cpus.member(member)
        assert cpu is not None
        cpu.run(work, lambda i=i: out.setdefault(i, engine.now))
    engine.run(1e9)
    return [out[i] for i in range(len(jobs))]


def test_two_members_of_one_process_on_one_core_take_twice_one_members_time():
    alone = finish(Placement((1,), cores=1), [(0, 0.5)])
    both = finish(Placement((2,), cores=1), [(0, 0.5), (1, 0.5)])
    assert alone == [0.5]
    assert both == [0.5, 1.0]  # one at a time (the GIL): the second waits for the first


def test_one_process_never_uses_a_second_core():
    assert finish(Placement((2,), cores=2), [(0, 0.5), (1, 0.5)]) == [0.5, 1.0]


def test_two_processes_on_two_cores_run_in_parallel():
    assert finish(Placement((1, 1), cores=2), [(0, 0.5), (1, 0.5)]) == [0.5, 0.5]


def test_two_processes_on_one_core_take_turns_job_by_job():
    # process 0 has two jobs, process 1 one: after its first job process 0 queues behind 1
    got = finish(Placement((2, 1), cores=1), [(0, 1.0), (2, 1.0), (1, 1.0)])
    assert got == [1.0, 3.0, 2.0]


def test_the_server_on_the_cores_competes_with_the_processes():
    engine = Engine()
    cpus = PlacedCpus(engine, Placement((1, 1), cores=2, servers_on_cores=True))
    out: dict[str, float] = {}
    for name, cpu in (("a", cpus.member(0)), ("b", cpus.member(1)), ("zk", cpus.server())):
        assert cpu is not None
        cpu.run(1.0, lambda name=name: out.setdefault(name, engine.now))
    engine.run(100.0)
    assert out == {"a": 1.0, "b": 1.0, "zk": 2.0}  # three processes, two cores


def test_one_host_per_member_places_nothing():
    cpus = PlacedCpus(Engine(), PER_MEMBER)
    assert cpus.member(0) is None and cpus.server() is None
    assert PER_MEMBER.per_member and PER_MEMBER.process_of(7) == 7


def test_the_same_jobs_give_the_same_times_every_time():
    jobs = [(i % 5, 0.001 * (1 + i % 3)) for i in range(40)]
    placement = Placement(spread(5, 2), cores=1)
    assert finish(placement, jobs) == finish(placement, jobs)


def test_a_core_pool_hands_freed_cores_to_waiters_in_order():
    engine = Engine()
    pool = CorePool(engine, 1)
    a, b, c = (ProcessCpu(engine, pool) for _ in range(3))
    order: list[str] = []
    for name, p in (("a", a), ("b", b), ("c", c)):
        p.run(1.0, order.append, name)
    engine.run(10.0)
    assert order == ["a", "b", "c"] and engine.now == 3.0


def test_members_spread_over_processes_as_the_real_jobs_place_them():
    assert spread(5, 2) == (3, 2)
    assert spread(100, 2) == (50, 50)
    assert spread(3, 8) == (1, 1, 1)  # no empty process
    p = here(101)
    assert p.processes == (51, 50) and p.cores == 2 and p.servers_on_cores
    assert [p.process_of(i) for i in range(4)] == [0, 1, 0, 1]
    assert p.members_per_process() == 51
    assert "101 members in 2 processes (51+50) on 2 cores" in p.label()


def test_placement_options():
    assert parse_placement("per-member", 100) is PER_MEMBER
    assert parse_placement("here", 100, tasks=4) == here(100, tasks=4)
    three = parse_placement("3x2", 10)
    assert three.processes == (4, 3, 3) and three.cores == 2 and three.name == "3x2"
    for bad in ("", "2x", "x2", "0x2", "2x0", "everywhere"):
        with pytest.raises(ValueError, match="placement"):
            parse_placement(bad, 10)


def test_invalid_placements_are_refused_naming_the_value():
    with pytest.raises(ValueError, match="cores >= 1, got 0"):
        Placement((2, 2), cores=0)
    with pytest.raises(ValueError, match=r"\(2, -1\)"):
        Placement((2, -1), cores=1)
    with pytest.raises(ValueError, match="one host per member"):
        Placement((), cores=2)


def test_a_recorded_placement_reads_back():
    p = here(64, tasks=3)
    assert recorded(p.to_json()) == p


def test_cpu_shares_split_cores_among_busy_processes():
    p = Placement((50, 50), cores=2, servers_on_cores=True)
    shares, server = cpu_shares(p, {0: 10, 1: 5}, server_busy=True)
    assert shares == {0: pytest.approx(2 / 3), 1: pytest.approx(2 / 3)}
    assert server == pytest.approx(2 / 3)
    assert cpu_shares(p, [4, 0], server_busy=False) == ({0: 1.0}, 1.0)  # at most one core
    elsewhere = Placement((1, 1, 1), cores=1)
    assert cpu_shares(elsewhere, [1, 1, 1], server_busy=True) == ({0: 1 / 3, 1: 1 / 3,
                                                                    2: 1 / 3}, 1.0)
    assert cpu_shares(PER_MEMBER, {3: 1, 9: 1}, True) == ({3: 1.0, 9: 1.0}, 1.0)


def legacy_join(members: int, **kw: object):
    from zkconsumer.sim import SimConfig, simulate

    return simulate(SimConfig("zk-range", members, 16, "join", seed=5, member_order="start",
                              **kw))


def test_one_host_per_member_is_the_simulators_default_group():
    assert legacy_join(12, placement=PER_MEMBER).row() == legacy_join(12).row()


def test_members_crowded_into_one_process_on_one_core_settle_later_than_spread_out():
    alone = legacy_join(24, placement=PER_MEMBER).time_to_stable_s
    two = legacy_join(24, placement=here(25)).time_to_stable_s
    one = legacy_join(24, placement=Placement((25,), cores=1)).time_to_stable_s
    assert alone < two < one


def test_a_placed_run_is_the_same_for_the_same_seed():
    assert legacy_join(30, placement=here(31)).row() == legacy_join(30, placement=here(31)).row()


def test_a_placement_and_client_processes_together_are_refused():
    from zkconsumer.sim import SimConfig

    with pytest.raises(ValueError, match="client_processes 2"):
        SimConfig("zk-range", 4, 4, "join", client_processes=2, placement=here(5))


def zombie_time(placement: str, tasks: int = 2) -> float:
    from zkconsumer.scenarios.splitbrain import ScenarioParams
    from zkconsumer.sim.splitbrain.simulate import SplitSimSettings, simulate_cell
    from zkconsumer.spark.splitbrain.real import SplitCellKey

    key = SplitCellKey("zk-range", "zombie", 40, 16, 1)
    settings = SplitSimSettings(tasks=tasks, placement=placement,
                                params=ScenarioParams(max_retries=1))
    return simulate_cell(key, settings)["time_to_stable_s"]


def split_model(placement: Placement | None, tasks: int = 2):
    import random

    from zkconsumer.scenarios.splitbrain import ScenarioParams, plan
    from zkconsumer.sim.calibration import Calibration
    from zkconsumer.sim.splitbrain.legacy import LegacySplitModel

    cal = Calibration(client_read_cpu_ms=1.0, zk_read_latency_ms=0.0, zk_read_service_us=100.0)
    pl = plan("zombie", "zk-range", 4, ScenarioParams(), 1, 6000)
    return LegacySplitModel(pl, 8, cal, 6.0, 1.0, 1, tasks, random.Random(1),
                            placement=placement)


def test_a_split_brain_request_takes_the_cpu_the_placement_leaves_it():
    from zkconsumer.sim.splitbrain.legacy import Member

    crowded = split_model(Placement((2, 2), cores=1, servers_on_cores=True))
    crowded.members = {n: Member(n) for n in ("m00000", "m00001", "m00002")}
    for name in ("m00000", "m00001", "m00002"):  # processes 0, 1, 0
        crowded.busy(crowded.members[name], +1)
    # process 0 has two busy members; processes 0 and 1 and the server share one core
    assert crowded.request_s(crowded.members["m00000"]) == pytest.approx(0.001 * 2 * 3)
    assert crowded.request_s(crowded.members["m00001"]) == pytest.approx(0.001 * 1 * 3)
    plain = split_model(None)
    plain.members = dict(crowded.members)
    plain.active, plain.active_total = dict(crowded.active), crowded.active_total
    assert plain.request_s(plain.members["m00000"]) == pytest.approx(0.002)  # a core each
    alone = split_model(PER_MEMBER)
    alone.members = dict(crowded.members)
    alone.active = {0: 1, 1: 1, 2: 1}
    alone.active_total = 3
    assert alone.request_s(alone.members["m00002"]) == pytest.approx(0.001)


def zombie_row(placement: str, tasks: int = 2) -> dict:
    from zkconsumer.scenarios.splitbrain import ScenarioParams
    from zkconsumer.sim.splitbrain.simulate import SplitSimSettings, simulate_cell
    from zkconsumer.spark.splitbrain.real import SplitCellKey

    key = SplitCellKey("zk-range", "zombie", 40, 16, 1)
    settings = SplitSimSettings(tasks=tasks, placement=placement,
                                params=ScenarioParams(max_retries=1))
    return simulate_cell(key, settings)


def test_a_split_brain_cell_with_enough_cores_is_the_plain_model_and_repeats():
    assert zombie_row("2x64") == zombie_row("")  # a core per process: nothing shared
    assert zombie_row("here") == zombie_row("here")
    assert zombie_row("here") != zombie_row("")  # two processes and the server on two cores
