"""Entry point: builds the parser from the verb modules and maps errors to exit codes."""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Sequence
from typing import Any

from zkconsumer import __version__
from zkconsumer.errors import ZkConsumerError
from zkconsumer.extras import MissingExtra

# Verb modules in help order. Each is imported when the parser is built; one whose extra is not
# installed (the lab, the embedded servers, Spark) is listed anyway and says what to install.
VERBS = ("servers", "topics", "consume", "groups", "demo", "experiment", "spark", "sim",
         "calibrate", "results", "figures", "report")
VERB_NAMES = {"servers": ("zk", "broker")}  # verb modules registering other names


def _unavailable(sub: Any, name: str, exc: MissingExtra) -> None:
    for verb in VERB_NAMES.get(name, (name,)):
        if verb in sub.choices:  # registered before the missing module was needed
            continue
        p = sub.add_parser(verb, help=f"(not installed: pip install 'zkconsumer[{exc.extra}]')",
                           add_help=False)
        p.add_argument("rest", nargs=argparse.REMAINDER)
        p.set_defaults(func=lambda _args, exc=exc: _missing(exc))


def apply_broker_option(args: Any) -> None:
    """Export ``--broker`` as ``ZKCONSUMER_BOOTSTRAP`` for this command and its children, so every
    path that starts servers (the demo, calibrate, member processes) starts the same broker."""
    spec = getattr(args, "broker", None)
    if spec:
        os.environ["ZKCONSUMER_BOOTSTRAP"] = spec


def _missing(exc: MissingExtra) -> int:
    print(f"zkconsumer: error: {exc}", file=sys.stderr)
    return 2


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
    for name in VERBS:
        try:
            importlib.import_module(f"zkconsumer.cli.{name}").register(sub)
        except MissingExtra as exc:
            _unavailable(sub, name, exc)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    level = {0: logging.WARNING, 1: logging.INFO}.get(args.verbose, logging.DEBUG)
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.verbose < 2:
        logging.getLogger("kazoo").setLevel(max(level, logging.WARNING))
    try:
        apply_broker_option(args)
        return int(args.func(args) or 0)
    except ZkConsumerError as exc:
        print(f"zkconsumer: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("zkconsumer: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
