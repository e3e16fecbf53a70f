"""When a member's fetcher receives the lab's paced messages (``calibrate --delivery-onto``).

A legacy rebalance's fetcher stop ends when the fetcher thread's ``consume`` returns: at its
next message or at the end of its 100 ms poll, and its polls restart at each message. Under
the lab's producer (record ``n`` sent at ``n / rate`` to partition ``n mod P``), a member's
messages therefore set where its stop ends, and the simulator places each stop on that
schedule (:mod:`zkconsumer.sim.producer_schedule`). What the schedule alone does not give is
when a sent message reaches the fetcher: the client fetches in rounds, so a message waits
for its fetcher's next round. :func:`measure_delivery_lags` sends the lab's traffic with the
lab's producer and reads it with fetchers of two partitions each, as the herd's members at
N = 12 hold them; each message's lag is its receipt less its scheduled send, less the
smallest lag seen (the constant part: the producer's start and the network).
:func:`delivery_round_ms` takes the round as the span of a uniform fitted to the lags (the
lags of paced messages against rounds at a phase of their own are uniform over one round).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from zkconsumer.calibration.fetcher_stop import STOP_PARTITIONS, uniform_ends

if TYPE_CHECKING:
    from zkconsumer.datapath.chunks import ChunkQueue

LAB_PARTITIONS = 24  # the herd's topic
LAB_RATE = 40.0  # the herd's messages a second over the topic (Timing.produce_rate)
FETCHERS = 3
READ_S = 8.0


def relative_lags(received: Sequence[tuple[float, int]], start: float, rate: float
                  ) -> list[float]:
    """Each message's receipt (``(monotonic time, sequence number)``) less its scheduled send
    (``start + n / rate``), less the smallest such lag, in ms; sorted."""
    if not received:
        raise ValueError("no message was received: cannot time the deliveries")
    lags = [t - (start + n / rate) for t, n in received]
    low = min(lags)
    return sorted(round((x - low) * 1000.0, 3) for x in lags)


def delivery_round_ms(lags_ms: Sequence[float]) -> float:
    """The fetch round: the span of the uniform whose ends :func:`uniform_ends` estimates from
    the relative lags (ms)."""
    ends = uniform_ends(lags_ms)
    return round(ends.high_ms - ends.low_ms, 2)


def measure_delivery_lags(zk_connect: str, bootstrap: str, fetchers: int = FETCHERS,
                          read_s: float = READ_S) -> list[float]:
    """The relative lags (ms) of the lab's paced traffic (:data:`LAB_RATE` over
    :data:`LAB_PARTITIONS` partitions, the lab's producer) received by ``fetchers`` fetchers of
    :data:`STOP_PARTITIONS` partitions each over ``read_s`` seconds."""
    from zkconsumer.calibration.fetcher_stop import start_fetcher, wait_fetching
    from zkconsumer.calibration.leave import measuring_topic
    from zkconsumer.datapath.chunks import ChunkQueue
    from zkconsumer.lab.producer import SteadyProducer

    if fetchers * STOP_PARTITIONS > LAB_PARTITIONS:
        raise ValueError(f"{fetchers} fetchers of {STOP_PARTITIONS} partitions do not fit "
                         f"in {LAB_PARTITIONS} partitions")
    received: list[tuple[float, int]] = []
    lock = threading.Lock()
    with measuring_topic(zk_connect, bootstrap, "calibrate-delivery", LAB_PARTITIONS) \
            as (topic, zk):
        managers, stop = [], threading.Event()
        try:
            for k in range(fetchers):
                queue = ChunkQueue(16, f"{topic}-{k}")
                threading.Thread(target=_record, args=(queue, received, lock, stop),
                                 name=f"delivery-reader-{k}", daemon=True).start()
                managers.append(start_fetcher(
                    zk_connect, zk, f"{topic}-{k}", f"delivery{k}", topic,
                    range(k * STOP_PARTITIONS, (k + 1) * STOP_PARTITIONS), queue))
            for manager in managers:
                wait_fetching(manager, STOP_PARTITIONS, 30.0)
            time.sleep(1.0)  # the fetchers are at the log end before the first send
            producer = SteadyProducer(bootstrap, topic, LAB_PARTITIONS, LAB_RATE)
            start = time.monotonic()
            producer.start()
            time.sleep(read_s)
            producer.stop()
            time.sleep(0.3)  # the last fetch round
        finally:
            stop.set()
            for manager in managers:
                manager.shutdown()
    with lock:
        return relative_lags(received, start, LAB_RATE)


def _record(queue: ChunkQueue, received: list[tuple[float, int]], lock: threading.Lock,
            stop: threading.Event) -> None:
    """A member's consumer thread: take each chunk as it is queued and note when each of its
    messages arrived with its sequence number."""
    while not stop.is_set():
        chunk = queue.get(timeout=0.2)
        if chunk is None or not getattr(chunk, "messages", None):
            continue
        now = time.monotonic()
        with lock:
            received.extend((now, int(m.value())) for m in chunk.messages)
