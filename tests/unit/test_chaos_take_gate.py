"""A chaos member's commit on release gets its turn after at most one take of the consuming
thread, however busily that thread takes again."""

from __future__ import annotations

import threading
import time

from zkconsumer.lab.chaos.consumer import CommitOnRelease, TakeGate


def test_a_commit_waits_for_at_most_the_take_in_progress():
    gate, stop = TakeGate(), threading.Event()
    takes = 0

    def consume() -> None:
        nonlocal takes
        while not stop.is_set():
            gate.take_turn()
            with gate.lock:  # a take that waits inside the hold, as next() on the stream does
                takes += 1
                time.sleep(0.02)

    thread = threading.Thread(target=consume, daemon=True)
    thread.start()
    waited = []

    class Conn:
        def commit_offsets(self) -> None:
            waited.append(takes - asked)
            # the consuming thread cannot take while the commit has the turn
            before = takes
            time.sleep(0.05)
            assert takes == before

    listener = CommitOnRelease(Conn(), gate)
    try:
        for _ in range(20):
            time.sleep(0.005)
            asked = takes
            listener.before_releasing_partitions(None)
    finally:
        stop.set()
        thread.join(2)
    # each commit ran after the take in progress when it asked, never after a later one
    assert len(waited) == 20 and max(waited) <= 1, waited
    assert takes > 20  # and the consuming thread went on taking between the commits
