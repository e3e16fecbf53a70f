"""One reader process of the read-service measurement (:mod:`.read_service`).

    python -m zkconsumer.calibration.reader_child HOSTS BASE ZNODES CLIENTS WINDOW START_AT BURST_S

``CLIENTS`` sessions (separate processes, so the Python clients are not one GIL), each keeping
``WINDOW`` ``getData`` requests on ``BASE/n00000...`` in flight from the wall-clock instant
``START_AT`` for ``BURST_S`` seconds. Prints ``ready`` once connected, then the number of reads
completed.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Sequence

from kazoo.client import KazooClient


def _read(client: KazooClient, base: str, znodes: int, window: int, first: int,
          deadline: float, done: list[int], slot: int) -> None:
    i = first
    pending = []
    while time.time() < deadline:
        while len(pending) < window:
            pending.append(client.get_async(f"{base}/n{i % znodes:05d}"))
            i += 1
        pending.pop(0).get(timeout=30)
        done[slot] += 1
    for p in pending:
        p.get(timeout=30)
        done[slot] += 1


def main(argv: Sequence[str]) -> None:
    hosts, base = argv[0], argv[1]
    znodes, clients, window = int(argv[2]), int(argv[3]), int(argv[4])
    start_at, burst_s = float(argv[5]), float(argv[6])
    sessions = [KazooClient(hosts=hosts) for _ in range(clients)]
    for c in sessions:
        c.start(timeout=30)
    print("ready", flush=True)
    while time.time() < start_at:
        time.sleep(0.005)
    deadline = start_at + burst_s
    done = [0] * clients
    threads = [threading.Thread(target=_read, args=(sessions[k], base, znodes, window, k,
                                                    deadline, done, k))
               for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(sum(done), flush=True)
    for c in sessions:
        c.stop()
        c.close()


if __name__ == "__main__":
    main(sys.argv[1:])
