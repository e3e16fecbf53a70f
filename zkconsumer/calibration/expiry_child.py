"""The session the expiry measurement kills: it creates an ephemeral znode and waits.

Run by the session-expiry part of :func:`zkconsumer.calibration.measure.measure_zookeeper`,
as its own process::

    python -m zkconsumer.calibration.expiry_child HOSTS PATH SESSION_TIMEOUT_S

It prints ``ready`` once the znode exists and then sleeps until SIGKILLed, so the server last
hears from it at its create (the measurement has no ping phase).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence

from kazoo.client import KazooClient

WAIT_S = 600  # far longer than any measurement; the parent kills it first


def main(argv: Sequence[str]) -> None:
    hosts, path, timeout_s = argv[0], argv[1], float(argv[2])
    client = KazooClient(hosts=hosts, timeout=timeout_s)
    client.start(timeout=10)
    client.create(path, b"", ephemeral=True, makepath=True)
    print("ready", flush=True)
    time.sleep(WAIT_S)


if __name__ == "__main__":
    main(sys.argv[1:])
