"""Rows of a committed run that do not measure what their labels say, and why.

A run's ``sweep.csv`` stays as the job wrote it. When a row is found afterwards to be invalid
(the job had a defect that the row's own columns do not show, e.g. a storm that began with
fewer members than its N), the run's folder gets an ``excluded.csv`` beside it: one line per
row (``protocol``, ``scenario``, ``members``, ``seed``, ``reason``). :func:`sweep_rows` reads the
sweep with those rows marked: their ``reason`` becomes ``excluded: <reason>``, so tables list
them with the failed and not-applicable rows and validators, which score only rows without a
reason, leave them out.

The reason of a run whose group did not form (some initial member exited before the group was
stable) starts its message with :data:`NOT_FORMED`; :func:`formation_verdict` reads it back.
"""

from __future__ import annotations

import csv
from pathlib import Path

SWEEP_FILE = "sweep.csv"
EXCLUDED_FILE = "excluded.csv"
EXCLUDED_FIELDS = ("protocol", "scenario", "members", "seed", "reason")
PREFIX = "excluded: "
NOT_FORMED = "the group did not form:"


def _key(row: dict[str, str]) -> tuple[str, str, int, int]:
    # A herd sweep (spark herd) has events, not scenarios: its rows key with scenario "".
    return row["protocol"], row.get("scenario", ""), int(row["members"]), int(row["seed"])


def exclusions(folder: Path) -> dict[tuple[str, str, int, int], str]:
    """The folder's excluded rows, by (protocol, scenario, N, seed); empty without the file."""
    path = folder / EXCLUDED_FILE
    if not path.is_file():
        return {}
    with open(path, newline="") as fh:
        reader = csv.DictReader(fh)
        missing = set(EXCLUDED_FIELDS) - set(reader.fieldnames or ())
        if missing:
            raise ValueError(f"{path}: missing columns {', '.join(sorted(missing))}")
        out = {}
        for row in reader:
            if not row["reason"].strip():
                raise ValueError(f"{path}: an exclusion without a reason: {row}")
            out[_key(row)] = row["reason"].strip()
    return out


def sweep_rows(folder: Path) -> list[dict[str, str]]:
    """The folder's sweep rows, excluded ones carrying ``excluded: <reason>`` as their reason.

    An exclusion that matches no row is an error: it would silently exclude nothing."""
    path = folder / SWEEP_FILE
    if not path.is_file():
        return []
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    excluded = exclusions(folder)
    matched = set()
    for row in rows:
        key = _key(row)
        if key in excluded and row["mode"] == "real":
            row["reason"] = PREFIX + excluded[key]
            matched.add(key)
    unmatched = set(excluded) - matched
    if unmatched:
        raise ValueError(f"{folder / EXCLUDED_FILE}: no real row for "
                         f"{', '.join(map(str, sorted(unmatched)))}")
    return rows


def formation_verdict(row: dict[str, str]) -> bool | None:
    """Whether a real row's group formed: True for a completed run, False for one whose
    initial members did not all survive the formation, None for other failures (and for
    excluded rows), which say nothing about it."""
    if not row["reason"]:
        return True
    return False if NOT_FORMED in row["reason"] else None
