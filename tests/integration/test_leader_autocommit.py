"""coordination.mode=leader on real servers: a zombie's auto-commit, fenced on the session that
expired while it was cut off, is refused, and the refusal is one warning line, no traceback."""

from __future__ import annotations

import logging
import re
import threading

from connector_helpers import StreamDrain, fast_config, owners, wait_until

from zkconsumer import ZookeeperConsumerConnector
from zkconsumer.admin import produce
from zkconsumer.events import EventBus
from zkconsumer.faults import FaultProxy
from zkconsumer.offsets.auto_commit import AutoCommitter
from zkconsumer.zk import paths


def _autocommit_lines(caplog) -> list[logging.LogRecord]:
    return [r for r in caplog.records
            if r.name == "zkconsumer.offsets.auto_commit" and "autoCommit" in r.getMessage()]


def test_a_zombies_auto_commit_is_refused_in_one_line(zk_connect, broker, new_topic, unique,
                                                      kazoo_client, caplog):
    """The zombie consumed a message it never committed; cut off, its session expires and the
    survivor takes everything. Its auto-commit task then commits, fenced on the dead session:
    the commit waits for the connection, is refused when the cut heals, and the log says so
    once, naming the group and the partition."""
    topic, group = new_topic(2), unique("g")
    with FaultProxy.for_address(zk_connect, name="zk") as proxy:
        zombie = ZookeeperConsumerConnector(fast_config(
            proxy.address, group, consumer_id="z", coordination_mode="leader",
            auto_commit_enable=False))  # the test runs the auto-commit task itself, below
        other: ZookeeperConsumerConnector | None = None
        task: AutoCommitter | None = None
        try:
            zdrain = StreamDrain(zombie.create_message_streams({topic: 1})[topic])
            other = ZookeeperConsumerConnector(fast_config(
                zk_connect, group, consumer_id="o", coordination_mode="leader"))
            other.create_message_streams({topic: 1})
            wait_until(lambda: len(set(owners(kazoo_client, group, topic).values())) == 2, 30,
                       "both members own a partition")
            [zpart] = [p for p, o in owners(kazoo_client, group, topic).items()
                       if o == f"{group}_z-0"]
            produce(broker.bootstrap, topic, ["before"], partition=zpart)
            wait_until(lambda: b"before" in zdrain.values(), 30, "the zombie consumed")

            proxy.blackhole()
            reg = paths.consumer_registration(group, f"{group}_z")
            wait_until(lambda: kazoo_client.exists(reg) is None, 30, "the zombie's expiry")
            wait_until(lambda: set(owners(kazoo_client, group, topic).values())
                       == {f"{group}_o-0"}, 30, "the survivor to own everything")

            committing = threading.Event()

            def commit() -> None:
                committing.set()
                zombie.commit_offsets()

            with caplog.at_level(logging.INFO, logger="zkconsumer.offsets.auto_commit"):
                task = AutoCommitter("autocommit-z", 100, commit, EventBus(f"{group}_z"))
                task.start()
                # the commit of "before", fenced on the dead session, waits on the cut
                # connection; the session it names is found gone once the cut heals
                wait_until(committing.is_set, 30, "the auto-commit task to commit")
                proxy.heal()
                wait_until(lambda: _autocommit_lines(caplog), 30, "the refusal to be logged")
                wait_until(lambda: kazoo_client.exists(reg) is not None, 30,
                           "the zombie re-registers in a new session")
                wait_until(lambda: len(set(owners(kazoo_client, group, topic).values())) == 2,
                           30, "the healed member is given a partition again")
                task.stop()
            [line] = _autocommit_lines(caplog)
            assert line.levelno == logging.WARNING and line.exc_info is None
            assert re.fullmatch(
                rf"\[{re.escape(group)}_z\] autoCommit refused for group '{re.escape(group)}', "
                rf"partitions {re.escape(topic)}/{zpart}: its session 0x[0-9a-f]+ has expired; "
                r"the member rejoins in a new session \(expected after a session expiry\)",
                line.getMessage())
            assert not [r for r in caplog.records if r.name == "zkconsumer.offsets.auto_commit"
                        and r.levelno >= logging.ERROR]
        finally:
            if task is not None:
                task.stop()
            zombie.shutdown()
            if other is not None:
                other.shutdown()
