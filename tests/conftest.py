"""Session-wide real servers for the integration tests, selected by environment.

``ZKCONSUMER_ZK`` unset → an embedded ZooKeeper from the pyspark jars; ``testcontainers`` → a
container; ``host:port`` → an external ensemble. ``ZKCONSUMER_BOOTSTRAP`` does the same for the
broker. Tests share one ZooKeeper root (the broker and topics live there) and stay apart through
unique group and topic names.
"""

from __future__ import annotations

import itertools
import os
import uuid
from collections.abc import Callable, Iterator

import pytest
from kazoo.client import KazooClient

from zkconsumer.admin import create_topic
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
