"""Which placement each at-scale figure assumes, and the placement model's check.

Where the members' client CPU ran (or was simulated to run) decides how long a legacy
rebalance takes: this machine's real runs put 50 to 100 members in one Python process and the
processes on two cores beside ZooKeeper, the extrapolation gives every member a host of its own
(:mod:`zkconsumer.sim.placement`). :func:`placement_line` says it for a results folder, from
what its ``meta.json`` recorded: the placement itself (sweeps since the placement model), or
else the command's options (``--mode``, ``--tasks``, ``--client-processes``) and the machine's
cores. The ``splitbrain-placement-check`` block renders ``zkconsumer sim placement-check``.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any

from zkconsumer.results.provenance import read_provenance
from zkconsumer.results.registry import Context, figure
from zkconsumer.sim.placement import Placement

log = logging.getLogger(__name__)

CHECK = "splitbrain/placement-check"
PER_MEMBER_TEXT = "one host per member (a process and a core each, the servers elsewhere)"


def _option(command: str, name: str) -> str | None:
    match = re.search(rf"(?:^|\s){re.escape(name)}[ =](\S+)", command)
    return match.group(1) if match else None


def _recorded(extra: dict[str, Any]) -> str | None:
    placement = extra.get("placement")
    if not isinstance(placement, dict):
        return None
    option = str(placement.get("option", ""))
    sizes = placement.get("by_members") or {}
    placed = [Placement.from_json(v) for v in sizes.values()]
    if option == "recorded" and placed:
        p = placed[-1]
        servers = "ZooKeeper and the broker on the same cores" if p.servers_on_cores \
            else "the servers elsewhere"
        return (f"real members spread over {len(p.processes)} Spark-task processes (member i "
                f"in task i % {len(p.processes)}) on {p.cores} cores, {servers} (recorded by "
                "the runs)")
    if placed and all(p.per_member for p in placed):
        return f"{PER_MEMBER_TEXT}, simulated (`--placement {option}`)"
    if placed:
        return f"{placed[-1].label()}, simulated (`--placement {option}`)"
    return f"simulated with `{option}`" if option else None


def placement_of(folder: Path) -> str:
    """The placement of ``folder``'s runs, in words, from its ``meta.json`` ("" without one)."""
    path = folder / "meta.json"
    if not path.is_file():
        return ""
    meta = json.loads(path.read_text())
    recorded = _recorded(meta.get("extra") or {})
    if recorded:
        return recorded
    command = str(meta.get("command", ""))
    cores = (meta.get("machine") or {}).get("cores", "?")
    if "--mode sim" in command:
        processes = _option(command, "--client-processes")
        if processes and processes != "0":
            return (f"simulated, {processes} client processes sharing their members' CPU, a "
                    "core each, the servers elsewhere (`--client-processes`)")
        tasks = _option(command, "--tasks")
        if "split-brain" in command and tasks and tasks != "0":
            return (f"simulated, {tasks} client processes with a core each, the servers "
                    "elsewhere (`--tasks`, no `--placement`: the cores this machine's "
                    "processes share with ZooKeeper are not in it; `--placement here` puts "
                    "them in)")
        return f"simulated, {PER_MEMBER_TEXT}"
    if "--mode real" in command:
        tasks = _option(command, "--tasks") or "2"
        servers = "the servers elsewhere" if _option(command, "--zk") else \
            "the embedded ZooKeeper and broker on the same cores"
        return (f"real members spread over {tasks} Spark-task processes on this machine's "
                f"{cores} cores, {servers}")
    return (f"real members in threads of one Python process on this machine's {cores} cores, "
            "the servers on the same cores")


def placement_line(*folders: Path) -> str:
    """``Placement: ...`` for a figure drawn from ``folders`` (one sentence per placement)."""
    seen: dict[str, list[str]] = {}
    for folder in folders:
        text = placement_of(folder)
        if text:
            seen.setdefault(text, []).append(folder.name)
    if not seen:
        return ""
    if len(seen) == 1:
        return f"Placement: {next(iter(seen))}."
    parts = [f"{text} (`{'`, `'.join(names)}`)" for text, names in seen.items()]
    return "Placement: " + "; ".join(parts) + "."


def _s(value: float | None) -> str:
    return "—" if value is None else f"{value:,.1f} s"


def _x(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}x"


@figure("splitbrain-placement-check", source=f"results/{CHECK}")
def placement_check(ctx: Context) -> str:
    folder = ctx.results / CHECK
    path = folder / "checks.json"
    if not path.is_file():
        return "No placement check committed yet (`zkconsumer sim placement-check`)."
    data = json.loads(path.read_text())
    lines = ["| run | N | real | model as it was (a core per process) | this machine's "
             "placement | this machine's, lone-client CPU | one host per member | slowdown "
             "real / model (vs one host per member) | this machine's / real |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in data["rows"]:
        sim = r["sim_s"]
        lines.append(
            f"| `{r['run']}` | {r['members']} | {_s(r['real_s'])} | {_s(sim['tasks'])} | "
            f"{_s(sim['here'])} | {_s(sim['here-lone-cpu'])} | {_s(sim['per-member'])} | "
            f"{_x(r['slowdown_real'])} / {_x(r['slowdown_here'])} | "
            f"{_x(r['here_over_real'])} |")
    first = data["rows"][0] if data["rows"] else None
    summary = []
    if first is not None:
        miss = abs(first["here_over_real"] - 1.0) * 100
        summary = ["", f"**At N = {first['members']}** (`{first['run']}`): the real zombie "
                   f"settled {_x(first['slowdown_real'])} slower than the model gives one host "
                   f"per member; with this machine's placement the model gives "
                   f"{_x(first['slowdown_here'])}, its time within {miss:.0f} % of the real "
                   f"one ({_s(first['sim_s']['here'])} against {_s(first['real_s'])}), where "
                   f"the model as it was gave {_s(first['sim_s']['tasks'])}."]
        gap = first["real_s"] - first["sim_s"]["per-member"]
        queue = (first["sim_s"]["here-lone-cpu"] or 0.0) - first["sim_s"]["per-member"]
        if gap > 0:
            summary.append(
                f"With a lone client's CPU per request the same placement gives "
                f"{_s(first['sim_s']['here-lone-cpu'])}: the members queueing on their "
                f"process and the processes on the cores explain {queue / gap * 100:.0f} % of "
                "the slowdown by themselves; the rest is the extra CPU each request costs in a "
                "process crowded with busy clients, which `calibrate` measures "
                "(`client_cpu_scale_by_clients`, [scale.md](scale.md)).")
    return "\n".join([
        f"Time to stable of the legacy (`zk-range`) zombie, real and simulated (median of "
        f"{data['draws']} draws), calibration `{data['calibration']}`; every row a development "
        "run of the first scoring, none of the held-out ones.", "", *lines, *summary, "",
        f"Results: `results/{CHECK}/checks.json`; reproduce: "
        f"`{read_provenance(folder).command}`."])
