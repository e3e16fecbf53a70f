"""The members of one run: spawn, stop, kill, restart, and wait until the group has settled.

"Settled" is read from the records the members wrote, never from the protocol's own view:
every partition fetched by exactly one member, every expected member fetching, and no timeline
change for ``quiet_s`` (so a passing picture in the middle of a rebalance does not count).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from zkconsumer.lab.drivers import MemberSpec
from zkconsumer.lab.handles import MemberHandle, ProcessMember, ThreadMember
from zkconsumer.lab.intervals import build_intervals, fetchers_at, is_stable
from zkconsumer.lab.records import Coord, RecordTail, RunRecords, Timeline
from zkconsumer.scenarios.timing import Timing

log = logging.getLogger(__name__)

POLL_S = 0.25


def member_name(index: int) -> str:
    return f"m{index:02d}"


class LabGroup:
    def __init__(self, *, protocol: str, topic: str, group: str, partitions: int,
                 zk_connect: str, bootstrap: str, timing: Timing, records_dir: Path,
                 processes: bool, kafka_home: str = "") -> None:
        self.protocol = protocol
        self.topic = topic
        self.group = group
        self.partitions = partitions
        self.timing = timing
        self.records_dir = records_dir
        self.processes = processes
        self.kafka_home = kafka_home  # for original members (their 0.10.2 build)
        self._zk = zk_connect
        self._bootstrap = bootstrap
        self._incarnations: dict[str, int] = {}
        self.handles: dict[str, MemberHandle] = {}
        self.tail = RecordTail(records_dir)
        records_dir.mkdir(parents=True, exist_ok=True)

    @property
    def records(self) -> RunRecords:
        return self.tail.records

    @property
    def members(self) -> list[str]:
        """Members the runner has not stopped or killed."""
        return sorted(self.handles)

    def spawn(self, name: str, own_process: bool = False) -> MemberHandle:
        inc = self._incarnations.get(name, -1) + 1
        self._incarnations[name] = inc
        spec = MemberSpec(protocol=self.protocol, member=name, incarnation=inc, topic=self.topic,
                          group=self.group, partitions=self.partitions, zk_connect=self._zk,
                          bootstrap=self._bootstrap,
                          records_path=str(self.records_dir / f"{name}.{inc}.jsonl"),
                          timing=self.timing, kafka_home=self.kafka_home)
        handle: MemberHandle = (ProcessMember(spec, self.records_dir)
                                if own_process or self.processes else ThreadMember(spec))
        handle.start()
        self.handles[name] = handle
        log.debug("%s: started %s.%d", self.group, name, inc)
        return handle

    def stop(self, name: str) -> None:
        self.handles.pop(name).stop()

    def kill(self, name: str) -> float:
        handle = self.handles[name]
        if not isinstance(handle, ProcessMember):
            raise RuntimeError(f"{name} runs in a thread; only a process member can be killed")
        del self.handles[name]
        return handle.kill()

    def stop_all(self) -> None:
        import concurrent.futures

        handles = list(self.handles.values())
        self.handles.clear()
        if handles:
            with concurrent.futures.ThreadPoolExecutor(len(handles)) as pool:
                list(pool.map(lambda h: h.stop(), handles))
        self.tail.poll()

    def snapshot_stable(self, required: Iterable[str]) -> bool:
        """Whether the group is stable right now, from the records read so far."""
        return is_stable(self._fetchers_now(), required)

    def _fetchers_now(self) -> list[set[str]]:
        """For each partition, the members fetching it now, from the records read so far."""
        now = time.time()
        # Open intervals are closed at ``until``; close them in the future so they cover now.
        intervals = build_intervals(self.records, now + 3600.0, Timeline.FETCHING)
        return fetchers_at(intervals, self.partitions, now)

    def fetching(self, member: str) -> bool:
        """Whether ``member`` fetches some partition now, from its records."""
        self.tail.poll()
        return any(member in who for who in self._fetchers_now())

    def required(self) -> list[str]:
        """Members that must fetch for the group to count as stable: all of them, unless there
        are fewer partitions than members (then some legitimately idle)."""
        return self.members if self.partitions >= len(self.members) else []

    def wait_settled(self, deadline_s: float, quiet_s: float | None = None,
                     check: Callable[[], bool] | None = None) -> float | None:
        """Poll the records until settled (returns the wall-clock time) or the deadline (None)."""
        quiet = self.timing.quiet_s if quiet_s is None else quiet_s
        give_up = time.monotonic() + deadline_s
        while time.monotonic() < give_up:
            self.tail.poll()
            now = time.time()
            last_change = max((e.ts for e in self.records.timeline), default=0.0)
            if (now - last_change >= quiet and self.snapshot_stable(self.required())
                    and (check is None or check())):
                return now
            time.sleep(POLL_S)
        self.tail.poll()
        return None

    def wait_recorded(self, seen: Callable[[RunRecords], bool], deadline_s: float) -> bool:
        """Poll the records until ``seen`` holds (True) or the deadline (False)."""
        give_up = time.monotonic() + deadline_s
        while time.monotonic() < give_up:
            self.tail.poll()
            if seen(self.records):
                return True
            time.sleep(POLL_S)
        return False

    def wait_fetching(self, name: str, incarnation_after: float, deadline_s: float) -> bool:
        """Until ``name`` fetches something again after ``incarnation_after`` (a restart)."""
        return self.wait_recorded(
            lambda r: any(e.member == name and e.what is Timeline.FETCHING
                          and e.ts >= incarnation_after for e in r.timeline), deadline_s)

    def wait_rebalancing(self, name: str, deadline_s: float) -> bool:
        """Until the latest incarnation of ``name`` has begun its first rebalance (a ZooKeeper
        member registers first, so this is its registration made visible), or the deadline."""
        inc = self._incarnations[name]
        begun = (Coord.REBALANCE_STARTED.value, Coord.ATTEMPT.value)
        return self.wait_recorded(
            lambda r: any(c.member == name and c.incarnation == inc and c.what in begun
                          for c in r.coord), deadline_s)

    def delivered(self) -> set[tuple[int, int]]:
        self.tail.poll()
        return {(d.partition, d.offset) for d in self.records.deliveries}
