"""Does the broker honour static membership? Asked by experiment, not assumed.

KIP-345: a member with ``group.instance.id`` that restarts within ``session.timeout.ms`` gets its
old assignment back and nobody else rebalances. The probe runs two static members, bounces one
quickly, and watches the other: if it is revoked, the broker accepted ``group.instance.id`` but
did not honour it (Tansu 0.6.0 does exactly that). Before any of that, the broker's announced
JoinGroup versions say whether the field can be sent at all: a coordinator older than Kafka 2.3
cannot be asked, and the probe says so without running members (``lab/api_versions.py``).
"""

from __future__ import annotations

import logging
import shutil
import subprocess
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from zkconsumer.lab.api_versions import (
    broker_api_versions,
    consumer_protocol_refusal,
    static_membership_refusal,
)
from zkconsumer.lab.group import LabGroup, member_name
from zkconsumer.lab.records import Timeline
from zkconsumer.scenarios.timing import Timing

log = logging.getLogger(__name__)

# The decision rule: the broker honours static membership only if BOUNCES quick restarts in a
# row revoke nothing from the other member; one revoke says it does not. Tansu 0.6.0 rebalances
# on most static restarts but not all, so one quiet bounce proves nothing; if a bounce revokes
# with probability p, the probe wrongly says "honoured" with probability (1 - p) ** BOUNCES:
# below 0.4 % for any p >= 1/2. The probe stops at the first revoke, so on Tansu it costs about
# two bounces.
BOUNCES = 8


def honours_static_membership(revoked: Sequence[bool]) -> bool:
    """The decision rule above, over the bounces made (in order; the probe stops at a revoke)."""
    if any(revoked):
        return False
    if len(revoked) < BOUNCES:
        raise ValueError(f"{len(revoked)} quiet bounces decide nothing: the rule needs "
                         f"{BOUNCES} in a row")
    return True


@dataclass(frozen=True)
class StaticSupport:
    supported: bool
    broker: str
    reason: str


def broker_identity(bootstrap: str) -> str:
    """``Tansu 0.6.0`` for the embedded broker (its cluster id gives it away), else the cluster."""
    from confluent_kafka.admin import AdminClient

    try:
        md = AdminClient({"bootstrap.servers": bootstrap, "log_level": 0}).list_topics(timeout=5)
        cluster = md.cluster_id or "unknown"
    except Exception as exc:  # the identity is a label; a failure must not stop the run
        return f"broker at {bootstrap} (unidentified: {exc})"
    if cluster.startswith("tansu"):
        return f"Tansu {_tansu_version()} at {bootstrap}"
    return f"broker cluster {cluster} at {bootstrap}"


def _tansu_version() -> str:
    try:
        from zkconsumer.testing.broker import tansu_binary

        out = subprocess.run([tansu_binary(), "--version"], capture_output=True, text=True,
                             timeout=10).stdout.strip()
        return out.split()[-1] if out else "(version unknown)"
    except Exception:
        return "(version unknown)"


def requestable_refusal(broker: str, bootstrap: str) -> str | None:
    """Why static membership cannot even be requested from ``bootstrap``, or None.

    A broker that cannot be asked for its versions (a TLS listener, say) is left to the
    experiment: the bounces still tell whether a restart rebalances.
    """
    try:
        versions = broker_api_versions(bootstrap)
    except (OSError, ValueError) as exc:
        log.info("could not ask %s for its API versions (%s); the probe decides by bouncing",
                 bootstrap, exc)
        return None
    return static_membership_refusal(broker, versions)


def kip848_refusal(broker: str, bootstrap: str) -> str | None:
    """Why ``bootstrap`` cannot run KIP-848 groups, or None (also when it cannot be asked: then
    the runs show it)."""
    try:
        versions = broker_api_versions(bootstrap)
    except (OSError, ValueError) as exc:
        log.info("could not ask %s for its API versions (%s); KIP-848 runs will tell",
                 bootstrap, exc)
        return None
    return consumer_protocol_refusal(broker, versions)


def probe_static_membership(*, zk_connect: str, bootstrap: str, timing: Timing, topic: str,
                            workdir: Path, broker: str = "") -> StaticSupport:
    """Two static members on a 2-partition topic; bounce m00 well inside the session timeout.

    ``broker``: its name when known (``apache-kafka-2.4.1``), else it is asked for its identity.
    """
    broker = broker or broker_identity(bootstrap)
    refusal = requestable_refusal(broker, bootstrap)
    if refusal is not None:
        return StaticSupport(False, broker, refusal)
    if workdir.exists():
        shutil.rmtree(workdir)
    group = LabGroup(protocol="static-range", topic=topic,
                     group=f"lab-probe-{uuid.uuid4().hex[:8]}",
                     partitions=2, zk_connect=zk_connect, bootstrap=bootstrap, timing=timing,
                     records_dir=workdir, processes=False)
    try:
        for i in range(2):
            group.spawn(member_name(i))
        if group.wait_settled(timing.formation_deadline_s) is None:
            return StaticSupport(False, broker, f"{broker}: two static members never formed a "
                                 "stable group; static membership cannot be measured")
        # Tansu's answer to a static restart varies from one bounce to the next, so one bounce
        # that happens not to rebalance proves nothing: up to BOUNCES, stop at the first revoke.
        revoked: list = []
        outcomes: list[bool] = []
        first_bounce = time.time()
        for _ in range(BOUNCES):
            bounced_at = time.time()
            group.stop("m00")
            group.spawn("m00")
            group.wait_fetching("m00", bounced_at, timing.session_timeout_ms / 1000 * 3)
            # The broker may rebalance only once it gives up on the old incarnation, so watch
            # the other member for a session timeout and a half before the next bounce.
            deadline = time.time() + timing.session_timeout_ms / 1000 * 1.5
            while not revoked and time.time() < deadline:
                time.sleep(0.25)
                group.tail.poll()
                revoked = [e for e in group.records.timeline
                           if e.member == "m01" and e.what is Timeline.REVOKED
                           and e.ts >= first_bounce]
            outcomes.append(bool(revoked))
            if revoked:
                break
    finally:
        group.stop_all()
    if not honours_static_membership(outcomes):
        return StaticSupport(False, broker, (
            f"{broker} accepts group.instance.id but does not honour it: restarting static "
            f"member m00 within session.timeout.ms={timing.session_timeout_ms} still revoked "
            f"partitions {list(revoked[0].partitions)} from m01 "
            f"{revoked[0].ts - bounced_at:.1f} s later (KIP-345 says nobody rebalances)"))
    return StaticSupport(True, broker, f"{broker} honoured group.instance.id: a static restart "
                         f"did not rebalance the other member in {len(outcomes)} bounces")
