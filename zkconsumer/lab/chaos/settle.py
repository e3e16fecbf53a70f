"""When a chaos run's group is settled, drained and gone: what ZooKeeper and the files show.

:func:`judge` is the pure rule (a snapshot of the group in, a verdict out); the rest polls
ZooKeeper or the members' files until the rule holds or a deadline passes.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kazoo.client import KazooClient

from zkconsumer.admin.groups import GroupSnapshot, check_ownership, snapshot
from zkconsumer.admin.tree import children_of
from zkconsumer.identity import consumer_ids_of
from zkconsumer.lab.chaos.accounting import all_deliveries, consumption, read_members
from zkconsumer.zk import paths

log = logging.getLogger(__name__)

POLL_S = 0.25

Picture = tuple[bool, str, tuple[Any, ...]]


@dataclass(frozen=True)
class GroupUnderTest:
    """The group and topic of a run, and who is live right now (asked on every poll)."""

    group: str
    topic: str
    partitions: int
    live: Callable[[], set[str]]  # consumer ids of the members not told to go


def group_picture(client: KazooClient, group: GroupUnderTest) -> Picture:
    """The group as ZooKeeper shows it now, judged by :func:`judge`."""
    return judge(snapshot(client, group.group, [group.topic]), group.live(), group.partitions)


def judge(snap: GroupSnapshot, live: set[str], partitions: int) -> Picture:
    """(good, why not, the ownership seen): good = registered members are exactly the ``live``
    consumer ids, every partition is owned by a live member's thread, each live member owns one
    if there are enough partitions, and the verify tool's checks pass."""
    registered = {m.consumer_id for m in snap.members}
    owners = tuple(sorted((p, o or "") for (_, p), o in snap.owners.items()))
    if registered != live:
        return False, (f"registered {sorted(registered - live)} not live, live "
                       f"{sorted(live - registered)} not registered"), owners
    violations = check_ownership(snap)
    if violations:
        return False, f"{len(violations)} violations, e.g. {violations[0]}", owners
    owning = set(consumer_ids_of(o for _, o in owners))
    if not owning <= live:
        return False, f"owned by {sorted(owning - live)}", owners
    if partitions >= len(live) and owning != live:
        return False, f"idle members {sorted(live - owning)}", owners
    return True, "", owners


def wait_settled(client: KazooClient, group: GroupUnderTest, deadline_s: float,
                 quiet_s: float) -> float | None:
    """When the same good picture has held for ``quiet_s`` (monotonic time); None: never."""
    give_up = time.monotonic() + deadline_s
    since: float | None = None
    seen: tuple[Any, ...] = ()
    why = ""
    while time.monotonic() < give_up:
        try:
            good, why, owners = group_picture(client, group)
        except Exception as exc:  # a read during a leader election: try again
            good, why, owners = False, repr(exc), ()
        now = time.monotonic()
        if good and owners == seen and since is not None:
            if now - since >= quiet_s:
                return now
        elif good:
            since, seen = now, owners
        else:
            since = None
        time.sleep(POLL_S)
    log.warning("group %s did not settle within %.0f s: %s", group.group, deadline_s, why)
    return None


def wait_drained(records: Path, produced: list[tuple[str, int]], deadline_s: float) -> bool:
    """Whether every acknowledged record reached some member's file within ``deadline_s``."""
    give_up = time.monotonic() + deadline_s
    while True:
        if consumption(produced, all_deliveries(read_members(records))).lost == 0:
            return True
        if time.monotonic() >= give_up:
            return False
        time.sleep(0.5)


def stray_znodes(client: KazooClient, group: GroupUnderTest, grace_s: float = 2.0) -> list[str]:
    """Owner and registration znodes left once every member has left (a short grace for the
    servers to process the last session closes)."""
    give_up = time.monotonic() + grace_s
    while True:
        found = [paths.child(paths.consumer_ids(group.group), c)
                 for c in children_of(client, paths.consumer_ids(group.group))]
        found += [paths.child(paths.topic_owners(group.group, group.topic), c)
                  for c in children_of(client, paths.topic_owners(group.group, group.topic))]
        if not found or time.monotonic() >= give_up:
            return sorted(found)
        time.sleep(POLL_S)


@dataclass(frozen=True)
class Settle:
    """One settled picture seen while the chaos ran: no fault was open (no member's traffic
    held, no ZooKeeper server down), the registered members were the live ones, and the owner
    znodes did not change for ``quiet_s``. ``good``: :func:`judge`'s verdict
    (every partition owned by one live member, none idle), ``why`` when not."""

    ts: float
    good: bool
    why: str
    owners: tuple[tuple[int, str], ...]
    after_chaos: bool = False   # seen once the chaos was over and its faults healed

    def as_dict(self) -> dict[str, Any]:
        return {"ts": round(self.ts, 3), "good": self.good, "why": self.why,
                "owners": {str(p): o for p, o in self.owners},
                "after_chaos": self.after_chaos}


class SettleWatch:
    """Polls the group while the chaos runs and keeps every settle (see :class:`Settle`), once
    until the picture changes; it goes on after the chaos, so that the settle the run waits
    for at the end (:meth:`first_good_after`) is one of the settles it keeps: one observer, so
    a run that settled always has a settle on record, however long its chaos-time windows."""

    def __init__(self, client: KazooClient, group: GroupUnderTest, quiet_s: float,
                 faults_open: Callable[[], bool]) -> None:
        self._client = client
        self._faults_open = faults_open
        self._group = group
        self._quiet_s = quiet_s
        self._stop = threading.Event()
        self.settles: list[Settle] = []
        self._chaos_over_at: float | None = None   # wall time the faults were healed
        self._kept = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="chaos-settle-watch",
                                        daemon=True)

    def start(self) -> SettleWatch:
        self._thread.start()
        return self

    def first_good_after(self, deadline_s: float) -> Settle | None:
        """From now on settles are after the chaos; wait (at most ``deadline_s``) for the first
        good one and return it, None if none came."""
        with self._kept:
            self._chaos_over_at = time.time()
            found = self._kept.wait_for(self._good_after_chaos, deadline_s)
        if not found:
            log.warning("group %s did not settle within %.0f s", self._group.group, deadline_s)
            return None
        return self._good_after_chaos()

    def _good_after_chaos(self) -> Settle | None:
        return next((s for s in self.settles if s.after_chaos and s.good), None)

    def stop(self) -> list[Settle]:
        self._stop.set()
        self._thread.join(30)
        return self.settles

    def _look(self) -> tuple[bool, bool, str, tuple[Any, ...]]:
        """(registered == live, good, why, owners) now."""
        live = self._group.live()
        if self._faults_open():
            return False, False, "a fault is open", ()
        snap = snapshot(self._client, self._group.group, [self._group.topic])
        good, why, owners = judge(snap, live, self._group.partitions)
        return {m.consumer_id for m in snap.members} == live, good, why, owners

    def _run(self) -> None:
        since: float | None = None
        seen: tuple[Any, ...] = ()
        kept = window_after = False
        while not self._stop.wait(POLL_S * 2):
            try:
                members_live, good, why, owners = self._look()
            except Exception:  # a read during a leader election: not a settle
                members_live, good, why, owners = False, False, "", ()
            now = time.monotonic()
            over = self._chaos_over_at is not None
            if not members_live or owners != seen or since is None or over != window_after:
                # the chaos ending starts a new quiet window: the picture it ends with is a
                # settle after the chaos only once it has held for quiet_s after the heal
                since, seen, kept = (now if members_live else None), owners, False
                window_after = over
            elif not kept and now - since >= self._quiet_s:
                with self._kept:
                    self.settles.append(Settle(time.time(), good, why, owners,
                                               after_chaos=window_after))
                    self._kept.notify_all()
                kept = True
