"""``experiment formation``: a group started together under retry budgets, original or zkconsumer.

    zkconsumer experiment formation --kinds original,zkconsumer --budgets 1,2,4 \\
        --members 2,5,10 --seeds 5 --broker kafka:DIR --out DIR

Starts one ZooKeeper and the 0.10.2 broker of ``--broker kafka:DIR``; writes ``runs.json``
(one row per run, verdicts as the split-brain job's, see ``lab/formation/verdict.py``) and
``meta.json``, and prints formed and stuck per kind, budget and size.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import Any

from zkconsumer.cli import run_meta
from zkconsumer.lab.broker_option import add_broker_option


def int_list(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of "
                                         "integers") from None


def register(verbs: Any) -> None:
    p = verbs.add_parser(
        "formation", help="does a group started together form under a retry budget, and is "
                          "it stuck after a storm (original or zkconsumer members)",
        description="Start N member processes of one kind together under "
                    "rebalance.max.retries = b on a Kafka 0.10.2 broker; judge whether the "
                    "group formed, then run a storm of joins and clean leaves and judge "
                    "whether a member gave up and the group was left stuck.")
    p.add_argument("--kinds", default="original,zkconsumer",
                   help="comma-separated: original (JVM members of the 0.10.2 build's "
                        "driver), zkconsumer (member processes of this connector)")
    p.add_argument("--budgets", type=int_list, default=(1, 2, 4),
                   help="rebalance.max.retries values, comma-separated")
    p.add_argument("--members", type=int_list, default=(2, 5, 10),
                   help="group sizes N, comma-separated")
    p.add_argument("--seeds", type=int, default=5, help="repetitions of each cell")
    p.add_argument("--first-seed", type=int, default=1,
                   help="the first repetition's number (a sweep continued later starts after "
                        "the last one)")
    p.add_argument("--partitions", type=int, default=64, help="partitions of the topic")
    p.add_argument("--lifetime-s", type=int, default=40,
                   help="the storm's leavers leave this long after they were ready (the group "
                        "must have formed by then)")
    add_broker_option(p)
    p.add_argument("--out", required=True, type=Path, help="output directory")
    p.set_defaults(func=run_formation_verb)


def reproduce_command(args: argparse.Namespace) -> str:
    parts = ["zkconsumer", "experiment", "formation", "--kinds", args.kinds,
             "--budgets", ",".join(map(str, args.budgets)),
             "--members", ",".join(map(str, args.members)), "--seeds", str(args.seeds),
             "--first-seed", str(args.first_seed), "--partitions", str(args.partitions),
             "--lifetime-s", str(args.lifetime_s),
             "--broker", str(args.broker), "--out", str(args.out)]
    return " ".join(shlex.quote(x) for x in parts)


def run_formation_verb(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from zkconsumer.cli.experiment_chaos import chaos_kafka_home
    from zkconsumer.lab.formation.run import FormationParams
    from zkconsumer.lab.formation.sweep import SweepSpec, run_sweep
    from zkconsumer.lab.formation.verdict import cells

    kinds = tuple(k.strip() for k in args.kinds.split(",") if k.strip())
    try:
        home = chaos_kafka_home(args.broker, 1 if "original" in kinds else 0)
        spec = SweepSpec(kinds=kinds, budgets=args.budgets, members=args.members,
                         seeds=args.seeds, first_seed=args.first_seed, kafka_home=home,
                         params=replace(FormationParams(), partitions=args.partitions,
                                        lifetime_s=args.lifetime_s))
        spec.validate()
    except ValueError as exc:
        print(f"zkconsumer: error: {exc}", file=sys.stderr)
        return 2
    prov = run_meta.start(reproduce_command(args), args)
    rows = run_sweep(spec, args.out, say=lambda msg: print(f"formation: {msg}",
                                                           file=sys.stderr))
    print("kind        budget  N    formed (95 % Wilson)   stuck, of formed")
    for kind, c in cells(rows):
        print(f"{kind:<11} {c.budget:>6}  {c.members:<4} {c.formed.cell():<22} "
              f"{c.stuck.cell() if c.stuck else '—'}")
    print(f"wrote {run_meta.finish(args.out, prov)}")
    return 0
