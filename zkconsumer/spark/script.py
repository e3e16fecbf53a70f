"""The ``spark-submit`` entry shared by the Spark jobs: parse, log, run, map bad input to 2."""

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
