"""The demo's consumer part: a small group consumes the topic; the operator tools inspect it."""

from __future__ import annotations

import threading
import time

from zkconsumer import ConsumerConfig, ConsumerTimeoutException, ZookeeperConsumerConnector
from zkconsumer.admin.groups import describe_group, verify_group
from zkconsumer.admin.tree import group_tree


def _drain(stream: object, seen: list[int], lock: threading.Lock, stop: threading.Event) -> None:
    it = iter(stream)  # type: ignore[call-overload]
    while not stop.is_set():
        try:
            next(it)
        except ConsumerTimeoutException:
            continue
        except StopIteration:
            return
        with lock:
            seen[0] += 1


def run_group(zk_connect: str, topic: str, group: str, expected: int, members: int = 2,
              streams: int = 2, timeout_s: float = 60.0) -> None:
    """Start ``members`` connectors, consume ``expected`` messages, show describe and verify."""
    props = {"zookeeper.connect": zk_connect, "group.id": group, "auto.offset.reset": "smallest",
             "consumer.timeout.ms": 200, "rebalance.backoff.ms": 500,
             "rebalance.max.retries": 10, "auto.commit.interval.ms": 1000}
    conns = [ZookeeperConsumerConnector(ConsumerConfig(props)) for _ in range(members)]
    seen, lock, stop = [0], threading.Lock(), threading.Event()
    threads: list[threading.Thread] = []
    try:
        started = time.monotonic()
        for conn in conns:
            for stream in conn.create_message_streams({topic: streams})[topic]:
                t = threading.Thread(target=_drain, args=(stream, seen, lock, stop),
                                     name=f"demo-drain-{len(threads)}", daemon=True)
                t.start()
                threads.append(t)
        while seen[0] < expected and time.monotonic() - started < timeout_s:
            time.sleep(0.1)
        print(f"{members} connectors x {streams} streams consumed {seen[0]} of {expected} "
              f"messages in {time.monotonic() - started:.2f} s")
        for conn in conns:
            conn.commit_offsets()
            m = conn.metrics()
            print(f"  {conn.consumer_id}: owns {len(conn.owned_partitions())} partitions, "
                  f"rebalances {m.get('rebalances', '?')}")
        print(f"\n$ zkconsumer groups describe --group {group}")
        desc = describe_group(zk_connect, group)
        print(f"{'TOPIC':<14} {'PID':>3} {'OFFSET':>7} {'LOG-END':>7} {'LAG':>4} OWNER")
        for r in desc.partitions:
            print(f"{r.topic:<14} {r.partition:>3} {r.offset!s:>7} {r.log_end!s:>7} "
                  f"{r.lag!s:>4} {r.owner or 'none'}")
        result = verify_group(zk_connect, group)
        print(f"\n$ zkconsumer groups verify --group {group}\n"
              + ("Rebalance operation successful !" if result.ok else
                 f"Rebalance operation failed ! {result.violations}"))
        from zkconsumer.admin import zk_session
        with zk_session(zk_connect) as client:
            print(f"\nznodes of group {group}:")
            for line in group_tree(client, group)[:40]:
                print(line)
    finally:
        stop.set()
        for conn in conns:
            conn.shutdown()
        for t in threads:
            t.join(5)
