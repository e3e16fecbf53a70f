"""What a rebalance does with a member registration no plan can include.

Unparsable JSON, a stream count below 1, an illegal topic name or a wildcard pattern that
``java.util.regex`` rejects. The original's ``rebalance()`` throws on each of them, retries
``rebalance.max.retries`` times and ends in ``ConsumerRebalanceFailedException``; that is the
default here too (``zkconsumer.unreadable.registration.policy=fail``), so JVM and zkconsumer
members of one group stay in step. ``skip`` leaves the member out of the plan: this member keeps
consuming, but every JVM member of the group still fails its rebalances and the partitions it
would have claimed stay unowned (see docs/connector.md).
"""

from __future__ import annotations

import logging

from zkconsumer.errors import UnreadableRegistration
from zkconsumer.zk.corrupt import CorruptionReporter

log = logging.getLogger(__name__)


def handle_unreadable(reporter: CorruptionReporter, policy: str, path: str,
                      data: bytes | None, problem: Exception) -> None:
    """Report the registration; raise :class:`UnreadableRegistration` unless ``skip``."""
    if policy == "skip":
        reporter.report(path, data, problem,
                        "skipping the consumer (zkconsumer.unreadable.registration.policy=skip)")
        return
    reporter.report(path, data, problem, "failing the rebalance attempt")
    raise UnreadableRegistration(f"cannot rebalance with {path}: {problem}")
