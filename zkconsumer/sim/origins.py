"""Where each calibration parameter comes from: measured, fitted, or a constant with its rule.

The simulator's calibration file records, per parameter, one of three origins:

* **measured** by ``zkconsumer calibrate`` on the machine it ran on (:data:`MEASURED`);
* **fitted** by ``zkconsumer spark fit`` from committed real runs (:data:`FITTED`; the fit
  writes the command and the folders);
* **constant**: a value that follows from a rule of the code or protocol, with the rule's
  source (:data:`CONSTANTS`), or an assumption stated as such, with what it affects.

:func:`missing_origins` lists the parameters a file leaves unexplained; the committed
calibration must have none. The three lists together name every parameter once (a unit test,
``tests/unit/test_sim_origins.py``, fails when a new parameter has no origin).
"""

from __future__ import annotations

import logging

from zkconsumer.sim.calibration import Calibration, parameter_names

log = logging.getLogger(__name__)

# Written by ``calibrate`` (zkconsumer.calibration: measure, server, leave, client_cpu,
# rebalance_cpu).
MEASURED = (
    "client_read_cpu_ms", "zk_read_latency_ms", "client_write_cpu_ms", "zk_write_latency_ms",
    "zk_write_service_ms", "watch_delivery_ms", "zk_connect_ms", "session_expiry_factor",
    "broker_request_ms", "client_cpu_scale_by_clients", "zk_read_service_us", "zk_tick_ms",
    "jitter_cv", "leave_wake_ms", "leave_shutdown_ms", "plan_us_per_member",
    "fetcher_close_traffic_ms", "rebalance_cpu_ms", "delivery_round_ms",
)

# Fitted by ``spark fit`` (zkconsumer.spark.herd.fit.FIT_GRIDS): the broker's group timings, which
# no request round trip can measure, read off real rebalances instead.
FITTED = (
    "broker_join_start_ms", "broker_join_window_factor", "broker_session_check_factor",
    "broker_leave_wait_factor", "session_expiry_jitter", "coop_coordinator_poll_ms",
    "coop_sync_wait_ms", "coop_formation_stagger_ms",
)

_UNUSED_BY_TANSU = ("constant 0: read only by the barrier model of cooperative groups "
                    "(zkconsumer/sim/broker.py); with coop_coordinator_poll_ms > 0 cooperative "
                    "groups run on the model of Tansu's coordinator (zkconsumer/sim/tansu.py), "
                    "which does not read it")

CONSTANTS: dict[str, str] = {
    "coop_revokers_per_round": _UNUSED_BY_TANSU,
    "coop_round1_extra_factor": _UNUSED_BY_TANSU,
    "coop_round2_extra_factor": _UNUSED_BY_TANSU,
    "fetcher_stop_max_ms": (
        "constant: fetcher_stop_min_ms plus the fetcher thread's 100 ms consume poll "
        "(zkconsumer/datapath/fetcher_thread.py POLL_S), the longest a stop waits for the "
        "thread to look at its flag"),
    "fetcher_stop_min_ms": (
        "assumed 5 ms (not measured): closing a fetcher's client once its thread stopped; "
        "it adds at most a few ms per owner to a legacy rebalance"),
    "idle_fetcher_stop_ms": (
        "assumed 1 ms (not measured): stopping the fetchers of a member that owns nothing "
        "(no thread to wait for)"),
    "assign_us_per_member": (
        "assumed 10 us per member (not measured): the broker-side leader's assignment "
        "(librdkafka's assignor, C); 0.1 s at N = 10,000"),
    "revoke_ms": (
        "assumed 20 ms (not measured): a broker member's revocation callback and commit "
        "before it rejoins"),
}


# The values the rules above give, written by calibrate (the others keep the built-in value
# their text states).
CONSTANT_VALUES: dict[str, float] = {
    "coop_revokers_per_round": 0.0,
    "coop_round1_extra_factor": 0.0,
    "coop_round2_extra_factor": 0.0,
}


def missing_origins(cal: Calibration) -> list[str]:
    """Parameters whose origin the calibration does not record."""
    known = dict(cal.provenance)
    return [name for name in parameter_names() if name not in known]
