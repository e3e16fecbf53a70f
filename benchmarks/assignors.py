"""Time every partition assignor at three group sizes, side by side with ``range``.

Sizes (members, partitions): (10, 100), (100, 1000), (1000, 10000), partitions spread over
``partitions // 100`` topics (at least 10). Two subscription shapes:

* ``identical``: every member subscribes to every topic (the sticky fast path);
* ``mixed``: member ``i`` subscribes to topic ``j`` unless ``(7i + 3j) % 5 == 0`` (80% of the
  topics), and every tenth member to a single topic (the sticky general path).

Each cell is the best of several fresh ``assign`` calls (fresh group, no owned partitions) on
prebuilt input. A cell of an assignor that refuses its input reads ``refused``. Members of the
legacy assignors are thread ids (``member-00042-0``).

    python benchmarks/assignors.py            # full table, a few seconds
    python benchmarks/assignors.py --quick    # smaller sizes, one repeat
    python benchmarks/assignors.py --results DIR   # also times.csv + meta.json (docs' raw data)
"""

from __future__ import annotations

import argparse
import csv
import logging
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from zkconsumer.assignors import (  # noqa: E402
    ASSIGNORS,
    AssignmentError,
    Subscription,
    get_assignor,
)

FULL_SIZES = [(10, 100), (100, 1000), (1000, 10000)]
QUICK_SIZES = [(10, 100), (100, 1000)]
SHAPES = ["identical", "mixed"]
TARGET_RATIO = 20.0
TARGET_SECONDS = 2.0

Group = tuple[dict[str, int], dict[str, Subscription]]


def build_group(members: int, partitions: int, shape: str) -> Group:
    topic_count = max(10, partitions // 100)
    topics = [f"topic-{j:03d}" for j in range(topic_count)]
    counts = {t: partitions // topic_count for t in topics}
    subscriptions = {}
    for i in range(members):
        chosen = topics
        if shape == "mixed":
            if i % 10 == 0:
                chosen = [topics[i % topic_count]]
            else:
                chosen = [t for j, t in enumerate(topics) if (7 * i + 3 * j) % 5]
        subscriptions[f"member-{i:05d}-0"] = Subscription(chosen)
    return counts, subscriptions


def best_time(name: str, group: Group, repeats: int) -> float | None:
    """Best wall time of ``repeats`` calls in seconds, or None if the assignor refuses."""
    counts, subscriptions = group
    best = float("inf")
    for _ in range(repeats):
        assignor = get_assignor(name)
        started = time.perf_counter()
        try:
            assignor.assign(counts, subscriptions)
        except AssignmentError:
            return None
        best = min(best, time.perf_counter() - started)
    return best


def repeats_for(partitions: int, quick: bool) -> int:
    if quick:
        return 1
    return 20 if partitions <= 100 else 5 if partitions <= 1000 else 3


def run(quick: bool) -> list[tuple[int, int, str, str, float | None, float | None]]:
    rows = []
    for members, partitions in QUICK_SIZES if quick else FULL_SIZES:
        for shape in SHAPES:
            group = build_group(members, partitions, shape)
            repeats = repeats_for(partitions, quick)
            times = {name: best_time(name, group, repeats) for name in ASSIGNORS}
            baseline = times["range"]
            for name, seconds in times.items():
                ratio = seconds / baseline if seconds is not None and baseline else None
                rows.append((members, partitions, shape, name, seconds, ratio))
    return rows


def print_table(rows: list[tuple[int, int, str, str, float | None, float | None]]) -> None:
    print("| members | partitions | subscriptions | strategy | time (ms) | vs range |")
    print("|---:|---:|---|---|---:|---:|")
    for members, partitions, shape, name, seconds, ratio in rows:
        time_cell = "refused" if seconds is None else f"{seconds * 1000:.2f}"
        ratio_cell = "-" if ratio is None else f"{ratio:.2f}x"
        print(f"| {members} | {partitions} | {shape} | {name} | {time_cell} | {ratio_cell} |")


def check_targets(rows: list[tuple[int, int, str, str, float | None, float | None]]) -> bool:
    """Sticky and cooperative-sticky at (1000, 10000), identical: < 2 s and <= 20x range."""
    ok = True
    for members, partitions, shape, name, seconds, ratio in rows:
        if (members, partitions, shape) == (1000, 10000, "identical") and "sticky" in name:
            met = seconds is not None and ratio is not None and \
                seconds < TARGET_SECONDS and ratio <= TARGET_RATIO
            ok &= met
            print(f"target {name} (1000, 10000) identical: {seconds:.3f} s, {ratio:.2f}x range "
                  f"-> {'met' if met else 'MISSED'}")
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="only (10, 100) and (100, 1000), one repeat each")
    parser.add_argument("--results", type=Path, default=None,
                        help="write times.csv and meta.json here")
    args = parser.parse_args(argv)
    from zkconsumer.results import capture, write_provenance

    prov = capture("python benchmarks/assignors.py" + (" --quick" if args.quick else ""))
    # Keep the table readable: legacy-range warns about idle threads at every size here.
    logging.basicConfig(level=logging.ERROR)
    print(f"Python {platform.python_version()} on {platform.machine()}, "
          f"{'quick' if args.quick else 'full'} run")
    rows = run(args.quick)
    print_table(rows)
    met = check_targets(rows)
    if args.results is not None:
        write_rows(args.results, rows, args.quick)
        print(f"wrote {write_provenance(args.results, prov)}")
    return 0 if met else 1


def write_rows(folder: Path, rows: list[tuple[int, int, str, str, float | None, float | None]],
               quick: bool) -> None:
    """One line per cell: the best time in seconds (empty: refused) and its repeat count."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "times.csv", "w", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(("members", "partitions", "subscriptions", "strategy", "best_s",
                      "repeats"))
        for members, partitions, shape, name, seconds, _ in rows:
            out.writerow((members, partitions, shape, name,
                          "" if seconds is None else f"{seconds:.6f}",
                          repeats_for(partitions, quick)))


if __name__ == "__main__":
    sys.exit(main())
