"""``--broker SPEC``: which broker a lab or Spark command starts for its runs.

One option shared by ``experiment compare``, ``herd``, ``split-brain`` and ``spark herd``, so
every verb names brokers the same way as ``ZKCONSUMER_BOOTSTRAP`` does: ``tansu`` (the embedded
default), ``kafka`` (an Apache Kafka broker started from ``ZKCONSUMER_KAFKA_HOME``) or
``kafka:DIR`` (from the Kafka directory ``DIR``, laid out like ``../shared/kafka-2.4.1``). A
Kafka broker started this way runs on a ZooKeeper of its own; an Apache Kafka 4 directory
(``../shared/kafka-4.0``) starts a KRaft node instead, registered in the run's ZooKeeper by the
lab as Tansu is.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from zkconsumer.errors import ServerError

BROKER_HELP = ("broker to start for the runs: tansu (embedded, default), kafka "
               "(ZKCONSUMER_KAFKA_HOME) or kafka:DIR (a Kafka directory such as "
               "../shared/kafka-2.4.1, or ../shared/kafka-4.0 for KRaft and KIP-848); results "
               "name the broker they measured")


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


def broker_named_once(args: argparse.Namespace) -> bool:
    """False (said on stderr) when ``--broker`` and ``--bootstrap`` are both given."""
    error = broker_conflict(args)
    if error:
        print(f"zkconsumer: error: {error}", file=sys.stderr)
    return error is None


def broker_name(spec: str) -> str:
    """The name results give the broker ``spec`` starts (``tansu-0.6.0``,
    ``apache-kafka-2.4.1``)."""
    from zkconsumer.testing.broker import TANSU_NAME
    from zkconsumer.testing.kafka import kafka_version
    from zkconsumer.testing.servers import kafka_home_from_env

    if spec == "tansu":
        return TANSU_NAME
    home = kafka_home_from_env(spec[len("kafka:"):] if spec.startswith("kafka:") else None)
    return f"apache-kafka-{kafka_version(home)}"
