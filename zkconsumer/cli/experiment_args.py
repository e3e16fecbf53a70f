"""What every ``experiment`` verb parses the same way: comma-separated choices, the rerun line."""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Callable


def csv_choice(choices: tuple[str, ...]) -> Callable[[str], tuple[str, ...]]:
    """An argparse type: a non-empty comma-separated list, each item one of ``choices``."""
    def parse(text: str) -> tuple[str, ...]:
        items = tuple(x.strip() for x in text.split(",") if x.strip())
        bad = [x for x in items if x not in choices]
        if bad or not items:
            raise argparse.ArgumentTypeError(
                f"{text!r}: choose a comma-separated list from {', '.join(choices)}")
        return items
    return parse


def finish_command(parts: list[str], args: argparse.Namespace) -> str:
    """End an experiment verb's reproduce command: named servers, ``--out``, shell quoting."""
    if getattr(args, "zookeeper", None):
        parts += ["--zk", args.zookeeper]
    if getattr(args, "bootstrap", None):
        parts += ["--bootstrap", args.bootstrap]
    if getattr(args, "broker", None):
        parts += ["--broker", args.broker]
    parts += ["--out", str(args.out)]
    return " ".join(shlex.quote(p) for p in parts)


def servers_named_together(args: argparse.Namespace) -> bool:
    """``--zookeeper`` and ``--bootstrap`` go together (or neither: embedded servers); if not,
    say so on stderr and return False."""
    if bool(args.zookeeper) == bool(args.bootstrap):
        return True
    print("zkconsumer: error: --zookeeper and --bootstrap go together (or neither: "
          "embedded servers)", file=sys.stderr)
    return False


def kip848_heartbeat(args: argparse.Namespace) -> dict[str, object] | str:
    """What meta.json records of the KIP-848 groups' heartbeat (the interval the broker gave
    them, when the run starts an Apache Kafka 4 broker), or the error when
    ``--consumer-heartbeat-ms`` names a broker that has no such setting."""
    from zkconsumer.testing.kraft import DEFAULT_CONSUMER_HEARTBEAT_MS
    from zkconsumer.testing.servers import is_kraft_spec

    kraft = bool(args.broker) and is_kraft_spec(args.broker)
    if args.consumer_heartbeat_ms is not None and not kraft:
        return ("--consumer-heartbeat-ms is a setting of the Apache Kafka 4 broker the run "
                "starts: give --broker kafka:DIR with a Kafka 4 directory")
    if not kraft:
        return {}
    hb = args.consumer_heartbeat_ms
    return {"consumer_heartbeat_interval_ms": DEFAULT_CONSUMER_HEARTBEAT_MS if hb is None else hb,
            "consumer_heartbeat_source": "broker default" if hb is None
            else "--consumer-heartbeat-ms"}
