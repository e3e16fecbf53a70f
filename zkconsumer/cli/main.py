"""Entry point: builds the parser from the verb modules and maps errors to exit codes."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from zkconsumer import __version__
from zkconsumer.cli import (
    broker_option,
    calibrate,
    consume,
    demo,
    experiment,
    figures,
    groups,
    report,
    servers,
    spark,
    topics,
)
from zkconsumer.errors import ZkConsumerError

VERB_MODULES = (servers, topics, consume, groups, demo, experiment, spark, calibrate, figures,
                report)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="zkconsumer",
        description="Kafka's legacy ZooKeeper-coordinated consumer group, and its laboratory.",
    )
    parser.add_argument("--version", action="version", version=f"zkconsumer {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help="more logging (-v INFO, -vv DEBUG)")
    sub = parser.add_subparsers(dest="verb", metavar="VERB")
    sub.required = True
    for module in VERB_MODULES:
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    level = {0: logging.WARNING, 1: logging.INFO}.get(args.verbose, logging.DEBUG)
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.verbose < 2:
        logging.getLogger("kazoo").setLevel(max(level, logging.WARNING))
    try:
        broker_option.apply_broker_option(args)
        return int(args.func(args) or 0)
    except ZkConsumerError as exc:
        print(f"zkconsumer: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("zkconsumer: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
