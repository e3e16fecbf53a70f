"""The demo's second half: a short herd sweep and the zombie scenario on the demo's servers.

Small on purpose (group sizes 4 to 16; a zombie among three members) so the whole demo stays
within a few minutes; ``zkconsumer experiment herd|split-brain`` run the full versions. Both
write their usual outputs (``results.json``, ``summary.md``, plots) under ``out_dir``.
"""

from __future__ import annotations

from pathlib import Path

from zkconsumer.cli.console import show
from zkconsumer.lab.herd import run_herd
from zkconsumer.lab.herd_report import fits_table, write_herd_outputs
from zkconsumer.lab.herd_report import summary_table as herd_table
from zkconsumer.lab.herd_spec import HerdSpec
from zkconsumer.lab.splitbrain import SplitBrainSpec, run_split_brain
from zkconsumer.lab.splitbrain.output import write_outputs as write_split_outputs
from zkconsumer.lab.splitbrain.report import summary_table as split_table

HERD_SIZES = (4, 8, 16)
HERD_PARTITIONS = 8
ZOMBIE_MEMBERS = 3
ZOMBIE_PARTITIONS = 6


def run_herd_demo(bootstrap: str, out_dir: Path) -> bool:
    """One join at each size on a ZooKeeper of its own (so the server's counts are clean)."""
    spec = HerdSpec(protocols=("zk-range",), members=HERD_SIZES, partitions=HERD_PARTITIONS,
                    events=("join",), bootstrap=bootstrap, out_dir=str(out_dir))
    result = run_herd(spec)
    command = (f"zkconsumer experiment herd --members {','.join(map(str, HERD_SIZES))} "
               f"--partitions {HERD_PARTITIONS} --protocols zk-range --events join "
               f"--out {out_dir}")
    written = write_herd_outputs(result, out_dir, command)
    show(herd_table(result.runs))
    print()
    show(fits_table(result.fits))
    print(f"(outputs in {out_dir}: {', '.join(p.name for p in written)})")
    return all(r.status == "ok" for r in result.runs)


def run_zombie_demo(zk_connect: str, bootstrap: str, out_dir: Path) -> bool:
    """One member's ZooKeeper connection paused past its session timeout while it fetches."""
    spec = SplitBrainSpec(scenario="zombie", protocols=("zk-range",), members=ZOMBIE_MEMBERS,
                          partitions=ZOMBIE_PARTITIONS, out_dir=str(out_dir),
                          zk_connect=zk_connect, bootstrap=bootstrap)
    results = run_split_brain(spec)
    command = (f"zkconsumer experiment split-brain --scenario zombie --protocols zk-range "
               f"--members {ZOMBIE_MEMBERS} --partitions {ZOMBIE_PARTITIONS} --out {out_dir}")
    written = write_split_outputs(results, spec, out_dir, command)
    show(split_table(results, "zombie"))
    print(f"(outputs in {out_dir}: {', '.join(p.name for p in written)})")
    return all(r.status == "ok" for r in results)
