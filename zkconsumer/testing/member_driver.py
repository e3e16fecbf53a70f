"""One zkconsumer group member speaking the original member driver's protocol.

    python -m zkconsumer.testing.member_driver zk=HOST:PORT group=G (topic=T | filter=REGEX) \\
        [streams=N] [seconds=S] [any ConsumerConfig key=value]

The same arguments, defaults and stdout lines as ``bin/zk-consumer-member.sh`` of
``../shared/kafka-0.10.2`` (see :mod:`zkconsumer.testing.original`), so one harness drives both
kinds: ready after the first rebalance, one ``MSG`` line per message handed to the application,
and ``seconds`` later a clean shutdown (commit, release, leave) and ``SHUTDOWN``.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Mapping, Sequence

from zkconsumer import ConsumerTimeoutException, KafkaStream, ZookeeperConsumerConnector
from zkconsumer.config import ConsumerConfig
from zkconsumer.testing.original import format_assignment, format_release
from zkconsumer.topic_filter import Whitelist

OWN_KEYS = ("zk", "group", "topic", "streams", "seconds", "filter")
# The original driver's defaults, overridable by the same keys.
DEFAULTS = {"auto.offset.reset": "smallest", "consumer.timeout.ms": "500",
            "zookeeper.session.timeout.ms": "6000"}


def parse_args(argv: Sequence[str]) -> dict[str, str]:
    kv = {}
    for arg in argv:
        key, eq, value = arg.partition("=")
        if not eq or not key:
            raise SystemExit(f"member_driver: argument {arg!r} is not key=value")
        kv[key] = value
    if "group" not in kv or ("topic" in kv) == ("filter" in kv):
        raise SystemExit("member_driver: needs group= and exactly one of topic= and filter=")
    return kv


def config_of(kv: Mapping[str, str]) -> ConsumerConfig:
    props: dict[str, object] = {"zookeeper.connect": kv.get("zk", "127.0.0.1:2181"),
                                "group.id": kv["group"], **DEFAULTS}
    props.update({k: v for k, v in kv.items() if k not in OWN_KEYS})
    return ConsumerConfig(props)


class _Printer:
    """Whole lines, flushed at once: what was printed was delivered."""

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def __call__(self, line: str) -> None:
        with self._lock:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()


class _Listener:
    def __init__(self, out: _Printer) -> None:
        self.out = out

    def before_releasing_partitions(self, owned: Mapping[str, object]) -> None:
        self.out("REBALANCE_RELEASE " + format_release(owned))

    def before_starting_fetchers(self, consumer_id: str,
                                 assignment: Mapping[str, Mapping[int, str]]) -> None:
        self.out(f"REBALANCE_ASSIGN {consumer_id} {format_assignment(assignment)}")


def _drain(i: int, stream: KafkaStream, running: threading.Event, out: _Printer) -> None:
    it = iter(stream)
    while running.is_set():
        try:
            m = next(it)
        except ConsumerTimeoutException:
            continue
        except StopIteration:
            return
        key = m.key.decode() if m.key is not None else "null"
        value = m.message.decode() if m.message is not None else "null"
        out(f"MSG stream={i} topic={m.topic} partition={m.partition} offset={m.offset} "
            f"key={key} value={value}")


def main(argv: Sequence[str] | None = None) -> int:
    kv = parse_args(sys.argv[1:] if argv is None else argv)
    streams_n = int(kv.get("streams", "1"))
    seconds = int(kv.get("seconds", "60"))
    out = _Printer()
    conn = ZookeeperConsumerConnector(config_of(kv))
    conn.set_consumer_rebalance_listener(_Listener(out))
    conn.start()
    if "filter" in kv:
        streams = conn.create_message_streams_by_filter(Whitelist(kv["filter"]), streams_n)
    else:
        streams = conn.create_message_streams({kv["topic"]: streams_n})[kv["topic"]]
    out(f"READY streams={len(streams)}")
    running = threading.Event()
    running.set()
    threads = [threading.Thread(target=_drain, args=(i, s, running, out), name=f"stream-{i}",
                                daemon=True) for i, s in enumerate(streams)]
    for t in threads:
        t.start()
    time.sleep(seconds)
    running.clear()
    for t in threads:
        t.join(2.0)
    conn.shutdown()
    out("SHUTDOWN")
    return 0


if __name__ == "__main__":
    sys.exit(main())
