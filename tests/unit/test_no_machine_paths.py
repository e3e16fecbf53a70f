"""Nothing of the measuring machine in the repository: no absolute path of its scratch, work or
home folders in docs/, results/, the package or the tests.

A committed command is read on other machines; ``--out`` names where the data is committed
(``zkconsumer.results.portable`` makes every writer record it so). The only allowed hits are the
inputs of the tests of that path-stripping rule, listed in :data:`TEST_DATA`.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
AREAS = ("docs", "results", "zkconsumer", "tests")
MACHINE_PATH = re.compile(r"/(?:tmp|work|home|root|Users|var/folders)/")
# Tests whose data is machine paths on purpose: the inputs the stripping must remove.
TEST_DATA = frozenset({
    "tests/unit/test_results_portable.py",
    "tests/unit/test_results_compact.py",
    "tests/unit/test_comparison_data.py",
})


def machine_path_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) of every line of ``text`` naming a machine folder."""
    return [(n, line.strip()) for n, line in enumerate(text.splitlines(), 1)
            if MACHINE_PATH.search(line)]


def tracked_files() -> list[str]:
    out = subprocess.run(["git", "ls-files", "-z", "--", *AREAS], cwd=REPO, check=True,
                         capture_output=True).stdout.decode()
    return sorted(f for f in out.split("\0") if f)


def test_the_pattern_finds_machine_folders_and_nothing_else() -> None:
    scratch, home = "/" + "tmp/v3/x", "/" + "Users/me/y"  # split: this file is scanned too
    text = f"a\n--out {scratch}\nzk /consumers/g/ids results/lab/x\n{home}\n"
    assert machine_path_lines(text) == [(2, f"--out {scratch}"), (4, home)]


def test_no_committed_file_names_a_folder_of_the_measuring_machine() -> None:
    files = tracked_files()
    assert "results/splitbrain/real-v7-r1/meta.json" in files  # the walk sees the data
    hits = []
    for name in files:
        if name in TEST_DATA or not (REPO / name).is_file():
            continue
        data = (REPO / name).read_bytes()
        if b"\0" in data:
            continue  # images and other binary files
        for n, line in machine_path_lines(data.decode("utf-8", errors="replace")):
            hits.append(f"{name}:{n}: {line[:160]}")
    assert not hits, "absolute paths of the measuring machine:\n" + "\n".join(hits)
