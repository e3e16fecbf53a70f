"""The servers a lab experiment runs against, started for it or named by address.

Every experiment shares them: the compare runs and the split-brain scenarios start (or are
given) one ZooKeeper and one broker and hand the same :class:`Servers` to each run.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

from zkconsumer.lab.mntr import parse_mntr
from zkconsumer.scenarios.timing import Timing

log = logging.getLogger(__name__)


class RunError(Exception):
    """A run could not be measured (the group never formed, the servers went away...)."""


# A Kafka broker the lab starts accepts the short sessions of the lab's scenarios (its default
# group.min.session.timeout.ms, 6 s, would refuse the split-brain runs' 4 s).
LAB_KAFKA_PROPS = ("group.min.session.timeout.ms=500",)


@dataclass(frozen=True)
class Servers:
    """``broker_name``: the broker results name (``tansu-0.6.0``, ``apache-kafka-2.4.1``), ""
    when the servers were given by address and the broker is not known by name."""

    zk_connect: str
    bootstrap: str
    broker_name: str = ""

    def mntr(self) -> dict[str, float]:
        """The ZooKeeper server's ``mntr`` numbers (first server of the connect string)."""
        from zkconsumer.testing.servers import ExternalZooKeeper

        try:
            text = ExternalZooKeeper(self.zk_connect).four_letter("mntr")
        except Exception as exc:
            log.warning("mntr failed on %s: %s", self.zk_connect, exc)
            return {}
        return parse_mntr(text)


class ServerChoice(Protocol):
    """What an experiment's spec says about its servers (``ExperimentSpec`` has these)."""

    zk_connect: str | None
    bootstrap: str | None
    broker: str | None
    timing: Timing


@contextlib.contextmanager
def servers_for(spec: ServerChoice) -> Iterator[Servers]:
    """The servers named in the spec, else embedded ones (or those ZKCONSUMER_ZK/_BOOTSTRAP
    select) for the duration of the experiment."""
    if spec.zk_connect and spec.bootstrap:
        yield Servers(spec.zk_connect, spec.bootstrap)
        return
    from zkconsumer.testing.kraft import consumer_group_props
    from zkconsumer.testing.servers import broker_from_env, is_kraft_spec, zookeeper_from_env

    # A Kafka 4 broker also gets the KIP-848 groups' session (the run's) and heartbeat; other
    # brokers have no such settings, so their runs never depend on them.
    kraft_props = (consumer_group_props(spec.timing.session_timeout_ms,
                                        spec.timing.consumer_heartbeat_interval_ms)
                   if is_kraft_spec(spec.broker) else ())
    with zookeeper_from_env(spec.zk_connect) as zk, broker_from_env(
            zk.connect_string, spec.broker, kafka_props=LAB_KAFKA_PROPS,
            kraft_props=kraft_props) as broker:
        yield Servers(zk.connect_string, broker.bootstrap, getattr(broker, "name", ""))
