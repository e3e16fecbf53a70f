"""Which Kafka build the original's members run from, and the error when a run cannot have one.

An ``original-zk-*`` protocol's members are the Scala ``ZookeeperConsumerConnector`` of Kafka
0.10.2 in JVMs of their own, started from the same 0.10.2 build that serves as the run's broker
(``--broker kafka:DIR``): the connector then talks to the broker of its own release, as it did in
production. Any other broker (Tansu, 2.4.1, a KRaft node) or servers named by address leave the
members without a build, so the lab refuses the run before anything starts and names the broker
spec it was given.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from zkconsumer.errors import ServerError
from zkconsumer.scenarios.protocols import ORIGINAL_RELEASE, PROTOCOL_TABLE

# What an original member is started with: the build's class runner (its classpath and the
# Java 17 flags come from the build's own bin/env.sh).
RUNNER = "bin/kafka-run-class.sh"


@dataclass(frozen=True)
class BuildChoice:
    """The run's broker spec as far as the original's members are concerned."""

    broker: str | None        # --broker (None: not given)
    servers_named: bool       # --zookeeper/--bootstrap name servers someone else runs


def originals_in(protocols: Iterable[str]) -> list[str]:
    return [p for p in protocols if p in PROTOCOL_TABLE and PROTOCOL_TABLE[p].original]


def build_problem(protocols: Iterable[str], choice: BuildChoice, home: Path | None,
                  version: str | None) -> str | None:
    """Why the original protocols among ``protocols`` cannot run with this broker, else None.

    ``home``/``version``: the Kafka directory the broker spec resolved to and its version (None:
    it named no Kafka directory). Pure, so every refusal is unit-tested.
    """
    wanted = originals_in(protocols)
    if not wanted:
        return None
    verb = "runs" if len(wanted) == 1 else "run"
    need = (f"{', '.join(wanted)} {verb} the original {ORIGINAL_RELEASE} connector's members "
            f"from the broker's Kafka {ORIGINAL_RELEASE} build: give --broker "
            f"kafka:../shared/kafka-{ORIGINAL_RELEASE}")
    if choice.servers_named:
        return f"{need} instead of --zookeeper/--bootstrap (servers named by address)"
    spec = choice.broker if choice.broker else "(none given: the embedded default, tansu)"
    if home is None:
        return f"{need}; got --broker {spec}"
    if version is None or not version.startswith(ORIGINAL_RELEASE + "."):
        return f"{need}; got --broker {spec}, which is Apache Kafka {version}"
    if not (home / RUNNER).is_file():
        return f"{need}; got --broker {spec}, whose directory {str(home)!r} has no {RUNNER}"
    return None


def resolve_home(broker: str | None) -> tuple[Path | None, str | None]:
    """The Kafka directory and version a ``kafka``/``kafka:DIR`` spec names ((None, None) for
    any other broker); a bad directory raises with its own message."""
    from zkconsumer.testing.kafka import kafka_home_from_env, kafka_version
    from zkconsumer.testing.servers import is_kafka_spec

    if not broker or not is_kafka_spec(broker):
        return None, None
    home = kafka_home_from_env(broker[len("kafka:"):] if broker.startswith("kafka:") else None)
    return home, kafka_version(home)


def original_home(protocols: Iterable[str], broker: str | None, servers_named: bool) -> str:
    """The build the original members of ``protocols`` run from ("" when there is none among
    them); raises :class:`ServerError` naming the broker spec when there can be none."""
    if not originals_in(protocols):
        return ""
    if not broker and not servers_named:  # the broker ZKCONSUMER_BOOTSTRAP chooses, if any
        from zkconsumer.testing.servers import BROKER_ENV

        broker = os.environ.get(BROKER_ENV) or None
    try:
        home, version = resolve_home(None if servers_named else broker)
    except ServerError as exc:
        raise ServerError(f"--broker {broker}: {exc}") from None
    problem = build_problem(protocols, BuildChoice(broker, servers_named), home, version)
    if problem is not None:
        raise ServerError(problem)
    return str(home)
