"""A plain kazoo client for the tools around the connector (the lab, the test harness).

The connector talks to ZooKeeper through its counted session (``zk/session.py``); the lab's
observers and set-up steps only read or seed znodes and want a started client that is always
stopped and closed afterwards, also when the step fails halfway.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from kazoo.client import KazooClient

START_TIMEOUT_S = 15.0


@contextlib.contextmanager
def started_client(hosts: str, timeout: float = START_TIMEOUT_S) -> Iterator[KazooClient]:
    """A kazoo client of ``hosts``, started (``timeout`` seconds to connect), stopped and closed
    on exit."""
    client = KazooClient(hosts=hosts)
    client.start(timeout=timeout)
    try:
        yield client
    finally:
        client.stop()
        client.close()
