"""The ``spark-submit`` entry shared by the Spark jobs: parse, log, run, map bad input to 2; and
the comma-separated integer lists (``--members``, ``--partitions``) both jobs take; the options
both record last in the command a run was made with."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable, Sequence


def script_main(prog: str, description: str,
                add_arguments: Callable[[argparse.ArgumentParser], None],
                run: Callable[[argparse.Namespace], int],
                argv: Sequence[str] | None = None) -> int:
    """Run one job as a script: the same options as its CLI verb, INFO logging (kazoo quieter),
    and a ValueError from the options reported as ``prog: error: ...`` with exit code 2."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    add_arguments(parser)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("kazoo").setLevel(logging.WARNING)
    try:
        return run(args)
    except ValueError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2


def parse_ints(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise ValueError(f"{text!r}: expected comma-separated integers") from None
    if not values or min(values) < 1:
        raise ValueError(f"{text!r}: expected comma-separated integers >= 1")
    return values


def recorded_common_options(args: argparse.Namespace) -> list[str]:
    """The options both jobs take that a recorded command ends with when given: the simulated
    placement, the Spark master, (real mode) the broker and the KIP-848 heartbeat, or (sim mode)
    the KIP-848 model's heartbeat when given."""
    from zkconsumer.spark.brokers import broker_command

    parts: list[str] = []
    if getattr(args, "placement", None):
        parts += ["--placement", args.placement]
    if args.master:
        parts += ["--master", args.master]
    if args.mode == "real":
        parts += broker_command(args)
    elif getattr(args, "consumer_heartbeat_ms", None) is not None:
        parts += ["--consumer-heartbeat-ms", str(args.consumer_heartbeat_ms)]
    return parts
