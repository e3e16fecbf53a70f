"""The demo's second half: a short herd sweep and the zombie scenario on the demo's servers.

Small on purpose (group sizes 4 to 16; a zombie among three members) so the whole demo stays
within a few minutes; ``zkconsumer experiment herd|split-brain`` run the full versions. Both
write their usual outputs (``results.json``, ``summary.md``, plots) under ``out_dir``, and
``meta.json`` beside them with the writer every experiment verb uses.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from zkconsumer import __version__
from zkconsumer.cli.console import show
from zkconsumer.lab.herd import run_herd
from zkconsumer.lab.herd_report import fits_table, write_herd_outputs
from zkconsumer.lab.herd_report import summary_table as herd_table
from zkconsumer.lab.herd_spec import HerdSpec
from zkconsumer.lab.splitbrain import SplitBrainSpec, run_split_brain
from zkconsumer.lab.splitbrain.output import write_outputs as write_split_outputs
from zkconsumer.lab.splitbrain.report import summary_table as split_table
from zkconsumer.results import capture, write_provenance
from zkconsumer.testing.zookeeper import release_from_mntr

log = logging.getLogger(__name__)

HERD_SIZES = (4, 8, 16)
HERD_PARTITIONS = 8
ZOMBIE_MEMBERS = 3
ZOMBIE_PARTITIONS = 6


def mntr_text(zk: Any) -> str:
    """The server's ``mntr`` answer, or empty when it refuses (a 4lw whitelist without it):
    the version is then recorded as unknown rather than the demo stopping."""
    try:
        return str(zk.four_letter("mntr"))
    except Exception as exc:
        log.warning("mntr failed, the ZooKeeper version is recorded as unknown: %s", exc)
        return ""


def versions(mntr: str) -> dict[str, str]:
    """The versions a report shows beside the broker's and Python's (in meta.json)."""
    return {"zkconsumer": __version__, "zookeeper": release_from_mntr(mntr) or "unknown"}


def run_herd_demo(bootstrap: str, out_dir: Path, broker: str,
                  versions: Mapping[str, str]) -> bool:
    """One join at each size on a ZooKeeper of its own (so the server's counts are clean)."""
    spec = HerdSpec(protocols=("zk-range",), members=HERD_SIZES, partitions=HERD_PARTITIONS,
                    events=("join",), bootstrap=bootstrap, out_dir=str(out_dir))
    command = (f"zkconsumer experiment herd --members {','.join(map(str, HERD_SIZES))} "
               f"--partitions {HERD_PARTITIONS} --protocols zk-range --events join "
               f"--out {out_dir}")
    prov = capture(command, broker=broker, versions=dict(versions))
    result = run_herd(spec)
    written = write_herd_outputs(result, out_dir, command)
    written.append(write_provenance(out_dir, prov))
    show(herd_table(result.runs))
    print()
    show(fits_table(result.fits))
    print(f"(outputs in {out_dir}: {', '.join(p.name for p in written)})")
    return all(r.status == "ok" for r in result.runs)


def run_zombie_demo(zk_connect: str, bootstrap: str, out_dir: Path, broker: str,
                    versions: Mapping[str, str]) -> bool:
    """One member's ZooKeeper connection paused past its session timeout while it fetches."""
    spec = SplitBrainSpec(scenario="zombie", protocols=("zk-range",), members=ZOMBIE_MEMBERS,
                          partitions=ZOMBIE_PARTITIONS, out_dir=str(out_dir),
                          zk_connect=zk_connect, bootstrap=bootstrap)
    command = (f"zkconsumer experiment split-brain --scenario zombie --protocols zk-range "
               f"--members {ZOMBIE_MEMBERS} --partitions {ZOMBIE_PARTITIONS} --out {out_dir}")
    prov = capture(command, broker=broker, versions=dict(versions))
    results = run_split_brain(spec)
    written = write_split_outputs(results, spec, out_dir, command)
    written.append(write_provenance(out_dir, prov))
    show(split_table(results, "zombie"))
    print(f"(outputs in {out_dir}: {', '.join(p.name for p in written)})")
    return all(r.status == "ok" for r in results)
