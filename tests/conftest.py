"""Session-wide real servers for the integration tests, selected by environment.

``ZKCONSUMER_ZK`` unset → an embedded ZooKeeper from the pyspark jars; ``testcontainers`` → a
container; ``host:port`` → an external ensemble. ``ZKCONSUMER_BOOTSTRAP`` does the same for the
broker. Tests share one ZooKeeper root (the broker and topics live there) and stay apart through
unique group and topic names.

Tests that need an Apache Kafka build (the original consumer, a real group coordinator) take it
from :func:`kafka_build`. Where the build is missing they cannot run: in CI (``CI=true``, where
the builds are part of the environment) that fails each of them; elsewhere, a clone with nothing
beside it, they are set aside and counted in one block at the end of the run, which says what
they need and where to get it.
"""

from __future__ import annotations

import itertools
import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from kazoo.client import KazooClient

from zkconsumer.admin import create_topic
from zkconsumer.testing.kafka import KAFKA_HOME_ENV, find_kafka_home
from zkconsumer.testing.servers import broker_from_env, zookeeper_from_env

_counter = itertools.count()


def pytest_configure(config: pytest.Config) -> None:
    """With ZKCONSUMER_REQUIRE_SPEEDUPS=1 (``make test`` where a C compiler exists) a run
    without the C extension stops here instead of skipping its tests."""
    if os.environ.get("ZKCONSUMER_REQUIRE_SPEEDUPS") != "1":
        return
    # raises ImportError naming the variable when the extension was not built
    from zkconsumer.datapath import records

    if not records.speedups_enabled():
        raise pytest.UsageError("ZKCONSUMER_REQUIRE_SPEEDUPS=1 and ZKCONSUMER_PURE_PYTHON "
                                "contradict each other: unset one")
_RUN = uuid.uuid4().hex[:6]

# The Apache Kafka release each build beside the checkout (../shared/kafka-<build>) holds.
KAFKA_RELEASES = {"0.10.2": "0.10.2.2", "2.4.1": "2.4.1", "4.0": "4.0"}
NEEDS_KAFKA = "needs Apache Kafka"  # user property: the build a test could not find
NOT_RUN = "need Kafka"  # their category in the counts of the last line
NO_KAFKA_REASON = "needs an Apache Kafka build that is not here (see the summary at the end)"


def in_ci() -> bool:
    """CI sets ``CI=true``; there the Kafka builds are part of the environment."""
    return os.environ.get("CI", "").strip().lower() in ("true", "1")


class KafkaBuildMissing(pytest.skip.Exception):
    """The skip of a test whose Kafka build is missing; it carries the build for the summary."""

    def __init__(self, build: str) -> None:
        super().__init__(NO_KAFKA_REASON)
        self.build = build


def kafka_build_home(build: str) -> Path:
    """The Kafka directory of ``build`` (``0.10.2``, ``2.4.1``, ``4.0``), or the test stops:
    failed in CI, set aside elsewhere."""
    home = find_kafka_home(build)
    if home is not None:
        return home
    if in_ci():
        pytest.fail(f"Apache Kafka {KAFKA_RELEASES.get(build, build)} not found: no "
                    f"shared/kafka-{build} beside this checkout and {KAFKA_HOME_ENV} does not "
                    "name one; CI=true requires the Kafka builds (see docs/brokers.md)",
                    pytrace=False)
    raise KafkaBuildMissing(build)


@pytest.fixture(scope="session")
def kafka_build() -> Callable[[str], Path]:
    """``kafka_build("0.10.2")``: the Kafka directory of that build (see the module docstring)."""
    return kafka_build_home


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                              ) -> Iterator[None]:
    report = yield
    if call.excinfo is not None and isinstance(call.excinfo.value, KafkaBuildMissing):
        report.user_properties.append((NEEDS_KAFKA, call.excinfo.value.build))
    return report


def _needs_kafka(report: pytest.TestReport) -> list[str]:
    return [v for k, v in getattr(report, "user_properties", ()) if k == NEEDS_KAFKA]


@pytest.hookimpl(tryfirst=True)
def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config
                             ) -> tuple[str, str, str] | None:
    """Such tests get a category of their own: counted on the last line and listed once in the
    summary, not one by one among the skips."""
    if report.skipped and _needs_kafka(report):
        return NOT_RUN, "s", "NEEDS KAFKA"
    return None


def kafka_summary(builds: list[str], count: int) -> list[str]:
    """The block that ends a run where ``count`` tests could not run for want of ``builds``."""
    ordered = sorted(set(builds), key=lambda b: [int(x) for x in b.split(".") if x.isdigit()])
    releases = " / ".join(KAFKA_RELEASES.get(b, b) for b in ordered)
    places = ", ".join(f"../shared/kafka-{b}" for b in ordered)
    tests = "test" if count == 1 else "tests"
    return [f"{count} {tests} could not run: they need Apache Kafka {releases} beside the "
            f"checkout ({places}) or in {KAFKA_HOME_ENV}.",
            "Get the official release archives and point the tests at them: see docs/brokers.md "
            "(CI=true makes these tests fail instead)."]


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, exitstatus: int,
                            config: pytest.Config) -> None:
    reports = terminalreporter.stats.get(NOT_RUN, [])
    if not reports:
        return
    builds = [b for r in reports for b in _needs_kafka(r)]
    terminalreporter.section("Apache Kafka builds", sep="=", yellow=True)
    for line in kafka_summary(builds, len(reports)):
        terminalreporter.line(line)


@pytest.fixture(scope="session")
def zk_server() -> Iterator[object]:
    with zookeeper_from_env() as zk:
        yield zk


@pytest.fixture(scope="session")
def zk_connect(zk_server: object) -> str:
    return zk_server.connect_string  # type: ignore[attr-defined,no-any-return]


@pytest.fixture(scope="session")
def broker(zk_connect: str) -> Iterator[object]:
    with broker_from_env(zk_connect) as b:
        yield b


@pytest.fixture
def kazoo_client(zk_connect: str) -> Iterator[KazooClient]:
    client = KazooClient(hosts=zk_connect)
    client.start(timeout=15)
    yield client
    client.stop()
    client.close()


@pytest.fixture
def unique() -> Callable[[str], str]:
    def make(prefix: str = "x") -> str:
        return f"{prefix}-{_RUN}-{os.getpid()}-{next(_counter)}"

    return make


@pytest.fixture
def new_topic(zk_connect: str, broker: object, unique: Callable[[str], str]
              ) -> Callable[..., str]:
    def make(partitions: int = 4, *, broker_partitions: int | None = None) -> str:
        name = unique("topic")
        create_topic(zk_connect, name, partitions, bootstrap=broker.bootstrap,  # type: ignore[attr-defined]
                     broker_partitions=broker_partitions)
        return name

    return make
