"""``consume``: the console consumer, on the ZooKeeper-coordinated connector.

One Python thread reads every stream in turn (a short ``consumer.timeout.ms`` per turn), so the
message count is exact: ``--max-messages N`` prints N messages and commits exactly those, and no
message is taken from a stream without being printed (nothing is lost for the group).
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from typing import Any, TextIO

from zkconsumer.admin.options import add_zk_option
from zkconsumer.errors import ConsumerTimeoutException

FIELDS = ("key", "value", "partition", "offset", "topic")
TURN_MS = 100          # consumer.timeout.ms of one turn on one stream
MAX_PER_TURN = 500     # messages taken from one stream before moving to the next


def register(sub: Any) -> None:
    p = sub.add_parser("consume", help="console consumer on the ZooKeeper-coordinated group")
    add_zk_option(p)
    p.add_argument("--group", required=True, help="the consumer group (group.id) to join")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--topic", help="consume this topic")
    what.add_argument("--whitelist", metavar="REGEX",
                      help="consume every topic matching REGEX (Java's syntax, as the original)")
    p.add_argument("--threads", type=int, default=1, help="streams (consumer threads)")
    p.add_argument("--from-beginning", action="store_true",
                   help="auto.offset.reset=smallest when the group has no committed offset")
    p.add_argument("--max-messages", type=int, default=None,
                   help="exit after this many messages (default: no limit)")
    p.add_argument("--timeout-ms", type=int, default=None,
                   help="exit after this long without a message (default: wait forever)")
    p.add_argument("--print", dest="fields", default="value",
                   help=f"comma-separated fields among {','.join(FIELDS)} (default: value)")
    p.add_argument("--property", action="append", default=[], metavar="KEY=VALUE",
                   help="extra consumer property, e.g. rebalance.backoff.ms=500")
    p.set_defaults(func=consume)


def _parse_fields(raw: str) -> list[str]:
    fields = [f.strip() for f in raw.split(",") if f.strip()]
    bad = [f for f in fields if f not in FIELDS]
    if bad or not fields:
        raise SystemExit(f"zkconsumer consume: error: argument --print: unknown field(s) "
                         f"{bad or raw!r}; choose among {', '.join(FIELDS)}")
    return fields


def _properties(items: list[str]) -> dict[str, str]:
    props = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise SystemExit(f"zkconsumer consume: error: argument --property: expected "
                             f"KEY=VALUE, got {item!r}")
        props[key.strip()] = value.strip()
    return props


def _render(m: Any, fields: list[str]) -> str:
    out = []
    for f in fields:
        if f == "key":
            out.append((m.key or b"").decode("utf-8", errors="replace"))
        elif f == "value":
            out.append((m.message or b"").decode("utf-8", errors="replace"))
        elif f == "partition":
            out.append(str(m.partition))
        elif f == "offset":
            out.append(str(m.offset))
        else:
            out.append(m.topic)
    return "\t".join(out)


class Progress:
    """A live counter on a terminal, a rate line every few seconds otherwise (both on stderr)."""

    def __init__(self, err: TextIO, live: bool, every_s: float = 5.0) -> None:
        self.err, self.live, self.every_s = err, live, every_s
        self.count = 0
        self.started = self._last = time.monotonic()
        self._last_count = 0

    def tick(self, n: int = 1) -> None:
        self.count += n
        now = time.monotonic()
        if self.live and now - self._last >= 0.2:
            self.err.write(f"\rconsumed {self.count} messages")
            self.err.flush()
            self._last = now
        elif not self.live and now - self._last >= self.every_s:
            rate = (self.count - self._last_count) / (now - self._last)
            self.err.write(f"consumed {self.count} messages ({rate:.0f}/s)\n")
            self.err.flush()
            self._last, self._last_count = now, self.count

    def done(self) -> None:
        took = time.monotonic() - self.started
        prefix = "\r" if self.live else ""
        self.err.write(f"{prefix}consumed {self.count} messages in {took:.1f} s\n")
        self.err.flush()


def consume(args: argparse.Namespace) -> int:
    from zkconsumer import ConsumerConfig, Whitelist, ZookeeperConsumerConnector

    fields = _parse_fields(args.fields)
    for name in ("threads", "max_messages", "timeout_ms"):
        value = getattr(args, name)
        if value is not None and value < (1 if name == "threads" else 0):
            raise SystemExit(f"zkconsumer consume: error: argument --{name.replace('_', '-')}: "
                             f"must be {'>= 1' if name == 'threads' else '>= 0'}, got {value}")
    props: dict[str, object] = {
        "zookeeper.connect": args.zk, "group.id": args.group,
        "auto.offset.reset": "smallest" if args.from_beginning else "largest",
        "consumer.timeout.ms": TURN_MS,
    }
    props.update(_properties(args.property))
    config = ConsumerConfig(props)
    progress = Progress(sys.stderr, live=sys.stdout.isatty() and sys.stderr.isatty())
    stop = {"flag": False}
    # Ctrl-C and SIGTERM only set a flag, checked between messages: a message taken from a
    # stream is always printed before the final commit covers it.
    previous = {sig: signal.signal(sig, lambda *_: stop.update(flag=True))
                for sig in (signal.SIGINT, signal.SIGTERM)}
    conn = ZookeeperConsumerConnector(config)
    try:
        if args.topic:
            streams = conn.create_message_streams({args.topic: args.threads})[args.topic]
        else:
            streams = conn.create_message_streams_by_filter(Whitelist(args.whitelist),
                                                            num_streams=args.threads)
        idle_since = time.monotonic()
        remaining = args.max_messages
        while not stop["flag"] and (remaining is None or remaining > 0):
            got_any = False
            for stream in streams:
                it = iter(stream)
                taken = 0
                while taken < MAX_PER_TURN and not stop["flag"] and \
                        (remaining is None or remaining > 0):
                    try:
                        m = next(it)
                    except ConsumerTimeoutException:
                        break
                    except StopIteration:
                        stop["flag"] = True
                        break
                    print(_render(m, fields), flush=False)
                    taken += 1
                    if remaining is not None:
                        remaining -= 1
                if taken:
                    got_any = True
                    sys.stdout.flush()
                    progress.tick(taken)
            if got_any:
                idle_since = time.monotonic()
            elif args.timeout_ms is not None and \
                    (time.monotonic() - idle_since) * 1000 >= args.timeout_ms:
                break
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        try:
            conn.commit_offsets()
        finally:
            conn.shutdown()
        progress.done()
    return 0
