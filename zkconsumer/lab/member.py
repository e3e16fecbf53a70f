"""One member incarnation, in a thread or as its own process (``python -m zkconsumer.lab.member``).

A member that may be crashed runs as a process so that the crash is a real SIGKILL: no shutdown
code runs, its sessions die the way a dead JVM's did, and what it wrote before stays on disk.
SIGTERM is its clean leave.
"""

from __future__ import annotations

import logging
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


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("usage: python -m zkconsumer.lab.member '<MemberSpec JSON>'", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("kazoo").setLevel(logging.ERROR)
    spec = MemberSpec.from_json(args[0])
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    run_member(spec, stop)
    return 0


if __name__ == "__main__":
    sys.exit(main())
