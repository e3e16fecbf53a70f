"""The fetchers' switch of the leader mode: paused fetchers resume only in the same session."""

from __future__ import annotations

from zkconsumer.assignors import TopicPartition
from zkconsumer.config import ConsumerConfig
from zkconsumer.coordination.gate import LOST, FetchGate
from zkconsumer.datapath.position import PartitionTopicInfo
from zkconsumer.membership.ownership import Ownership
from zkconsumer.subscription import Subscription


class RecordingFetchers:
    """Stands in for PartitionFetchers (no broker): records what runs."""

    def __init__(self) -> None:
        self.running: set[TopicPartition] = set()

    def start(self, infos) -> None:
        self.running |= {TopicPartition(i.topic, i.partition) for i in infos}

    def stop(self, partitions) -> None:
        self.running -= set(partitions)

    def stop_all(self) -> None:
        self.running.clear()


def _gate():
    cfg = ConsumerConfig({"zookeeper.connect": "z:1", "group.id": "g"})
    sub = Subscription.static("g_c", {"t": 1}, cfg)
    ownership = Ownership()
    queue = sub.queue_for("t", "g_c-0")
    infos = {TopicPartition("t", p): PartitionTopicInfo("t", p, queue, 5, 9, "g_c-0")
             for p in (0, 1)}
    ownership.install(infos, session_id=7)
    fetchers = RecordingFetchers()
    return FetchGate(fetchers, sub, ownership, lambda: False), fetchers, infos


def test_a_pause_stops_everything_and_only_the_same_session_resumes_it():
    gate, fetchers, infos = _gate()
    gate.start(infos.values())
    assert fetchers.running == set(infos)
    assert gate.pause(7) and gate.paused and not fetchers.running
    # fetching restarts from what the application consumed, not from what was buffered
    assert all(i.fetched_offset == 5 for i in infos.values())
    gate.start(infos.values())  # the coordinator may claim meanwhile: nothing starts
    assert not fetchers.running
    assert gate.resume(8) is None and not fetchers.running  # another session: stay paused
    assert gate.resume(7) is not None and fetchers.running == set(infos)


def test_a_lost_session_stays_paused_until_a_new_session_resets_ownership():
    gate, fetchers, infos = _gate()
    gate.start(infos.values())
    assert gate.pause(7)
    assert not gate.pause(7)  # a second SUSPENDED changes nothing
    assert gate.pause(LOST)
    assert gate.resume(7) is None and not fetchers.running
    gate.reset()
    assert not gate.paused
    gate.start(infos.values())
    assert fetchers.running == set(infos)


def test_a_pause_asked_for_before_a_new_session_does_not_freeze_it():
    """The pause runs on a thread of its own: it can come after the new session's reset."""
    gate, fetchers, infos = _gate()
    gate.start(infos.values())
    epoch = gate.epoch  # taken when LOST was reported
    gate.reset()  # the new session, on the coordinator thread, before the pause thread ran
    assert not gate.pause(LOST, epoch) and not gate.paused
    gate.start(infos.values())  # claimed again in the new session: fetching again
    assert fetchers.running == set(infos)
    assert gate.pause(7, gate.epoch) and not fetchers.running  # a current pause still works
