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
from zkconsumer.testing.original import DRIVER
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
NEEDS_DRIVER = "needs the member driver"  # user property: the build found lacks DRIVER
NOT_RUN = "need Kafka"  # their category in the counts of the last line
NO_KAFKA_REASON = "needs an Apache Kafka build that is not here (see the summary at the end)"


def in_ci() -> bool:
    """CI sets ``CI=true``; there the Kafka builds are part of the environment."""
    return os.environ.get("CI", "").strip().lower() in ("true", "1")


class KafkaBuildMissing(pytest.skip.Exception):
    """The skip of a test whose Kafka build is missing (``need`` says what is), carrying the
    build for the summary."""

    def __init__(self, need: str, build: str) -> None:
        super().__init__(NO_KAFKA_REASON)
        self.need, self.build = need, build


def kafka_build_home(build: str, member_driver: bool = False) -> Path:
    """The Kafka directory of ``build`` (``0.10.2``, ``2.4.1``, ``4.0``), or the test stops:
    failed in CI, set aside elsewhere. ``member_driver``: the test starts original consumer
    members, which only the project's own 0.10.2 build can (an Apache release has no driver)."""
    release = KAFKA_RELEASES.get(build, build)
    home = find_kafka_home(build)
    if home is not None and (not member_driver or (home / DRIVER).is_file()):
        return home
    if in_ci():
        pytest.fail(f"Apache Kafka {release} not found: no shared/kafka-{build} beside this "
                    f"checkout and {KAFKA_HOME_ENV} does not name one; CI=true requires the "
                    "Kafka builds (see docs/brokers.md)" if home is None else
                    f"{home} has no {DRIVER}, the original consumer's member driver of the "
                    f"project's {build} build; CI=true requires it (see docs/brokers.md)",
                    pytrace=False)
    raise KafkaBuildMissing(NEEDS_KAFKA if home is None else NEEDS_DRIVER, build)


@pytest.fixture(scope="session")
def kafka_build() -> Callable[..., Path]:
    """``kafka_build("0.10.2", member_driver=False)``: the Kafka directory of that build (see
    the module docstring)."""
    return kafka_build_home


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                              ) -> Iterator[None]:
    report = yield
    if call.excinfo is not None and isinstance(call.excinfo.value, KafkaBuildMissing):
        report.user_properties.append((call.excinfo.value.need, call.excinfo.value.build))
    return report


def _missing(report: pytest.TestReport, need: str) -> list[str]:
    return [v for k, v in getattr(report, "user_properties", ()) if k == need]


@pytest.hookimpl(tryfirst=True)
def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config
                             ) -> tuple[str, str, str] | None:
    """Such tests get a category of their own: counted on the last line and listed once in the
    summary, not one by one among the skips."""
    if report.skipped and (_missing(report, NEEDS_KAFKA) or _missing(report, NEEDS_DRIVER)):
        return NOT_RUN, "s", "NEEDS KAFKA"
    return None


def _tests(n: int) -> str:
    return f"{n} test" if n == 1 else f"{n} tests"


def kafka_summary(builds: list[str], drivers: list[str]) -> list[str]:
    """The block that ends a run: one entry of ``builds`` per test that could not run for want
    of that build, one of ``drivers`` per test whose build lacks the member driver."""
    lines = []
    if builds:
        ordered = sorted(set(builds), key=lambda b: [int(x) for x in b.split(".")
                                                     if x.isdigit()])
        releases = " / ".join(KAFKA_RELEASES.get(b, b) for b in ordered)
        places = ", ".join(f"../shared/kafka-{b}" for b in ordered)
        they = "it needs" if len(builds) == 1 else "they need"
        lines.append(f"{_tests(len(builds))} could not run: {they} Apache Kafka {releases} "
                     f"beside the checkout ({places}) or in {KAFKA_HOME_ENV}.")
    if drivers:
        lines.append(f"{_tests(len(drivers))} could not run: original consumer members start "
                     f"through {DRIVER}, which only the project's own "
                     f"{' / '.join(sorted(set(drivers)))} build has.")
    lines.append("How to get them: docs/brokers.md (with CI=true these tests fail instead).")
    return lines


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, exitstatus: int,
                            config: pytest.Config) -> None:
    reports = terminalreporter.stats.get(NOT_RUN, [])
    if not reports:
        return
    terminalreporter.section("Apache Kafka builds", sep="=", yellow=True)
    for line in kafka_summary([b for r in reports for b in _missing(r, NEEDS_KAFKA)],
                              [b for r in reports for b in _missing(r, NEEDS_DRIVER)]):
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
