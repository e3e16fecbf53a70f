"""Instructions per consumed message, connector vs bare client, counted by valgrind's callgrind.

Wall-clock rates on a shared machine swing with other people's load; instruction counts do
not. For each path (``bare``, ``bare+pos``, ``connector`` with the C extension, ``conn-py``
pure Python) a child process consumes ``--small`` and then, in another child, ``--large``
messages under ``valgrind --tool=callgrind``; the difference of the two totals divided by the
difference of the counts is the cost of one more message, every thread of the process included
(librdkafka's, the fetcher's, the application's), with start-up, group registration and
rebalance cancelled out. The broker and ZooKeeper run in this (parent) process's children,
outside valgrind. More messages than ``--large`` are produced, so every child's prefetch runs
ahead by the same amount.

    .venv/bin/python benchmarks/callgrind_throughput.py --results DIR [--keep-profiles DIR]

``--results DIR`` writes ``instructions.csv`` (path, messages, total instructions),
``per_message.csv`` and ``meta.json``. ``--keep-profiles`` keeps the callgrind output files
(large: not for committing) for ``callgrind_annotate``.
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

PATHS = ("bare", "bare+pos", "connector", "conn-py")
_TOTALS = re.compile(r"^(?:summary|totals):\s+(\d+)", re.M)
_FUNCTION = re.compile(r"\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*)$")
TOP_FUNCTIONS = 30


def child(path: str, n: int, zk_connect: str, bootstrap: str, topic: str, partitions: int,
          group: str) -> None:
    """Consume ``n`` messages by ``path`` (runs under valgrind)."""
    import throughput

    if path in ("bare", "bare+pos"):
        throughput.consume_bare(zk_connect, bootstrap, topic, n, partitions, path == "bare+pos")
    else:
        throughput.consume_connector(zk_connect, topic, n, group, pure_python=path == "conn-py")


def instructions(out_file: Path) -> tuple[int, bool]:
    """Total instructions (Ir) of one thread's callgrind file; whether it ran Python code."""
    text = out_file.read_text(errors="replace")
    match = _TOTALS.search(text)
    if match is None:
        raise SystemExit(f"no totals in {out_file}")
    return int(match.group(1)), "_PyEval_EvalFrameDefault" in text


def functions(out_file: Path) -> dict[str, int]:
    """Instructions by function (self cost) over the threads of one run that ran Python."""
    totals: dict[str, int] = defaultdict(int)
    for thread in out_file.parent.glob(out_file.name + "-*"):
        if not instructions(thread)[1]:
            continue
        text = subprocess.run(["callgrind_annotate", "--auto=no", "--threshold=100",
                               str(thread)], capture_output=True, text=True, check=True).stdout
        for line in text.splitlines():
            match = _FUNCTION.match(line)
            if match and "PROGRAM TOTALS" not in line:
                totals[_short(match.group(2))] += int(match.group(1).replace(",", ""))
    return totals


def _short(name: str) -> str:
    """``/build/.../Objects/call.c:fn [lib]`` -> ``call.c:fn``; ``???:fn [lib]`` -> ``lib:fn``."""
    where, _, rest = name.partition(":")
    fn, _, lib = rest.partition(" [")
    fn = fn.split("'")[0]
    if where == "???":
        return f"{Path(lib.rstrip(']')).name.split('.')[0]}:{fn}"
    return f"{Path(where).name}:{fn}"


def run_child(path: str, n: int, zk_connect: str, bootstrap: str, topic: str, partitions: int,
              group: str, out_file: Path) -> tuple[int, int]:
    """(instructions of the threads that run Python, of the client library's own threads)."""
    cmd = ["valgrind", "--tool=callgrind", "--separate-threads=yes",
           f"--callgrind-out-file={out_file}",
           sys.executable, __file__, "--child", path, str(n), zk_connect, bootstrap, topic,
           str(partitions), group]
    env = {**os.environ}
    if path == "conn-py":
        env["ZKCONSUMER_PURE_PYTHON"] = "1"
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        raise SystemExit(f"{path} {n}: exit {done.returncode}\n{done.stderr[-3000:]}")
    python = library = 0
    for thread in out_file.parent.glob(out_file.name + "-*"):
        ir, runs_python = instructions(thread)
        if runs_python:
            python += ir
        else:
            library += ir
    if not python:
        raise SystemExit(f"no callgrind output {out_file}-*")
    return python, library


def per_message(rows: list[tuple[str, int, int, int]], paths: list[str], small: int,
                large: int) -> dict[str, tuple[float, float]]:
    """Instructions of one more message, (Python threads, library threads), per path."""
    out = {}
    for path in paths:
        a = next(r for r in rows if r[0] == path and r[1] == small)
        b = next(r for r in rows if r[0] == path and r[1] == large)
        out[path] = ((b[2] - a[2]) / (large - small), (b[3] - a[3]) / (large - small))
    return out


def write_functions(out: Path, by_function: dict[tuple[str, int], dict[str, int]],
                    paths: list[str], small: int, large: int) -> None:
    """Per message by function for each path: the functions furthest from the bare path."""
    per = {path: {fn: (by_function[(path, large)].get(fn, 0)
                       - by_function[(path, small)].get(fn, 0)) / (large - small)
                  for fn in set(by_function[(path, small)]) | set(by_function[(path, large)])}
           for path in paths}
    names = set().union(*per.values())
    top = sorted(names, key=lambda fn: -max(abs(per[p].get(fn, 0) - per["bare"].get(fn, 0))
                                            for p in paths))[:TOP_FUNCTIONS]
    with open(out, "w", newline="") as fh:
        out_csv = csv.writer(fh)
        out_csv.writerow(("function", *paths))
        for fn in top:
            out_csv.writerow((fn, *(f"{per[p].get(fn, 0):.1f}" for p in paths)))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--child":
        path, n, zk_connect, bootstrap, topic, partitions, group = argv[1:8]
        child(path, int(n), zk_connect, bootstrap, topic, int(partitions), group)
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", type=int, default=20_000)
    parser.add_argument("--large", type=int, default=100_000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--paths", default=",".join(PATHS))
    parser.add_argument("--results", type=Path, default=None)
    parser.add_argument("--keep-profiles", type=Path, default=None)
    parser.add_argument("--functions", action="store_true",
                        help="also write functions.csv: instructions per message by function "
                             "(self cost, Python threads) for the functions that differ most "
                             "from the bare path")
    args = parser.parse_args(argv)
    paths = [p for p in args.paths.split(",") if p]
    for p in paths:
        if p not in PATHS:
            raise SystemExit(f"--paths: unknown path {p!r} (known: {', '.join(PATHS)})")
    if not 0 < args.small < args.large:
        raise SystemExit(f"need 0 < --small < --large, got {args.small} and {args.large}")
    prov = None
    if args.results is not None:
        from zkconsumer.results import capture

        prov = capture("python benchmarks/callgrind_throughput.py " + " ".join(argv),
                       broker="tansu-0.6.0")
    import throughput

    from zkconsumer.admin import create_topic
    from zkconsumer.datapath.records import speedups_enabled
    from zkconsumer.testing import EmbeddedBroker, EmbeddedZooKeeper

    if "connector" in paths and not speedups_enabled():
        raise SystemExit("the connector path needs the C extension built (make install)")
    rows: list[tuple[str, int, int, int]] = []  # path, messages, Python threads, library's
    by_function: dict[tuple[str, int], dict[str, int]] = {}
    with tempfile.TemporaryDirectory() as tmp, EmbeddedZooKeeper() as zk, \
            EmbeddedBroker(zk.connect_string) as broker:
        profiles = args.keep_profiles or Path(tmp)
        profiles.mkdir(parents=True, exist_ok=True)
        topic = "callgrind"
        create_topic(zk.connect_string, topic, args.partitions, bootstrap=broker.bootstrap)
        # Enough beyond --large that each child's prefetch runs ahead by the same amount.
        total = args.large + 40_000
        throughput.produce_batched(broker.bootstrap, topic, total, args.partitions, False, 1)
        for path in paths:
            for n in (args.small, args.large):
                out = profiles / f"callgrind.{path}.{n}.out"
                python, library = run_child(path, n, zk.connect_string, broker.bootstrap, topic,
                                            args.partitions, f"cg-{path}-{n}", out)
                rows.append((path, n, python, library))
                if args.functions:
                    by_function[(path, n)] = functions(out)
                print(f"{path:9s} {n:7d} messages: {python:,} instructions in Python threads, "
                      f"{library:,} in the client library's threads", flush=True)
    per = per_message(rows, paths, args.small, args.large)
    for path in paths:
        py, lib = per[path]
        print(f"{path:9s}: {py:6.0f} instructions per message in the Python threads "
              f"(the application's, the fetcher's: consume() and all above it), "
              f"{lib:6.0f} in librdkafka's own threads"
              + (f"; Python threads / bare {py / per['bare'][0]:.3f}" if "bare" in per else ""))
    if args.results is not None and prov is not None:
        from zkconsumer.results import write_provenance

        args.results.mkdir(parents=True, exist_ok=True)
        with open(args.results / "instructions.csv", "w", newline="") as fh:
            out_csv = csv.writer(fh)
            out_csv.writerow(("path", "messages", "python_threads_ir", "library_threads_ir"))
            out_csv.writerows(rows)
        if by_function and "bare" in paths:
            write_functions(args.results / "functions.csv", by_function, paths, args.small,
                            args.large)
        print(f"wrote {write_provenance(args.results, prov)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
