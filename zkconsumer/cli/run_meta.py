"""The provenance an experiment verb leaves beside its results (``meta.json`` in ``--out``).

Captured when the verb starts (revision, date, load) and written when it ends (load again), so
a folder copied into ``results/`` carries the command that reproduces it and the machine facts
that decide whether its timings compare with another run's.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from zkconsumer import __version__
from zkconsumer.results import Provenance, capture, write_provenance

EMBEDDED_BROKER = "tansu-0.6.0"


def broker_of(args: argparse.Namespace) -> str:
    """The broker a verb measured: the one ``--broker`` started, else the embedded Tansu unless
    ``--bootstrap`` named another."""
    from zkconsumer.lab.broker_option import broker_name

    if getattr(args, "broker", None):
        return broker_name(args.broker)
    bootstrap = getattr(args, "bootstrap", None)
    return f"external:{bootstrap}" if bootstrap else EMBEDDED_BROKER


def versions_of(args: argparse.Namespace) -> dict[str, str]:
    """zkconsumer's release and the ZooKeeper's a verb measured: the server ``--zookeeper``
    named (asked with ``mntr``), else the embedded server's jar; the report shows them beside
    the broker's and Python's."""
    from zkconsumer.testing.zookeeper import embedded_release, server_release

    zk = getattr(args, "zookeeper", None)
    release = server_release(zk) if zk else embedded_release()
    return {"zkconsumer": __version__, "zookeeper": release or "unknown"}


def start(command: str, args: argparse.Namespace, **extra: object) -> Provenance:
    return capture(command, broker=broker_of(args), versions=versions_of(args), **extra)


def finish(out_dir: Path, prov: Provenance) -> Path:
    """Write ``meta.json`` into ``out_dir``."""
    return write_provenance(out_dir, prov)
