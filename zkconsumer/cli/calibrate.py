"""``calibrate``: measure the simulator's latency parameters on the real servers.

    zkconsumer calibrate --out calibration.json [--zk HOST:PORT --bootstrap HOST:PORT]
    zkconsumer spark herd --mode sim --calibration calibration.json ...

Starts embedded ZooKeeper and broker unless ``--zk``/``--bootstrap`` (or ``ZKCONSUMER_ZK``/
``ZKCONSUMER_BOOTSTRAP``) name existing ones. What is measured: :mod:`zkconsumer.calibration`.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from zkconsumer.admin.options import add_bootstrap_option, add_zk_option
from zkconsumer.lab.broker_option import add_broker_option
from zkconsumer.testing.servers import BROKER_ENV, TANSU, is_kafka_spec

if TYPE_CHECKING:
    from zkconsumer.sim import Calibration


def register(sub: Any) -> None:
    p = sub.add_parser("calibrate", help="measure the simulator's latencies on real servers",
                       description="Time ZooKeeper reads, creates, watch delivery, session "
                                   "set-up and expiry, a member's own CPU per request and per "
                                   "assignment (thread CPU clocks), the client CPU per request "
                                   "with many clients in one process, a broker round trip, "
                                   "clean leaves of a lab member and the spread of the "
                                   "repeated durations; "
                                   "write the calibration file the simulator reads.")
    p.add_argument("--out", type=Path, required=True, help="calibration file to write (JSON)")
    p.add_argument("--samples", type=int, default=300, help="requests timed per operation")
    p.add_argument("--no-expiry", action="store_true",
                   help="skip the session-expiry measurement (it SIGKILLs two child sessions "
                        "and takes ~10 s)")
    p.add_argument("--no-crowd", action="store_true",
                   help="skip the crowded-process measurement (K = 1, 4, 16, 32 kazoo clients "
                        "busy in this process, ~15 s)")
    p.add_argument("--no-read-service", action="store_true",
                   help="skip the server read service measurement (32 readers in 4 processes "
                        "against the server, 4 bursts of 4 s, read back with mntr)")
    p.add_argument("--no-leave", action="store_true",
                   help="skip the clean-leave measurement (8 leaves of a lab zk-range member, "
                        "~60 s; needs a broker)")
    # One measurement onto a base calibration: (flag, what it measures and replaces,
    # its count option, the count's default, what the count counts).
    for flag, what, count, default, counted in (
            ("--join-start-onto", "a broker-side joiner's start (its first JoinGroup after the "
             "consumer is created, joins into groups of 4 on an embedded broker, ~2 min): "
             "broker_join_start_ms", "--join-start-trials", 8,
             "joins timed by --join-start-onto"),
            ("--leave-onto", "the clean leaves (a lab member's, on an idle topic and under the "
             "lab's traffic, ~2 min): leave_wake_ms, leave_shutdown_ms and "
             "fetcher_close_traffic_ms", "--leave-repeats", 8,
             "leaves per condition (idle, traffic), by --leave-onto and by a whole run"),
            ("--rebalance-cpu-onto", "a legacy member's CPU per rebalance beyond its ZooKeeper "
             "requests (a lab member joining 24 others in this process under the lab's "
             "traffic, ~1 min): rebalance_cpu_ms", "--rebalance-cpu-repeats", 3,
             "joins measured by --rebalance-cpu-onto"),
            ("--fetcher-stop-onto", "a rebalance's fetcher stop (a fetcher of 2 partitions of an "
             "idle topic stopped at a random moment, then six of one process stopped together "
             "under the lab's traffic, ~2 min): fetcher_stop_min_ms and fetcher_stop_max_ms",
             "--fetcher-stop-repeats", 24,
             "stops timed by --fetcher-stop-onto"),
            ("--delivery-onto", "when a fetcher receives the lab's paced messages (the lab's "
             "producer and traffic, fetchers of 2 partitions, ~30 s): delivery_round_ms",
             "--delivery-fetchers", 3, "fetchers read by --delivery-onto")):
        p.add_argument(flag, type=Path, default=None, metavar="CALIBRATION",
                       help=f"measure only {what}, and write CALIBRATION with those replaced")
        p.add_argument(count, type=int, default=default, metavar="K",
                       help=f"{counted} (default {default})")
    add_zk_option(p, dest="zookeeper", required=False, default=os.environ.get("ZKCONSUMER_ZK"),
                  note="an existing ZooKeeper (default: ZKCONSUMER_ZK, else an embedded one)")
    add_bootstrap_option(p, note="an existing broker (default: an embedded one)")
    add_broker_option(p)
    p.set_defaults(func=run_calibrate)


def run_calibrate(args: argparse.Namespace) -> int:
    from zkconsumer.calibration.client_cpu import plan_cpu, request_cpu, thread_cpu_parameters
    from zkconsumer.calibration.leave import jitter_cv, leave_parameters, measured_leaves
    from zkconsumer.calibration.measure import (
        calibration_from,
        measure_broker,
        measure_crowd,
        measure_zookeeper,
    )
    from zkconsumer.datapath.fetcher_thread import POLL_S
    from zkconsumer.results import capture, write_provenance

    if args.samples < 10:
        print("zkconsumer: error: --samples must be >= 10", file=sys.stderr)
        return 2
    for option, least in (("join_start_trials", 1), ("leave_repeats", 2),
                          ("rebalance_cpu_repeats", 1), ("fetcher_stop_repeats", 4),
                          ("delivery_fetchers", 1)):
        if getattr(args, option) < least:
            print(f"zkconsumer: error: --{option.replace('_', '-')} must be >= {least}, got "
                  f"{getattr(args, option)}", file=sys.stderr)
            return 2
    if args.join_start_onto is not None:
        return _join_start_onto(args)
    if args.leave_onto is not None:
        return _leave_onto(args)
    if args.rebalance_cpu_onto is not None:
        return _rebalance_cpu_onto(args)
    if args.fetcher_stop_onto is not None:
        return _fetcher_stop_onto(args)
    if args.delivery_onto is not None:
        return _delivery_onto(args)
    prov = capture(_command(f"zkconsumer calibrate --out {args.out}"))
    with contextlib.ExitStack() as stack:
        zk, bootstrap = args.zookeeper, args.bootstrap
        env_broker = os.environ.get(BROKER_ENV, "")
        if zk and not bootstrap and env_broker and env_broker != TANSU \
                and not is_kafka_spec(env_broker):
            bootstrap = env_broker  # a running broker named host:port
        from zkconsumer.testing.servers import (
            ExternalZooKeeper,
            broker_from_env,
            zookeeper_from_env,
        )

        zks = stack.enter_context(zookeeper_from_env(None)) if not zk \
            else ExternalZooKeeper(zk)
        zk = zks.connect_string
        broker_name = f"external broker at {bootstrap}" if bootstrap else ""
        if not bootstrap and not args.zookeeper:
            started = stack.enter_context(broker_from_env(zk))
            bootstrap, broker_name = started.bootstrap, started.name
        series: dict[str, list[float]] = {}
        measured = measure_zookeeper(zk, samples=args.samples, expiry=not args.no_expiry,
                                     series=series)
        thread_requests = request_cpu(zk, samples=args.samples)
        plans = plan_cpu()
        crowd = [] if args.no_crowd else measure_crowd(zk)
        reads = [] if args.no_read_service else _read_service(zks)
        tick = _tick_ms(zks)
        series["broker_request"] = []
        broker_ms = measure_broker(bootstrap, walls=series["broker_request"]) \
            if bootstrap else None
        leaves = [] if args.no_leave or not bootstrap else measured_leaves(
            zk, bootstrap, args.leave_repeats)
    series["leave_shutdown"] = [s.shutdown_ms for s in leaves if s.messages_per_s <= 0]
    jitter, cv_by_series = jitter_cv(series)
    where = "embedded servers" if not args.zookeeper else f"ZooKeeper {zk}"
    services = [r.service_us for r in reads[1:] if r.service_us is not None]  # [0]: warm-up
    cal = calibration_from(measured, broker_ms, where, crowd,
                           read_service_us=statistics.median(services) if services else None,
                           tick_ms=tick, fetcher_poll_ms=POLL_S * 1000,
                           leave=leave_parameters(leaves) if leaves else None, jitter=jitter,
                           thread_cpu=thread_cpu_parameters(thread_requests, plans))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    cal.save(args.out)
    raw = {"measured_ms": measured, "broker_request_ms": broker_ms, "tick_ms": tick,
           "crowd": [c.to_dict() for c in crowd],
           "thread_cpu_requests": [{**dataclasses.asdict(r), "cpu_ms": r.cpu_ms}
                                   for r in thread_requests],
           "thread_cpu_plans": [{**dataclasses.asdict(p), "us_per_member": p.us_per_member}
                                for p in plans],
           "thread_cpu_note": "client_read_cpu_ms and client_write_cpu_ms are the CPU clocks of "
                              "the calling thread and its kazoo connection thread per request; "
                              "plan_us_per_member the legacy range plan's thread CPU per member "
                              "of the view at the largest N (zkconsumer.calibration.client_cpu)",
           "read_service": [r.to_dict() for r in reads],
           "read_service_note": "the first burst warms the server's JIT up and is not used; "
                                "zk_read_service_us is the median of the others",
           "leaves": [s.to_dict() for s in leaves],
           "jitter_cv_by_series": cv_by_series,
           "jitter_cv_note": "jitter_cv is the median of the series' robust coefficients of "
                             "variation ((Q3 - Q1) / 1.349 / median) of the durations in "
                             "durations_ms (zkconsumer.calibration.leave.jitter_cv)",
           "durations_ms": {k: [round(x, 4) for x in v] for k, v in sorted(series.items())}}
    raw_path = args.out.with_name(args.out.stem + ".measurements.json")
    raw_path.write_text(json.dumps(raw, indent=1) + "\n")
    write_provenance(args.out.parent, dataclasses.replace(prov, broker=broker_name))
    print(json.dumps(raw, indent=2))
    print(f"wrote {args.out}, {raw_path} ({cal.source})")
    return 0


def _command(called_otherwise: str) -> str:
    """The command line a calibration records: as typed when run as ``zkconsumer calibrate``,
    else (called from Python) ``called_otherwise``."""
    if sys.argv[1:2] == ["calibrate"]:
        return " ".join(["zkconsumer", *sys.argv[1:]])
    return called_otherwise


def _read_service(zks: Any) -> list[Any]:
    """A warm-up burst, then three: the server's CPU per read under 32 pipelined readers."""
    from zkconsumer.calibration.read_service import measure_read_service

    pid = getattr(zks, "pid", None)
    bursts = [measure_read_service(zks.connect_string, lambda: zks.four_letter("mntr"), pid)
              for _ in range(4)]
    return bursts


def _tick_ms(zks: Any) -> float | None:
    """The server's ``tickTime`` from the ``conf`` four-letter word (None if it will not say)."""
    from zkconsumer.lab.mntr import parse_mntr

    try:
        conf = zks.four_letter("conf")
    except OSError:
        return None
    values = parse_mntr(conf.replace("=", "\t"))
    return values.get("tickTime")


@dataclasses.dataclass(frozen=True)
class _Remeasured:
    """What an ``--*-onto`` measurement replaces on its base calibration."""

    params: dict[str, float]  # parameter -> the new value
    detail: str  # what was measured, for each parameter's origin
    raw: dict[str, Any]  # the samples, written beside the calibration


def _remeasure_onto(args: argparse.Namespace, flag: str, base_path: Path, options: str,
                    raw_suffix: str,
                    measure: Callable[[str, str, Calibration], _Remeasured]) -> int:
    """``flag``: the base calibration at ``base_path`` with what ``measure(zk, bootstrap,
    base)`` measured on embedded servers replacing its parameters; the samples beside it."""
    from zkconsumer.results import capture, write_provenance
    from zkconsumer.sim import Calibration
    from zkconsumer.testing.servers import broker_from_env, zookeeper_from_env

    try:
        base = Calibration.load(base_path)
    except (OSError, ValueError) as exc:
        print(f"zkconsumer: error: {flag}: {exc}", file=sys.stderr)
        return 2
    prov = capture(_command(f"zkconsumer calibrate {flag} {base_path}{options} --out {args.out}"))
    with contextlib.ExitStack() as stack:
        zks = stack.enter_context(zookeeper_from_env(None))
        broker = stack.enter_context(broker_from_env(zks.connect_string))
        got = measure(zks.connect_string, broker.bootstrap, base)
        broker_name = broker.name
    when = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    origin = (f"measured by calibrate {flag} {when} UTC against an embedded {broker_name} "
              f"({os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}): {got.detail}")
    cal = dataclasses.replace(
        base, **got.params,
        source=f"{base.source}; {', '.join(sorted(got.params))} re-measured {when} UTC"
    ).with_origins({name: origin for name in got.params})
    args.out.parent.mkdir(parents=True, exist_ok=True)
    cal.save(args.out)
    raw_path = args.out.with_name(args.out.stem + raw_suffix)
    raw_path.write_text(json.dumps({"base": str(base_path), **got.params, **got.raw},
                                   indent=1) + "\n")
    write_provenance(args.out.parent, dataclasses.replace(prov, broker=broker_name))
    print(", ".join(f"{k} {v:g}" for k, v in sorted(got.params.items()))
          + f"; wrote {args.out}, {raw_path}")
    return 0


def _join_start_onto(args: argparse.Namespace) -> int:
    """``--join-start-onto``: the base calibration with the joiner's start measured."""
    from zkconsumer.admin import create_topic
    from zkconsumer.calibration.join_start import measure_join_start

    def measure(zk: str, bootstrap: str, _base: Calibration) -> _Remeasured:
        median, samples = measure_join_start(
            bootstrap, lambda topic, n: create_topic(zk, topic, n, bootstrap=bootstrap),
            trials=args.join_start_trials)
        return _Remeasured({"broker_join_start_ms": round(median, 2)},
                           f"median of {len(samples)} joiners, consumer created to JoinGroup "
                           "sent (zkconsumer.calibration.join_start)",
                           {"joins": [s.to_dict() for s in samples]})
    return _remeasure_onto(args, "--join-start-onto", args.join_start_onto, "",
                           ".join-start.json", measure)


def _leave_onto(args: argparse.Namespace) -> int:
    """``--leave-onto``: the base calibration with the clean leaves measured again."""
    from zkconsumer.calibration.leave import leave_parameters, measured_leaves

    def measure(zk: str, bootstrap: str, _base: Calibration) -> _Remeasured:
        leaves = measured_leaves(zk, bootstrap, args.leave_repeats)
        return _Remeasured(leave_parameters(leaves),
                           f"{args.leave_repeats} clean leaves of a lab member on an idle topic "
                           f"and {args.leave_repeats} under the lab's traffic "
                           "(zkconsumer.calibration.leave)",
                           {"leaves": [s.to_dict() for s in leaves]})
    return _remeasure_onto(args, "--leave-onto", args.leave_onto,
                           f" --leave-repeats {args.leave_repeats}", ".leaves.json", measure)


def _rebalance_cpu_onto(args: argparse.Namespace) -> int:
    """``--rebalance-cpu-onto``: the base calibration with a legacy member's CPU per rebalance
    beyond its requests measured (in the base's per-request CPU and crowd factor)."""
    from zkconsumer.calibration.rebalance_cpu import (
        CROWD_MEMBERS,
        costed,
        measure_rebalance_cpu,
        rebalance_cpu_parameters,
    )
    def measure(zk: str, bootstrap: str, base: Calibration) -> _Remeasured:
        samples = measure_rebalance_cpu(zk, bootstrap, repeats=args.rebalance_cpu_repeats)
        params = rebalance_cpu_parameters(samples, base.client_read_cpu_ms,
                                          base.client_write_cpu_ms, base.client_cpu_scale)
        return _Remeasured(params,
                           f"median of {len(samples)} joins into {CROWD_MEMBERS} lab zk-range "
                           "members in one process under the lab's traffic: process CPU after "
                           "the join less a quiet window's, less the requests at the base's "
                           "per-request CPU and crowd factor, per member that rebalanced "
                           "(zkconsumer.calibration.rebalance_cpu)",
                           {"rebalances": [costed(s, base.client_read_cpu_ms,
                                                  base.client_write_cpu_ms,
                                                  base.client_cpu_scale(s.members))
                                           for s in samples]})
    return _remeasure_onto(args, "--rebalance-cpu-onto", args.rebalance_cpu_onto,
                           f" --rebalance-cpu-repeats {args.rebalance_cpu_repeats}",
                           ".rebalance-cpu.json", measure)


def _fetcher_stop_onto(args: argparse.Namespace) -> int:
    """``--fetcher-stop-onto``: the base calibration with a rebalance's fetcher stop measured
    (the ends of the uniform wait it draws)."""
    from zkconsumer.calibration.fetcher_stop import (
        CROWD_FETCHERS,
        IN_STEP_MS,
        STOP_PARTITIONS,
        in_step_fraction,
        in_step_share,
        measure_crowd_stops,
        measure_fetcher_stops,
        uniform_ends,
    )
    from zkconsumer.calibration.leave import TRAFFIC_MESSAGES_PER_S

    def measure(zk: str, bootstrap: str, _base: Calibration) -> _Remeasured:
        stops = measure_fetcher_stops(zk, bootstrap, repeats=args.fetcher_stop_repeats)
        ends = uniform_ends(stops)
        crowds = measure_crowd_stops(zk, bootstrap,
                                     repeats=max(1, args.fetcher_stop_repeats // 3))
        in_step = round(in_step_share(crowds), 3)
        share = in_step_fraction(in_step, ends.high_ms - ends.low_ms,
                                 STOP_PARTITIONS * TRAFFIC_MESSAGES_PER_S)
        return _Remeasured({"fetcher_stop_min_ms": ends.low_ms,
                            "fetcher_stop_max_ms": ends.high_ms},
                           f"the ends of a uniform from {len(stops)} stops of a fetcher of "
                           f"{STOP_PARTITIONS} partitions of an idle topic asked at a random "
                           "moment, each end widened by the mean gap between the sorted stops "
                           "(zkconsumer.calibration.fetcher_stop)",
                           {"stops_ms": stops,
                            "crowd_stops_ms": crowds,
                            "crowd_note": f"{CROWD_FETCHERS} fetchers of one process under the "
                                          "lab's traffic stopped at the same moment, per repeat "
                                          "(zkconsumer.calibration.fetcher_stop."
                                          "measure_crowd_stops); in_step_share: the share "
                                          f"within {IN_STEP_MS:g} ms of their repeat's median",
                            "in_step_share": in_step,
                            "in_step_fraction": share,
                            "in_step_fraction_note": "the share of fetchers on one common poll "
                                                     "grid whose crowds would end as close "
                                                     "together (0: independent polls)"})
    return _remeasure_onto(args, "--fetcher-stop-onto", args.fetcher_stop_onto,
                           f" --fetcher-stop-repeats {args.fetcher_stop_repeats}",
                           ".fetcher-stop.json", measure)


def _delivery_onto(args: argparse.Namespace) -> int:
    """``--delivery-onto``: the base calibration with the fetch round measured (how long a sent
    message waits for its fetcher's next round)."""
    from zkconsumer.calibration.delivery import (
        LAB_PARTITIONS,
        LAB_RATE,
        delivery_round_ms,
        measure_delivery_lags,
    )

    def measure(zk: str, bootstrap: str, _base: Calibration) -> _Remeasured:
        lags = measure_delivery_lags(zk, bootstrap, fetchers=args.delivery_fetchers)
        return _Remeasured({"delivery_round_ms": delivery_round_ms(lags)},
                           f"the span of a uniform fitted to {len(lags)} messages' lags (receipt "
                           "less scheduled send, less the smallest) of the lab's producer at "
                           f"{LAB_RATE:g} messages a second over {LAB_PARTITIONS} partitions, "
                           f"read by {args.delivery_fetchers} fetchers of 2 partitions "
                           "(zkconsumer.calibration.delivery)",
                           {"lags_ms": lags})
    return _remeasure_onto(args, "--delivery-onto", args.delivery_onto,
                           f" --delivery-fetchers {args.delivery_fetchers}", ".delivery.json",
                           measure)
