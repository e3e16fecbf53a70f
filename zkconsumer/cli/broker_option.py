"""``--broker SPEC``: which broker a lab or Spark command starts for its runs.

One option shared by ``experiment compare``, ``herd``, ``split-brain`` and ``spark herd``, so
every verb names brokers the same way as ``ZKCONSUMER_BOOTSTRAP`` does: ``tansu`` (the embedded
default), ``kafka`` (an Apache Kafka broker started from ``ZKCONSUMER_KAFKA_HOME``) or
``kafka:DIR`` (from the Kafka directory ``DIR``, laid out like ``../shared/kafka-2.4.1``). A
Kafka broker started this way runs on a ZooKeeper of its own.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from zkconsumer.errors import ServerError

BROKER_HELP = ("broker to start for the runs: tansu (embedded, default), kafka "
               "(ZKCONSUMER_KAFKA_HOME) or kafka:DIR (a Kafka directory such as "
               "../shared/kafka-2.4.1); results name the broker they measured")


def broker_spec(text: str) -> str:
    """Validate ``--broker`` before anything starts: a bad directory is named at once."""
    from zkconsumer.testing.servers import TANSU, is_kafka_spec, kafka_home_from_env

    if text == TANSU:
        return text
    if not is_kafka_spec(text):
        raise argparse.ArgumentTypeError(
            f"--broker {text!r}: choose tansu, kafka or kafka:DIR")
    try:
        kafka_home_from_env(text[len("kafka:"):] if text.startswith("kafka:") else None)
    except ServerError as exc:
        raise argparse.ArgumentTypeError(f"--broker {text!r}: {exc}") from None
    return text


def add_broker_option(parser: Any) -> None:
    parser.add_argument("--broker", type=broker_spec, default=None, metavar="SPEC",
                        help=BROKER_HELP)


def broker_conflict(args: argparse.Namespace) -> str | None:
    """The error when ``--broker`` and ``--bootstrap`` are both given (one broker per run)."""
    if getattr(args, "broker", None) and getattr(args, "bootstrap", None):
        return "--broker starts a broker; --bootstrap names a running one: give one of them"
    return None


def check_servers(args: argparse.Namespace) -> str | None:
    """The error in an experiment verb's server options, if any."""
    if bool(getattr(args, "zookeeper", None)) != bool(getattr(args, "bootstrap", None)):
        return "--zookeeper and --bootstrap go together (or neither: embedded servers)"
    return broker_conflict(args)


def results_broker(results: Sequence[Any]) -> str:
    """The broker the runs name (``tansu-0.6.0``, ``apache-kafka-2.4.1``), for meta.json."""
    names = {str(r.details.get("broker", "")) for r in results} - {""}
    return ", ".join(sorted(names))


def apply_broker_option(args: Any) -> None:
    """Export ``--broker`` as ``ZKCONSUMER_BOOTSTRAP`` for this command and its children, so
    every path that starts servers (the demo, calibrate, member processes) picks the same one."""
    import os

    from zkconsumer.testing.servers import BROKER_ENV

    spec = getattr(args, "broker", None)
    if spec:
        os.environ[BROKER_ENV] = spec
