"""The original member: Kafka 0.10.2's own ``ZookeeperConsumerConnector`` in a JVM of its own.

The member body starts ``OriginalLabMember.java`` (beside this module, compiled once against the
0.10.2 build's classpath, see :func:`ensure_compiled`) and turns what the JVM says into the lab's
records, so the harness measures the original exactly as it measures zkconsumer:

* stdout, the member driver's lines: ``REBALANCE_RELEASE`` (the connector stops its fetchers
  and is about to release its owner znodes) revokes the partitions it names;
  ``REBALANCE_ASSIGN`` (every owner znode claimed, fetchers about to start) assigns and starts
  fetching this member's partitions, completes the rebalance and, since it names the whole
  topic's assignment, is also the member's decision (a ``dc`` record); ``MSG`` is a delivery.
* stderr, the connector's log4j INFO lines: ``begin rebalancing consumer <id> try #<n>`` is an
  attempt (``#0`` starts a rebalance), ``waiting for the partition ownership to be deleted`` an
  owner-znode conflict, ``can't rebalance after <n> retries`` a failed rebalance, and ZkClient's
  ``zookeeper state changed (<state>)`` what the member sees of its session (``session_<state>``).

What the JVM does not say is not made up: it has no request counters (the ZooKeeper server's
``mntr`` is the count) and does not log watch notifications (the server's count again), so
:func:`unobserved` lists those metrics as not observed for the original.

SIGTERM is the member's clean leave (the Java driver's shutdown hook runs the connector's own
shutdown: commit, close the session); SIGKILL of the lab member process takes the JVM with it
(parent-death signal), a crash.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from zkconsumer.identity import consumer_ids_of
from zkconsumer.lab.drivers.base import MemberSpec, parse_seq
from zkconsumer.lab.original_build import RUNNER
from zkconsumer.lab.records import Coord, Lifecycle, RecordWriter, Timeline, decision_digest
from zkconsumer.orphans import die_with_parent
from zkconsumer.testing.original import parse_assignment, parse_message

log = logging.getLogger(__name__)

JAVA_CLASS = "OriginalLabMember"
JAVA_SOURCE = Path(__file__).with_name(f"{JAVA_CLASS}.java")
RSS_DETAIL = "jvm_rss_kb="  # the leaving member's JVM's resident memory, in its stopping record
LEAVE_DEADLINE_S = 30.0  # the connector's shutdown commits and closes its session well within

_ATTEMPT = re.compile(r"begin rebalancing consumer \S+ try #(\d+)")
_RELEASE = re.compile(r"([^\s(),]+) -> ArrayBuffer\(([^)]*)\)")
_SESSION = re.compile(r"zookeeper state changed \((\w+)\)")
CONFLICT_LOG = "waiting for the partition ownership to be deleted"
FAILED_LOG = "can't rebalance after"

# The metrics the original's JVM does not report, and why (``details["metric_notes"]``).
UNOBSERVED = {
    "coordination_requests": "original 0.10.2 member (JVM): no client-side request counters; "
                             "the ZooKeeper server's mntr count is the figure",
    "watch_notifications": "original 0.10.2 member (JVM): it does not log the watch "
                           "notifications it receives; the server's count is the figure",
    "rollbacks": "original 0.10.2 member (JVM): it does not log deleting the owner znodes of "
                 "a failed attempt; the attempt shows as a conflict and a retry",
}


# In the zombie scenario: the original logs no commit, so a late one is seen only where it moved
# a committed offset back (the scenario's server-side watcher).
SPLIT_UNOBSERVED = {
    key: "original 0.10.2 member (JVM): it does not report its offset commits; the committed "
         "offsets' watcher on ZooKeeper is the figure (offset_regressions)"
    for key in ("late_commits_accepted", "late_commits_rejected")}


@dataclass(frozen=True)
class Record:
    """One lab record to write: ``kind`` and its fields (see ``lab/records.py``)."""

    kind: str
    fields: dict[str, Any] = field(default_factory=dict)


def consumer_id(spec: MemberSpec) -> str:
    """``consumer.id`` of an incarnation, as the zkconsumer driver names its members."""
    return f"{spec.member}-i{spec.incarnation}"


def class_dir(home: str | Path) -> Path:
    """Where the Java driver compiled against ``home`` is kept: one per source and build, so
    members start without compiling (Java's source-file mode compiles at every start, seconds
    of CPU per member on a loaded machine)."""
    key = hashlib.sha1(JAVA_SOURCE.read_bytes() + str(Path(home).resolve()).encode())
    return Path(tempfile.gettempdir()) / f"zkconsumer-original-{key.hexdigest()[:12]}"


def ensure_compiled(home: str | Path) -> Path:
    """Compile the Java driver against the build's classpath once (``javac`` of the JDK)."""
    target = class_dir(home)
    if (target / f"{JAVA_CLASS}.class").is_file():
        return target
    env = Path(home) / "bin" / "env.sh"
    classpath = subprocess.run(["bash", "-c", f'. "{env}" && printf %s "$KAFKA_CP"'],
                               capture_output=True, text=True, check=True).stdout
    work = Path(tempfile.mkdtemp(prefix=target.name + "-", dir=target.parent))
    done = subprocess.run(["javac", "-nowarn", "-cp", classpath, "-d", str(work),
                           str(JAVA_SOURCE)], capture_output=True, text=True)
    if done.returncode != 0:
        shutil.rmtree(work, ignore_errors=True)
        raise RuntimeError(f"javac of {JAVA_SOURCE.name} against {home} failed: "
                           f"{done.stderr[-1500:]}")
    try:
        work.rename(target)  # atomic: members compiling at once keep the first
    except OSError:
        shutil.rmtree(work, ignore_errors=True)
    return target


def member_argv(spec: MemberSpec, strategy: str, classes: Path | None = None) -> list[str]:
    """The JVM's command line: the build's class runner on the compiled driver (``classes``;
    None: on the Java source), the member's ``ConsumerConfig`` from the run's timing (the
    same keys the zkconsumer members get)."""
    t = spec.timing
    props = {
        "consumer.id": consumer_id(spec),
        "zookeeper.session.timeout.ms": t.session_timeout_ms,
        "rebalance.backoff.ms": t.rebalance_backoff_ms,
        "rebalance.max.retries": t.rebalance_max_retries,
        "auto.commit.interval.ms": t.auto_commit_interval_ms,
        "partition.assignment.strategy": strategy,
    }
    main = JAVA_CLASS if classes is not None else str(JAVA_SOURCE)
    return ["bash", str(Path(spec.kafka_home) / RUNNER), main,
            f"zk={spec.zk_connect}", f"group={spec.group}", f"topic={spec.topic}", "streams=1",
            *(f"{k}={v}" for k, v in props.items())]


def _released(text: str, topic: str) -> list[int]:
    for name, parts in _RELEASE.findall(text):
        if name == topic:
            return sorted(int(p) for p in parts.split(",") if p.strip())
    return []


def stdout_records(line: str, topic: str, cid: str) -> list[Record]:
    """The records one stdout line of the JVM stands for (pure). ``cid``: the member's
    ``<group>_<consumer.id>``, whose threads are ``<cid>-<n>``."""
    if line.startswith("REBALANCE_RELEASE "):
        ps = _released(line[len("REBALANCE_RELEASE "):], topic)
        return [Record("tl", {"w": Timeline.REVOKED.value, "ps": ps})] if ps else []
    if line.startswith("REBALANCE_ASSIGN "):
        _, _, text = line.split(" ", 2)
        decided = parse_assignment(text).get(topic, {})
        mine = sorted(p for p, th in decided.items() if th.startswith(f"{cid}-"))
        threads = sorted(set(decided.values()))
        out = [Record("dc", {"h": decision_digest({topic: sorted(decided)}, {topic: threads},
                                                  {(topic, p): th for p, th in decided.items()}),
                             "ids": consumer_ids_of(threads),
                             "pc": {topic: len(decided)}})]
        if mine:
            out += [Record("tl", {"w": Timeline.ASSIGNED.value, "ps": mine}),
                    Record("tl", {"w": Timeline.FETCHING.value, "ps": mine})]
        return out + [Record("co", {"w": Coord.REBALANCE_SUCCEEDED.value})]
    if line == "LEAVING":
        # The driver's streams are drained and the connector's shutdown begins: it stops the
        # fetchers before it commits and closes the session that wakes the next owner, so the
        # member's fetching ends here, not when shutdown returns or the JVM exits (both can
        # come after the next owner fetches).
        return [Record("lc", {"w": Lifecycle.STOPPED.value, "detail": "connector shutting down"})]
    if line.startswith("MSG "):
        m = parse_message(line)
        if m.topic != topic:
            return []
        return [Record("d", {"p": m.partition, "o": m.offset, "v": parse_seq(m.value.encode())})]
    return []


def log_records(line: str) -> list[Record]:
    """The records one log line of the connector stands for (pure)."""
    m = _ATTEMPT.search(line)
    if m is not None:
        started = [Record("co", {"w": Coord.REBALANCE_STARTED.value})] if m.group(1) == "0" \
            else []
        return started + [Record("co", {"w": Coord.ATTEMPT.value})]
    if CONFLICT_LOG in line:
        return [Record("co", {"w": Coord.CONFLICT.value})]
    if FAILED_LOG in line:
        return [Record("co", {"w": Coord.REBALANCE_FAILED.value})]
    state = _SESSION.search(line)
    if state is not None:  # what the member sees of its session (the split-brain scenarios)
        return [Record("co", {"w": f"session_{state.group(1).lower()}"})]
    return []


def jvm_rss_kb(pid: int) -> int | None:
    """The resident memory of the member's JVM (Linux ``/proc``; None elsewhere or gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return None


def rss_of(detail: str) -> int | None:
    """The JVM's resident kB a leaving member's ``stopping`` record carries, if any."""
    return int(detail[len(RSS_DETAIL):]) if detail.startswith(RSS_DETAIL) else None


def unobserved(metrics: dict[str, Any], more: dict[str, str] | None = None) -> dict[str, str]:
    """Set the metrics the original does not report (``UNOBSERVED`` and ``more``) to None;
    returns their notes."""
    notes = {**UNOBSERVED, **(more or {})}
    for key in notes:
        metrics[key] = None
    if isinstance(metrics.get("requests_by_type"), dict):
        metrics["requests_by_type"] = {}
    return notes


def _pump(stream: IO[str], copy: Path, translate: Callable[[str], list[Record]],
          writer: RecordWriter, seen: list[str]) -> None:
    """Copy every line to ``copy`` and write the records it stands for, stamped on arrival."""
    with open(copy, "a", encoding="utf-8") as out:
        for raw in stream:
            line = raw.rstrip("\n")
            out.write(raw)
            out.flush()
            if line.startswith(("READY", "FATAL", "SHUTDOWN")):
                seen.append(line)
            try:
                records = translate(line)
            except ValueError as exc:
                log.warning("unreadable line from an original member: %s (%s)", line, exc)
                continue
            for rec in records:
                writer.write(rec.kind, **rec.fields)


def run_original_member(spec: MemberSpec, writer: RecordWriter, stop: threading.Event,
                        *, strategy: str) -> None:
    """Run the JVM until ``stop`` (then a clean leave); raise if it dies by itself."""
    if not spec.kafka_home:
        raise ValueError(f"{spec.protocol}: the member has no Kafka 0.10.2 build (kafka_home)")
    base = Path(spec.records_path)
    out_copy, log_copy = (base.with_name(base.name + suffix) for suffix in (".jvm.out",
                                                                            ".jvm.log"))
    cid = f"{spec.group}_{consumer_id(spec)}"
    classes = ensure_compiled(spec.kafka_home)
    proc = subprocess.Popen(member_argv(spec, strategy, classes), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, errors="replace",
                            env={**os.environ, "EXTRA_CP": str(classes)},
                            preexec_fn=die_with_parent, start_new_session=True)
    seen: list[str] = []
    pumps = [threading.Thread(target=_pump, args=(stream, copy, translate, writer, seen),
                              name=f"original-{spec.member}-{what}", daemon=True)
             for stream, copy, translate, what in (
                 (proc.stdout, out_copy, lambda line: stdout_records(line, spec.topic, cid),
                  "out"),
                 (proc.stderr, log_copy, log_records, "log"))]
    for pump in pumps:
        pump.start()
    try:
        while not stop.is_set() and proc.poll() is None:
            stop.wait(0.2)
        if proc.poll() is not None:
            fatal = [line for line in seen if line.startswith("FATAL")]
            raise RuntimeError(f"original member {cid} exited by itself ({proc.returncode}): "
                               f"{fatal[0] if fatal else 'see ' + str(log_copy)}")
        rss = jvm_rss_kb(proc.pid)
        writer.lifecycle(Lifecycle.STOPPING,
                         detail="" if rss is None else f"{RSS_DETAIL}{rss}")
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(LEAVE_DEADLINE_S)
        except subprocess.TimeoutExpired:
            log.warning("original member %s did not leave within %.0f s: killed", cid,
                        LEAVE_DEADLINE_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        deadline = time.monotonic() + 5.0
        for pump in pumps:
            pump.join(max(0.0, deadline - time.monotonic()))
