"""The broker a Spark job's real mode starts, as both jobs name, configure and record it.

``--broker`` (tansu, kafka, kafka:DIR) chooses the broker the driver starts when no
``--bootstrap`` names one; an Apache Kafka 4 broker also gets the KIP-848 groups' session
timeout (the run's) and heartbeat interval (``--consumer-heartbeat-ms``, a broker setting under
KIP-848), and ``meta.json`` records which interval the KIP-848 rows ran with.
"""

from __future__ import annotations

import argparse
from typing import Any

from zkconsumer.lab.broker_option import add_broker_option, broker_name


def add_broker_arguments(p: argparse.ArgumentParser) -> None:
    """``--broker`` and ``--consumer-heartbeat-ms``."""
    add_broker_option(p)
    p.add_argument("--consumer-heartbeat-ms", type=int, default=None, metavar="MS",
                   help="heartbeat interval of the KIP-848 groups: real, the consumer-* "
                        "groups', set on the Apache Kafka 4 broker --broker starts "
                        "(group.consumer.heartbeat.interval.ms); sim, the kip848 model's "
                        "(default: the broker's, 5000)")


def broker_command(args: argparse.Namespace) -> list[str]:
    """The options of the rerun line that choose the broker."""
    parts: list[str] = []
    if getattr(args, "broker", None):
        parts += ["--broker", args.broker]
    if getattr(args, "consumer_heartbeat_ms", None) is not None:
        parts += ["--consumer-heartbeat-ms", str(args.consumer_heartbeat_ms)]
    return parts


def is_kafka4(args: argparse.Namespace) -> bool:
    """The driver starts an Apache Kafka 4 broker (KRaft, KIP-848)."""
    from zkconsumer.testing.servers import is_kraft_spec

    return not args.bootstrap and bool(args.broker) and is_kraft_spec(args.broker)


def kraft_props(args: argparse.Namespace) -> tuple[str, ...]:
    """The KIP-848 broker settings for the broker the driver starts (none but on Kafka 4).

    Raises ValueError, naming the value, when ``--consumer-heartbeat-ms`` is given for a broker
    that has no such setting or is not shorter than the session timeout."""
    from zkconsumer.errors import ServerError
    from zkconsumer.testing.kraft import consumer_group_props

    hb = args.consumer_heartbeat_ms
    if not is_kafka4(args):
        if hb is not None:
            raise ValueError(f"--consumer-heartbeat-ms {hb}: a setting of the Apache Kafka 4 "
                             "broker the job starts; give --broker kafka:DIR with a Kafka 4 "
                             "directory")
        return ()
    try:
        return consumer_group_props(args.session_timeout_ms, hb)
    except ServerError as exc:
        raise ValueError(str(exc)) from None


def broker_meta(args: argparse.Namespace) -> dict[str, Any]:
    """What ``meta.json`` records of the broker: its name and, on Kafka 4, the KIP-848
    groups' heartbeat interval and where it came from."""
    from zkconsumer.testing.broker import TANSU_NAME
    from zkconsumer.testing.kraft import DEFAULT_CONSUMER_HEARTBEAT_MS

    if args.bootstrap:
        return {"broker": "external"}
    name = broker_name(args.broker) if args.broker else TANSU_NAME
    if not is_kafka4(args):
        return {"broker": name}
    hb = args.consumer_heartbeat_ms
    return {"broker": name,
            "consumer_heartbeat_interval_ms": DEFAULT_CONSUMER_HEARTBEAT_MS if hb is None else hb,
            "consumer_heartbeat_source": "broker default" if hb is None
            else "--consumer-heartbeat-ms"}
