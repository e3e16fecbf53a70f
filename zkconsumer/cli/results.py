"""``results``: turn lab outputs and history into the data committed under ``results/``.

    zkconsumer results import-comparison OUT_DIR results/comparison/NAME
    zkconsumer results ancestry --fix COMMIT --protocols P[,P...] --out DIR RUN_DIR [...]

``import-comparison`` keeps the per-run metrics of an ``experiment compare`` (or
``split-brain``) output folder (:mod:`zkconsumer.results.comparison_data`); ``ancestry``
records which result folders were measured with a fix (:mod:`zkconsumer.results.ancestry`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def register(sub: Any) -> None:
    results = sub.add_parser("results", help="import lab outputs and classify runs for results/")
    verbs = results.add_subparsers(dest="results_verb", metavar="SUBVERB")
    verbs.required = True

    imp = verbs.add_parser(
        "import-comparison", help="keep a compare output's per-run metrics under results/",
        description="Write DEST/runs.json (each run's metrics, status, broker and, for a join, "
                    "the partitions stopped and moved) and DEST/meta.json from an "
                    "`experiment compare` or `split-brain` output folder.")
    imp.add_argument("out_dir", type=Path, help="the lab's --out folder (with meta.json)")
    imp.add_argument("dest", type=Path, help="the folder under results/ to write")
    imp.set_defaults(func=run_import_comparison)

    anc = verbs.add_parser(
        "ancestry", help="which result folders were measured with a given fix",
        description="Classify result folders by whether the revision in their meta.json "
                    "contains a fix commit; writes runs.csv and meta.json to --out, so the "
                    "figures need no git history.")
    anc.add_argument("--fix", required=True, help="the fix's commit (any form git accepts)")
    anc.add_argument("--protocols", required=True,
                     help="comma-separated protocols whose rows the fix can change")
    anc.add_argument("--out", required=True, type=Path,
                     help="folder to write runs.csv and meta.json to")
    anc.add_argument("runs", nargs="+", type=Path, help="result folders with a meta.json")
    anc.set_defaults(func=run_ancestry)


def run_import_comparison(args: argparse.Namespace) -> int:
    from zkconsumer.results.comparison_data import import_compare

    try:
        print(import_compare(args.out_dir, args.dest))
    except FileNotFoundError as exc:
        print(f"zkconsumer: error: {exc}", file=sys.stderr)
        return 2
    return 0


def run_ancestry(args: argparse.Namespace) -> int:
    from zkconsumer.results.ancestry import record_fix

    try:
        contains = record_fix(args.fix, args.protocols, args.out, args.runs)
    except ValueError as exc:
        print(f"zkconsumer: error: {exc}", file=sys.stderr)
        return 2
    for run in sorted(contains):
        print(f"{run}: {'contains the fix' if contains[run] else 'predates the fix'}")
    return 0
