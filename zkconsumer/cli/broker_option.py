"""``--broker SPEC``: one option, shared by every verb that starts a broker.

``SPEC`` is what ``ZKCONSUMER_BOOTSTRAP`` takes (:mod:`zkconsumer.testing.servers`): ``tansu`` (the
embedded default), ``kafka`` (Apache Kafka from ``ZKCONSUMER_KAFKA_HOME``), ``kafka:DIR`` (from the
Kafka directory ``DIR``, e.g. ``../shared/kafka-0.10.2``) or ``host:port`` of a running broker. The
option sets that variable for this process, so every path that starts servers (the lab's
experiments and their child processes, calibrate, the demo) picks the same broker.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from zkconsumer.errors import ServerError
from zkconsumer.testing.kafka import kafka_home_from_env
from zkconsumer.testing.servers import BROKER_ENV, KAFKA, TANSU, is_kafka_spec

HELP = ("broker to start: tansu (default), kafka (from $ZKCONSUMER_KAFKA_HOME), kafka:DIR (a "
        "Kafka directory such as ../shared/kafka-0.10.2) or HOST:PORT of a running one; "
        f"default ${BROKER_ENV}")


def add_broker_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--broker", default=None, metavar="SPEC", help=HELP)


def check_broker_spec(spec: str) -> str:
    """``spec`` if usable; a clear error naming it otherwise (a Kafka directory must exist)."""
    if spec == TANSU or spec == "":
        return spec
    if is_kafka_spec(spec):
        kafka_home_from_env(spec[len(KAFKA) + 1:] if spec.startswith(KAFKA + ":") else None)
        return spec
    host, _, port = spec.split(",")[0].rpartition(":")
    if not host or not port.isdigit():
        raise ServerError(f"--broker {spec!r}: expected tansu, kafka, kafka:DIR or HOST:PORT")
    return spec


def apply_broker_option(args: Any) -> None:
    """Export ``--broker`` as ``ZKCONSUMER_BOOTSTRAP`` (children inherit it too)."""
    spec = getattr(args, "broker", None)
    if spec:
        os.environ[BROKER_ENV] = check_broker_spec(spec)
