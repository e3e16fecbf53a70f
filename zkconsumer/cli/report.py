"""``report DIR``: one self-contained report.html for any lab output folder."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from zkconsumer.errors import ZkConsumerError


def register(sub: Any) -> None:
    p = sub.add_parser("report", help="one self-contained HTML page for a lab output folder",
                       description="Render every result under DIR (compare, herd, split brain, "
                                   "chaos, Spark sweeps, validation) with its provenance, "
                                   "tables and plots inlined into DIR/report.html.")
    p.add_argument("dir", type=Path, help="a lab output folder (any --out of the lab)")
    p.add_argument("--out", type=Path, default=None, help="write here (default DIR/report.html)")
    p.set_defaults(func=run_report)


def run_report(args: argparse.Namespace) -> int:
    from zkconsumer.report import write_report

    if not args.dir.is_dir():
        raise ZkConsumerError(f"report: {str(args.dir)!r} is not a folder")
    path = write_report(args.dir, args.out)
    print(f"wrote {path}")
    return 0
