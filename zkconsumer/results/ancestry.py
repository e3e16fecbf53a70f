"""Which committed result folders were produced by code that contains a given fix.

A table that mixes runs made before and after a fix must say which row is which. The answer is
a fact of the repository's history (is the fix commit an ancestor of the revision in the run's
``meta.json``?), and that history is not always at hand when the figures are rebuilt (shallow
clones, exported trees). So it is computed once, by this command, and stored as data beside the
results it classifies::

    zkconsumer results ancestry --fix 6200aa8 --protocols zk-leader-range \\
        --out results/splitbrain/fix-leader-watch results/splitbrain/real-*

writes ``runs.csv`` (one line per folder: ``run``, ``revision``, ``contains_fix``) and
``meta.json`` (the command; the fix's full commit, subject and the protocols it concerns under
``extra``). Renderers read it with :func:`read_fix`.
"""

from __future__ import annotations

import csv
import json
import logging
import subprocess
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from zkconsumer.results.provenance import capture, write_provenance

log = logging.getLogger(__name__)

RUNS_FILE = "runs.csv"


@dataclass(frozen=True)
class Fix:
    """A fix and, per result folder name, whether the folder's revision contains it."""

    commit: str
    subject: str
    protocols: tuple[str, ...]
    contains: dict[str, bool]
    revisions: dict[str, str]

    def predates(self, run: str, protocol: str) -> bool:
        """A row of ``run`` for ``protocol`` was measured without the fix (only the protocols
        the fix touches can be affected by it)."""
        if run not in self.contains:
            raise KeyError(f"result folder {run!r} is not classified against fix "
                           f"{self.commit[:10]}; rerun `zkconsumer results ancestry`")
        return protocol in self.protocols and not self.contains[run]


def clean_revision(revision: str) -> str:
    """``meta.json`` marks a run from uncommitted changes with ``-dirty``: its base commit is
    what history knows."""
    return revision.removesuffix("-dirty")


def classify(revisions: dict[str, str], is_ancestor: Callable[[str], bool]
             ) -> dict[str, bool]:
    """Per run, whether its revision descends from (or is) the fix; pure given the history
    query ``is_ancestor(revision)``. An unknown revision is an error, not a guess."""
    out = {}
    for run, rev in sorted(revisions.items()):
        if not rev or rev == "unknown":
            raise ValueError(f"result folder {run!r} has no git revision in its meta.json "
                             f"({rev!r}); it cannot be placed before or after the fix")
        out[run] = is_ancestor(clean_revision(rev))
    return out


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, timeout=30)


def git_is_ancestor(repo: Path, fix: str) -> Callable[[str], bool]:
    """``git merge-base --is-ancestor FIX REV``; exit 1 is "no", anything else is an error (a
    revision missing from a shallow clone must not read as "before the fix")."""
    def check(revision: str) -> bool:
        done = _git(repo, "merge-base", "--is-ancestor", fix, revision)
        if done.returncode in (0, 1):
            return done.returncode == 0
        raise ValueError(f"git cannot tell whether {fix} is an ancestor of {revision}: "
                         f"{done.stderr.strip()}")
    return check


def write_fix(out: Path, fix_commit: str, subject: str, protocols: Iterable[str],
              revisions: dict[str, str], contains: dict[str, bool], command: str) -> None:
    # the revision is read before runs.csv changes, or it would always read as -dirty
    prov = capture(command, commit=fix_commit, subject=subject, protocols=sorted(protocols))
    out.mkdir(parents=True, exist_ok=True)
    with open(out / RUNS_FILE, "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["run", "revision", "contains_fix"])
        for run in sorted(contains):
            w.writerow([run, revisions[run], "true" if contains[run] else "false"])
    write_provenance(out, prov)


def read_fix(folder: Path) -> Fix:
    meta = json.loads((folder / "meta.json").read_text())
    extra = meta["extra"]
    with open(folder / RUNS_FILE, newline="") as fh:
        rows = list(csv.DictReader(fh))
    return Fix(commit=extra["commit"], subject=extra["subject"],
               protocols=tuple(extra["protocols"]),
               contains={r["run"]: r["contains_fix"] == "true" for r in rows},
               revisions={r["run"]: r["revision"] for r in rows})


def record_fix(fix: str, protocols: str, out: Path, runs: Sequence[Path]) -> dict[str, bool]:
    """Classify the result folders ``runs`` against the commit ``fix`` and write ``out``
    (``zkconsumer results ancestry``); returns, per folder name, whether it contains the fix."""
    repo = Path(__file__).resolve().parents[2]
    resolved = _git(repo, "rev-parse", "--verify", f"{fix}^{{commit}}")
    if resolved.returncode != 0:
        raise ValueError(f"--fix {fix!r} is not a commit of this repository")
    commit = resolved.stdout.strip()
    subject = _git(repo, "log", "-1", "--format=%s", commit).stdout.strip()
    revisions = {}
    for folder in runs:
        meta = folder / "meta.json"
        if not meta.is_file():
            raise ValueError(f"{folder} has no meta.json")
        revisions[folder.name] = json.loads(meta.read_text()).get("revision", "")
    contains = classify(revisions, git_is_ancestor(repo, commit))
    command = " ".join(["zkconsumer results ancestry", "--fix", fix, "--protocols", protocols,
                        "--out", str(out), *(str(f) for f in runs)])
    write_fix(out, commit, subject, [x for x in protocols.split(",") if x], revisions, contains,
              command)
    for name in sorted(contains):
        log.info("%s: %s", name, "contains the fix" if contains[name] else "predates the fix")
    return contains
