"""``figures``: rebuild every generated table and plot in docs/ from the committed results/.

    zkconsumer figures            # rewrite the generated blocks and docs/figures/*.svg
    zkconsumer figures --check    # exit 1 and show the diff when a doc is stale
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser("figures", help="rebuild the docs' tables and plots from results/",
                       description="Rewrite every <!-- generated: NAME --> block of docs/*.md "
                                   "from the raw results committed under results/.")
    p.add_argument("--repo", type=Path, default=Path(__file__).resolve().parents[2],
                   help="repository root (default: this checkout)")
    p.add_argument("--check", action="store_true",
                   help="change nothing; exit 1 if a doc differs from what results/ gives")
    p.set_defaults(func=run_figures)


def run_figures(args: argparse.Namespace) -> int:
    from zkconsumer.results.regenerate import regenerate

    outcomes = regenerate(args.repo, check=args.check)
    stale = [o for o in outcomes if o.changed]
    for o in outcomes:
        state = ("stale" if args.check else "rewritten") if o.changed else "up to date"
        print(f"{o.doc.relative_to(args.repo)}: {state}")
    if args.check and stale:
        for o in stale:
            sys.stdout.write(o.diff)
        return 1
    return 0
