"""A chaos soak: members come, go, crash, stall and lose sessions while ZooKeeper leaders die.

A run, step by step:

1. start a 3-server ZooKeeper ensemble and the embedded broker; create the topic; start a
   producer of keyed, numbered records;
2. start the initial members (processes, each behind its own fault proxies) and wait until the
   group has formed;
3. walk the seeded schedule (``schedule.py``) for ``duration_s`` seconds;
4. stop the producer, heal every fault, and wait until the group has settled: the registered
   members are exactly the live ones, every partition is owned by one of them, each of them owns
   something, and that picture holds for ``quiet_s``; then run the operator's verify tool;
5. wait until every acknowledged record is in some member's file (or the drain deadline);
6. let every member leave cleanly and look for owner or registration znodes left behind.

Figures come from the members' files and the producer's acknowledgements only.
"""

from __future__ import annotations

import contextlib
import json
import logging
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from kazoo.client import KazooClient

from zkconsumer.admin import create_topic
from zkconsumer.admin.groups import verify_group
from zkconsumer.lab.chaos.broker_keeper import BrokerRegistrationKeeper
from zkconsumer.lab.chaos.consumer import ChaosMemberSpec
from zkconsumer.lab.chaos.harness import Restarter, broker_of, ensemble_of
from zkconsumer.lab.chaos.members import ChaosMember, MemberLink
from zkconsumer.lab.chaos.original import OriginalChaosMember, lifetime_s
from zkconsumer.lab.chaos.producer import KeyedProducer
from zkconsumer.lab.chaos.schedule import (
    Action,
    Kind,
    action_counts,
    initial_members,
)
from zkconsumer.lab.chaos.settle import (
    GroupUnderTest,
    Settle,
    SettleWatch,
    stray_znodes,
    wait_drained,
    wait_settled,
)
from zkconsumer.lab.chaos.spec import ORIGINAL, ChaosError, ChaosReport, ChaosSpec, tally
from zkconsumer.lab.progress import Progress as ActionsBar

log = logging.getLogger(__name__)

POLL_S = 0.25

Member = ChaosMember | OriginalChaosMember


@dataclass
class _Run:
    """Mutable state of one run (the runner's alone; no other thread touches it)."""

    spec: ChaosSpec
    records: Path
    zk_connect: str
    servers: list[str]
    group: str
    topic: str
    members: dict[str, Member] = field(default_factory=dict)     # live, not told to go
    leaving: list[Member] = field(default_factory=list)
    gone: list[Member] = field(default_factory=list)
    leave_at: dict[str, float] = field(default_factory=dict)     # the schedule's leaves
    kinds: dict[str, str] = field(default_factory=dict)          # every member started
    down_zk: list[int] = field(default_factory=list)
    exited: set[str] = field(default_factory=set)                # exited on their own
    restarter: Restarter = field(default_factory=lambda: Restarter())

    def consumer_id(self, name: str) -> str:
        return f"{self.group}_{name}"

    def faults_open(self) -> bool:
        """Whether a fault window is open: a member's traffic held or a ZooKeeper server down
        (read from the settle watch's thread; a stale answer only delays a settle)."""
        return bool(self.down_zk) or any(m.link.held for m in list(self.members.values()))

    def under_test(self) -> GroupUnderTest:
        return GroupUnderTest(self.group, self.topic, self.spec.partitions,
                              lambda: {self.consumer_id(n) for n in self.members})

    def spawn(self, name: str, at: float = 0.0) -> Member:
        """Start member ``name`` at schedule time ``at``; an original one is given the lifetime
        that ends at its scheduled leave (the driver's only clean leave, see original.py)."""
        self.exited.discard(name)   # a new incarnation of that name
        link = MemberLink(name, self.servers).start()
        spec = ChaosMemberSpec(
            name=name, group=self.group, topic=self.topic, zk_connect=link.connect_string,
            records_path=str(self.records / f"{name}.records.jsonl"),
            session_timeout_ms=self.spec.session_timeout_ms,
            session_lost_policy=self.spec.session_lost_policy)
        kind = self.spec.kind_of(name)
        self.kinds[name] = kind
        member: Member
        if kind == ORIGINAL:
            assert self.spec.kafka_home is not None   # ChaosSpec.validate
            member = OriginalChaosMember(spec, link, self.records / f"{name}.log",
                                         Path(self.spec.kafka_home),
                                         lifetime_s(at, self.leave_at.get(name)))
        else:
            member = ChaosMember(spec, link, self.records / f"{name}.log")
        member.start()
        self.members[name] = member
        return member


Progress = Callable[[str], None]


def run_chaos(spec: ChaosSpec, progress: Progress | None = None, actions_bar: bool = False,
              bar_stream: TextIO | None = None) -> ChaosReport:
    """Run the soak end to end on embedded servers and return its figures (never the data).

    ``actions_bar``: show the schedule's actions done / total with an ETA on ``bar_stream``
    (stderr by default) while the chaos runs: a bar on a terminal, a line per action elsewhere.
    """
    spec.validate()
    say = progress or (lambda msg: log.info("%s", msg))
    schedule = spec.schedule()
    report = ChaosReport(seed=spec.seed, duration_s=spec.duration_s, members=spec.members,
                         partitions=spec.partitions, session_timeout_ms=spec.session_timeout_ms,
                         actions=action_counts(schedule),
                         original_members=spec.original_members)
    out_dir = Path(spec.out_dir) if spec.out_dir else Path(tempfile.mkdtemp(prefix="zkchaos-"))
    records = out_dir / "members"
    if records.exists():
        shutil.rmtree(records)
    records.mkdir(parents=True)
    report.records_dir = str(records)
    t0 = time.monotonic()

    def phase(name: str) -> None:
        report.phases_s[name] = round(time.monotonic() - t0, 2)

    from zkconsumer.testing.zookeeper import EmbeddedEnsemble

    produced: list[tuple[str, int]] = []
    say("starting a 3-server ZooKeeper ensemble and the broker")
    with ensemble_of(EmbeddedEnsemble(3)) as ensemble, \
            broker_of(_new_broker(spec, ensemble.connect_string)) as broker:
        phase("servers_up")
        report.broker = broker.name
        uniq = uuid.uuid4().hex[:6]
        run = _Run(spec, records, ensemble.connect_string,
                   [ensemble.server_connect_string(s) for s in sorted(ensemble.client_ports)],
                   group=f"chaos-{uniq}", topic=f"chaos-{uniq}",
                   leave_at={a.target: a.at for a in schedule if a.kind is Kind.LEAVE})
        create_topic(run.zk_connect, run.topic, spec.partitions, bootstrap=broker.bootstrap)
        producer = KeyedProducer(broker.bootstrap, run.topic, spec.partitions,
                                 spec.keys or 2 * spec.partitions, spec.rate)
        # Reconnect at once after a leader kill (kazoo's default backoff grows to seconds).
        client = KazooClient(hosts=run.zk_connect, timeout=10.0,
                             connection_retry={"max_tries": -1, "delay": 0.1, "backoff": 1.5,
                                               "max_delay": 1.0})
        client.start(timeout=30)
        # A Kafka broker registers itself again on a new session (and would wait forever for
        # a registration someone else re-created); only the embedded one needs the keeper.
        keeper = BrokerRegistrationKeeper(client, broker.broker_id)
        if spec.kafka_home is None:
            keeper.start()
        try:
            producer.start()
            _form(run, client, say)
            phase("formed")
            say(f"chaos for {spec.duration_s:.0f} s: {len(schedule)} steps, seed {spec.seed}")
            bar = ActionsBar(len(schedule), enabled=actions_bar, stream=bar_stream)
            watch = SettleWatch(client, run.under_test(), spec.quiet_s, run.faults_open).start()
            try:
                try:
                    _execute(run, ensemble, schedule, spec.duration_s, report, say, bar)
                finally:
                    bar.close()
                phase("chaos_done")
                producer.stop()
                report.producer_errors = producer.errors[:20]
                _settle(run, watch, ensemble, report, say)
            finally:
                _keep_settles(watch.stop(), out_dir, report)
            phase("settled" if report.settled else "settle_gave_up")
            produced = [(a.key, a.seq) for a in producer.acked]
            say(f"draining: {len(produced)} records acknowledged")
            report.drained = wait_drained(records, produced, spec.drain_deadline_s)
            phase("drained" if report.drained else "drain_gave_up")
            _leave(run, client, report, say)
            phase("stopped")
        finally:
            keeper.stop()
            report.broker_reregistrations = keeper.recreated
            producer.stop()
            report.member_kinds = dict(sorted(run.kinds.items()))
            _cleanup(run)
            client.stop()
            client.close()
    phase("closed")
    tally(report, produced, records)
    return report


def _form(run: _Run, client: KazooClient, say: Progress) -> None:
    """Phase 1: start the initial members and wait until they form a good group."""
    spec = run.spec
    say(f"starting {spec.members} members ({spec.original_members} original)")
    for name in initial_members(spec.members):
        run.spawn(name)
    if wait_settled(client, run.under_test(), spec.formation_deadline_s,
                    min(spec.quiet_s, 1.0)) is None:
        raise ChaosError(f"{spec.members} members did not form a group within "
                         f"{spec.formation_deadline_s:.0f} s")


def _settle(run: _Run, watch: SettleWatch, ensemble: Any, report: ChaosReport,
            say: Progress) -> None:
    """Phase 3 (after the chaos): heal every fault, wait for the watch to see a good settle,
    run the verify tool."""
    _heal(run, ensemble)
    report.zk_servers_serving = _serving(ensemble)
    say("chaos over: faults healed, waiting for the group to settle")
    report.settled = watch.first_good_after(run.spec.settle_deadline_s) is not None
    try:
        verification = verify_group(run.zk_connect, run.group)
        report.verify_ok = verification.ok
        report.verify_violations = [v.as_dict() for v in verification.violations][:20]
    except Exception as exc:  # the verdict is "not ok", and the run still reports
        report.verify_violations = [{"error": repr(exc)}]


def _leave(run: _Run, client: KazooClient, report: ChaosReport, say: Progress) -> None:
    """Last phase: every member leaves; nothing of the group may stay in ZooKeeper."""
    report.members_final = sorted(run.members)
    originals = any(m.kind == ORIGINAL for m in [*run.members.values(), *run.leaving])
    say("stopping every member")
    _stop_all(run, report)
    # SIGTERM ends an original member without closing its session: its znodes go when the
    # session expires, so the grace for them is a session timeout and a half.
    grace = run.spec.session_timeout_ms / 1000.0 * 1.5 + 2.0 if originals else 2.0
    report.stray_paths = stray_znodes(client, run.under_test(), grace)
    report.stray_znodes = len(report.stray_paths)


# --- the chaos itself ---------------------------------------------------------------------------


# Actions aimed at one member: skipped once that member has exited on its own (a join of the
# same name is a new incarnation and runs).
ON_A_MEMBER = frozenset({Kind.LEAVE, Kind.KILL, Kind.EXPIRE, Kind.PAUSE, Kind.RESUME})


def aimed_at_exited(action: Action, exited: set[str]) -> bool:
    """Whether ``action`` is aimed at a member that has exited on its own (it is skipped)."""
    return action.kind in ON_A_MEMBER and action.target in exited


def _execute(run: _Run, ensemble: Any, schedule: list[Action], duration_s: float,
             report: ChaosReport, say: Progress, bar: ActionsBar) -> None:
    """Walk the schedule on time; an action that fails is reported and the walk goes on."""
    executed = {k: 0 for k in report.actions}
    start = time.monotonic()
    for action in schedule:
        delay = start + action.at - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        if aimed_at_exited(action, run.exited):
            # not an error of the schedule: the member's own exit is one (member_errors)
            report.actions_skipped.append(f"t={action.at} {action.kind.value} {action.target}: "
                                          "the member had exited on its own")
            bar.advance(f"t={action.at:.0f}s {action.kind.value} {action.target} (skipped)")
            continue
        try:
            _apply(run, ensemble, action, report)
            if action.kind.value in executed:
                executed[action.kind.value] += 1
            log.info("t=%.1f %s %s", action.at, action.kind.value, action.target)
        except Exception as exc:
            log.warning("t=%.1f %s %s failed: %r", action.at, action.kind.value, action.target,
                        exc)
            report.action_errors.append(f"t={action.at} {action.kind.value} {action.target}: "
                                        f"{exc!r}")
        _reap(run, report)
        bar.advance(f"t={action.at:.0f}s {action.kind.value} {action.target}")
    report.actions_executed = executed
    rest = start + duration_s - time.monotonic()
    if rest > 0:
        time.sleep(rest)
    say(f"executed {sum(executed.values())} actions: "
        + ", ".join(f"{k} {v}" for k, v in executed.items()))


def _apply(run: _Run, ensemble: Any, action: Action, report: ChaosReport) -> None:
    kind = action.kind
    if kind is Kind.JOIN:
        run.spawn(action.target, action.at)
    elif kind is Kind.LEAVE:
        if action.target in report.early_leaves:
            return   # an original member whose lifetime ended a little early: it left
        member = run.members.pop(action.target)
        if member.kind != ORIGINAL:
            member.terminate()   # an original one leaves by its lifetime, at about this time
        run.leaving.append(member)
    elif kind is Kind.KILL:
        member = run.members.pop(action.target)
        member.kill()
        member.link.stop()
        run.gone.append(member)
    elif kind in (Kind.EXPIRE, Kind.PAUSE):
        run.members[action.target].link.hold()
    elif kind is Kind.RESUME:
        member = run.members.get(action.target)
        if member is not None:
            member.link.release()
    elif kind is Kind.ZK_LEADER_KILL:
        sid = ensemble.leader_id(timeout=10.0)
        ensemble.kill(sid)
        run.down_zk.append(sid)
        report.zk_leaders_killed.append(sid)
    elif kind is Kind.ZK_RESTART:
        _restart_zk(run, ensemble)


def _restart_zk(run: _Run, ensemble: Any) -> None:
    """Restart the servers that are down, off the schedule's thread (a start takes seconds)."""
    down, run.down_zk = list(run.down_zk), []
    for sid in down:
        run.restarter.submit(lambda sid=sid: ensemble.start(sid))


def _new_broker(spec: ChaosSpec, zk_connect: str) -> Any:
    """The embedded broker, or the Kafka broker of ``spec.kafka_home``."""
    if spec.kafka_home is None:
        from zkconsumer.testing.broker import EmbeddedBroker

        return EmbeddedBroker(zk_connect)
    from zkconsumer.testing.kafka import KafkaBroker

    return KafkaBroker(zk_connect, spec.kafka_home)


def _keep_settles(settles: list[Settle], out_dir: Path, report: ChaosReport) -> None:
    """Every settle seen, listed in settles.jsonl; those seen while the chaos ran counted in
    the report (the one after it is ``settled``)."""
    during = [s for s in settles if not s.after_chaos]
    report.settles = len(during)
    report.settles_one_live_owner = sum(s.good for s in during)
    with open(out_dir / "settles.jsonl", "w", encoding="utf-8") as fh:
        for s in settles:
            fh.write(json.dumps(s.as_dict(), separators=(",", ":")) + "\n")


def _reap(run: _Run, report: ChaosReport) -> None:
    """Members that exited although nobody asked them to are errors; those that left are gone."""
    for name, member in list(run.members.items()):
        if not member.alive():
            code = member.proc.returncode if member.proc else None
            if member.kind == ORIGINAL and code == 0 and name in run.leave_at:
                report.early_leaves.append(name)   # its lifetime ended before the schedule's
            else:                                  # leave came (a start faster than planned)
                report.member_errors.append(f"{name} exited on its own (code {code})")
                run.exited.add(name)
            del run.members[name]
            member.link.stop()
            run.gone.append(member)
    for member in list(run.leaving):
        if not member.alive():
            run.leaving.remove(member)
            member.link.stop()
            run.gone.append(member)


def _heal(run: _Run, ensemble: Any) -> None:
    for member in run.members.values():
        member.link.release()
    if run.down_zk:
        _restart_zk(run, ensemble)
    run.restarter.wait_idle(90)


def _serving(ensemble: Any, timeout_s: float = 30.0) -> int:
    """How many ensemble servers serve again (all of them, unless a restart failed)."""
    give_up = time.monotonic() + timeout_s
    while True:
        up = sum(ensemble.mode(sid) in ("leader", "follower") for sid in ensemble.client_ports)
        if up == len(ensemble.client_ports) or time.monotonic() >= give_up:
            return up
        time.sleep(POLL_S)


def _stop_all(run: _Run, report: ChaosReport) -> None:
    """Clean leaves, all at once; a member that does not exit in time is killed (reported)."""
    members = list(run.members.values()) + run.leaving
    run.members.clear()
    run.leaving = []
    for m in members:
        m.terminate()
    for m in members:
        if m.wait(30) is None:
            report.member_errors.append(f"{m.name} did not leave within 30 s; killed")
            m.kill()
        m.link.stop()
        run.gone.append(m)


def _cleanup(run: _Run) -> None:
    """Whatever is still running after an error: kill it."""
    for m in [*run.members.values(), *run.leaving, *run.gone]:
        with contextlib.suppress(Exception):
            m.kill()
        m.link.stop()
    run.restarter.close()
