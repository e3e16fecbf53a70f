"""One member incarnation, in a thread or as its own process (``python -m zkconsumer.lab.member``).

A member that may be crashed runs as a process so that the crash is a real SIGKILL: no shutdown
code runs, its sessions die the way a dead JVM's did, and what it wrote before stays on disk.
SIGTERM is its clean leave.

Every lab member process starts here. By default it runs one protocol's driver for a
:class:`~zkconsumer.lab.drivers.MemberSpec`; ``--chaos`` runs the chaos soak's accounting member
for a :class:`~zkconsumer.lab.chaos.consumer.ChaosMemberSpec` instead, and ``--leave-deadline S``
turns a clean leave that cannot finish within S seconds (its last commit retries while ZooKeeper
is unreachable, as the original's did) into a crash instead of a hang.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
import traceback
from collections.abc import Sequence

from zkconsumer.errors import ConsumerRebalanceFailedException
from zkconsumer.lab.drivers import MemberSpec, get_driver
from zkconsumer.lab.records import Lifecycle, RecordWriter

log = logging.getLogger(__name__)


def run_member(spec: MemberSpec, stop: threading.Event) -> None:
    """Run the protocol's member body, bracketed by lifecycle records; never raises."""
    writer = RecordWriter(spec.records_path, spec.member, spec.incarnation)
    writer.lifecycle(Lifecycle.STARTING, detail=spec.protocol)
    try:
        get_driver(spec.protocol).body(spec, writer, stop)
    except ConsumerRebalanceFailedException as exc:
        # Running out of rebalance.max.retries is the design's own outcome, measured by the
        # experiments (the member exits, as the original's did): one line, not a traceback.
        log.warning("[%s.%d] member gave up its rebalance and exits: %s", spec.member,
                    spec.incarnation, exc)
        writer.lifecycle(Lifecycle.ERROR, detail=f"{exc!r}\n{traceback.format_exc()}")
    except Exception as exc:
        log.exception("[%s.%d] member failed", spec.member, spec.incarnation)
        writer.lifecycle(Lifecycle.ERROR, detail=f"{exc!r}\n{traceback.format_exc()}")
    finally:
        writer.lifecycle(Lifecycle.STOPPED)
        writer.close()


LEAVE_EXIT_CODE = 3  # a leave that overran its deadline


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m zkconsumer.lab.member",
        description="One lab member process; SIGTERM is its clean leave.")
    parser.add_argument("spec", help="the member's spec as JSON (MemberSpec, or ChaosMemberSpec "
                                     "with --chaos)")
    parser.add_argument("--chaos", action="store_true",
                        help="run the chaos soak's accounting member")
    parser.add_argument("--leave-deadline", type=float, default=None, metavar="S",
                        help="exit with code 3 when a clean leave has not finished after S s")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(list(sys.argv[1:] if argv is None else argv))
    logging.basicConfig(level=logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("kazoo").setLevel(logging.ERROR)
    stop = threading.Event()

    def leave(*_: object) -> None:
        stop.set()
        if args.leave_deadline is not None:
            timer = threading.Timer(args.leave_deadline, lambda: os._exit(LEAVE_EXIT_CODE))
            timer.daemon = True
            timer.start()

    signal.signal(signal.SIGTERM, leave)
    signal.signal(signal.SIGINT, leave)
    if args.chaos:
        from zkconsumer.lab.chaos.consumer import ChaosMemberSpec, run

        run(ChaosMemberSpec.from_json(args.spec), stop)
    else:
        run_member(MemberSpec.from_json(args.spec), stop)
    return 0


if __name__ == "__main__":
    sys.exit(main())
