"""A group member in its own process, so a test can SIGKILL it (a real crash, no cleanup).

Usage: python member_process.py <zk_connect> <group> <topic> <consumer.id> <streams>
Prints ``READY <consumer id>`` once its first rebalance succeeded, then ``MSG <value>`` for
every message it receives (flushed at once: what was printed was delivered to the application).
"""

from __future__ import annotations

import sys
import threading

from zkconsumer import ConsumerTimeoutException, ZookeeperConsumerConnector
from zkconsumer.config import ConsumerConfig


def main() -> None:
    zk_connect, group, topic, consumer_id, streams = sys.argv[1:6]
    cfg = ConsumerConfig({
        "zookeeper.connect": zk_connect, "group.id": group, "consumer.id": consumer_id,
        "auto.offset.reset": "smallest", "consumer.timeout.ms": 200,
        "zookeeper.session.timeout.ms": 4000, "rebalance.backoff.ms": 700,
        "rebalance.max.retries": 10, "auto.commit.interval.ms": 500,
        "refresh.leader.backoff.ms": 100,
    })
    conn = ZookeeperConsumerConnector(cfg)
    conn.start()
    topic_streams = conn.create_message_streams({topic: int(streams)})[topic]
    lock = threading.Lock()
    print(f"READY {conn.consumer_id}", flush=True)

    def drain(stream: object) -> None:
        it = iter(stream)  # type: ignore[call-overload]
        while True:
            try:
                m = next(it)
            except ConsumerTimeoutException:
                continue
            except StopIteration:
                return
            with lock:
                sys.stdout.write(f"MSG {m.message.decode()}\n")
                sys.stdout.flush()

    threads = [threading.Thread(target=drain, args=(s,), daemon=True) for s in topic_streams]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


if __name__ == "__main__":
    main()
