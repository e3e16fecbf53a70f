"""``calibrate``: measure the simulator's latency parameters on the real servers.

    zkconsumer calibrate --out calibration.json [--zk HOST:PORT --bootstrap HOST:PORT]
    zkconsumer spark herd --mode sim --calibration calibration.json ...

Starts embedded ZooKeeper and broker unless ``--zk``/``--bootstrap`` (or ``ZKCONSUMER_ZK``/
``ZKCONSUMER_BOOTSTRAP``) name existing ones. What is measured: :mod:`zkconsumer.sim.measure`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Any

from zkconsumer.lab.broker_option import add_broker_option
from zkconsumer.testing.servers import BROKER_ENV, TANSU, is_kafka_spec


def register(sub: Any) -> None:
    p = sub.add_parser("calibrate", help="measure the simulator's latencies on real servers",
                       description="Time ZooKeeper reads, creates, watch delivery, session "
                                   "set-up and expiry, the client CPU per request with many "
                                   "clients in one process, and a broker round trip; write "
                                   "the calibration file the simulator reads.")
    p.add_argument("--out", type=Path, required=True, help="calibration file to write (JSON)")
    p.add_argument("--samples", type=int, default=300, help="requests timed per operation")
    p.add_argument("--no-expiry", action="store_true",
                   help="skip the session-expiry measurement (it SIGKILLs two child sessions "
                        "and takes ~10 s)")
    p.add_argument("--no-crowd", action="store_true",
                   help="skip the crowded-process measurement (K = 1, 4, 16, 32 kazoo clients "
                        "busy in this process, ~15 s)")
    p.add_argument("--zk", "--zookeeper", dest="zookeeper",
                   default=os.environ.get("ZKCONSUMER_ZK"))
    p.add_argument("--bootstrap", default=None, help="existing broker bootstrap servers")
    add_broker_option(p)
    p.set_defaults(func=run_calibrate)


def run_calibrate(args: argparse.Namespace) -> int:
    from zkconsumer.sim.measure import (
        calibration_from,
        measure_broker,
        measure_crowd,
        measure_zookeeper,
    )

    if args.samples < 10:
        print("zkconsumer: error: --samples must be >= 10", file=sys.stderr)
        return 2
    with contextlib.ExitStack() as stack:
        zk, bootstrap = args.zookeeper, args.bootstrap
        env_broker = os.environ.get(BROKER_ENV, "")
        if zk and not bootstrap and env_broker and env_broker != TANSU \
                and not is_kafka_spec(env_broker):
            bootstrap = env_broker  # a running broker named host:port
        if not zk:
            from zkconsumer.testing.servers import broker_from_env, zookeeper_from_env

            zks = stack.enter_context(zookeeper_from_env(None))
            zk = zks.connect_string
            if not bootstrap:
                bootstrap = stack.enter_context(broker_from_env(zk)).bootstrap
        measured = measure_zookeeper(zk, samples=args.samples, expiry=not args.no_expiry)
        crowd = [] if args.no_crowd else measure_crowd(zk)
        broker_ms = measure_broker(bootstrap) if bootstrap else None
    where = "embedded servers" if not args.zookeeper else f"ZooKeeper {zk}"
    cal = calibration_from(measured, broker_ms, where, crowd)
    cal.save(args.out)
    print(json.dumps({"measured_ms": measured, "broker_request_ms": broker_ms,
                      "crowd": [c.to_dict() for c in crowd]}, indent=2))
    print(f"wrote {args.out} ({cal.source})")
    return 0
