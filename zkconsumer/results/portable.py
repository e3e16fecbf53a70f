"""Recorded commands and paths without the measuring machine's folders in them.

A result folder is measured into some scratch folder (``--out`` a temporary folder), often
under a harness's lock (``flock LOCKFILE zkconsumer ...``), and then committed under
``results/``. What it records (``meta.json``'s command, a summary's "reproduce with" line, a
spec's ``out_dir``) is read by someone on another machine: it must name the folder where the
data now is, relative to the checkout, and nothing of the machine that ran it. One rule, used
by every writer:

* a leading ``flock [options] LOCKFILE`` is dropped: the lock serialised measurements on a shared
  machine, it is not part of reproducing one;
* an absolute path under a moved folder (``moves``: where a run wrote -> where its data is now)
  becomes the new place, with the rest of the path kept;
* an absolute path inside the checkout becomes relative to the checkout's top
  (``results/scale/validation-2``), the way the docs write every command;
* any other path in a machine's folders (``/tmp``, ``/home``, ``/work``, ``/var``... see
  :data:`MACHINE_ROOTS`) keeps only its last component (``<temp>/v3/real-v7`` -> ``real-v7``): a
  folder of the same name, made wherever the reader runs the command.

Other absolute paths stay: a znode path (``/consumers/g/ids``) looks like a file's but belongs
to the protocol, not to the machine.

Relative paths and everything else in the text stay byte for byte, so a command that was already
portable is unchanged and the rule can be applied again without effect.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

CHECKOUT = Path(__file__).resolve().parents[2]
# Top folders that hold a machine's own files (scratch, homes, work areas, macOS temp folders).
MACHINE_ROOTS = frozenset({"tmp", "var", "home", "root", "Users", "work", "private", "mnt",
                           "opt", "srv", "scratch", "data", "media", "run"})

# The folder beside the checkout where the Kafka builds live (``../shared/kafka-2.4.1``), as the
# project finds them: a path into it is recorded as the same relative path.
SHARED = "shared"
# An absolute path starts a word: at the start, after blanks, after ``--opt=``, an opening
# quote or backtick, or a scheme such as ``kafka:`` (``--broker kafka:DIR``); it runs to the
# next blank, quote, backtick or closing bracket.
_ABSOLUTE = re.compile(r"(?:(?<=^)|(?<=[\s=\"'`(\[])|(?<=\w:))/[^\s\"'`)\]]*")
# The options by which a command names its output folder (experiment verbs, spark jobs, benchmarks).
OUT_OPTIONS = ("--out", "--results")
_OUT_VALUE = re.compile(r"(?<!\S)(--out|--results)(=|\s+)([^\s\"'`]+)")
# ``flock`` with its options (``-w 10``, ``-x``...) and the lock file, at the start of a command.
_LOCK_PREFIX = re.compile(r"^(\s*)flock\s+(?:-{1,2}[\w-]+(?:\s+\d+(?:\.\d+)?)?\s+)*\S+\s+(?=\S)")


def portable_path(path: str, root: Path | str = CHECKOUT,
                  moves: Mapping[str, str] | None = None) -> str:
    """``path`` as a committed file may record it (the rules in the module docstring)."""
    if not path.startswith("/"):
        return path
    p = PurePosixPath(path)
    for src, dest in sorted((moves or {}).items(), key=lambda kv: -len(kv[0])):
        rest = _relative(p, PurePosixPath(src))
        if rest is not None:
            return str(PurePosixPath(dest) / rest)
    rest = _relative(p, PurePosixPath(str(root)))
    if rest is not None:
        return str(rest)
    shared = _relative(p, PurePosixPath(str(root)).parent / SHARED)
    if shared is not None:
        return str(PurePosixPath("..") / SHARED / shared)
    if len(p.parts) > 1 and p.parts[1] in MACHINE_ROOTS:
        return p.name
    return path


def portable_command(command: str, root: Path | str = CHECKOUT,
                     moves: Mapping[str, str] | None = None) -> str:
    """``command`` (or a line of text quoting one) without a lock prefix or machine paths."""
    text = _LOCK_PREFIX.sub(r"\1", command, count=1)
    return _ABSOLUTE.sub(lambda m: portable_path(m.group(0), root, moves), text)


def relocated_command(command: str, src: str, dest: str, root: Path | str = CHECKOUT) -> str:
    """``command`` for output moved from folder ``src`` to ``dest``: an out option
    (:data:`OUT_OPTIONS`) naming ``src`` (as recorded, absolute, or already portable, e.g.
    its last component) or a folder inside it names ``dest`` instead; the rest goes through
    :func:`portable_command`."""
    old = PurePosixPath(portable_path(src, root))

    def move(m: re.Match[str]) -> str:
        rest = _relative(PurePosixPath(portable_path(m.group(3), root)), old)
        value = m.group(3) if rest is None else str(PurePosixPath(dest) / rest)
        return m.group(1) + m.group(2) + value

    return portable_command(_OUT_VALUE.sub(move, command), root, {src: dest})


def _relative(path: PurePosixPath, base: PurePosixPath) -> PurePosixPath | None:
    try:
        return path.relative_to(base)
    except ValueError:
        return None


# Tools that were run as ``python -m MODULE`` before they became verbs: a recorded command keeps
# what was run, a reader is shown what runs today (same arguments, same outputs).
RENAMED_TOOLS = {
    "python -m zkconsumer.spark.splitbrain_validate": "zkconsumer spark validate-split-brain",
    "python -m zkconsumer.sim.kafka_check": "zkconsumer sim kafka-check",
    "python -m zkconsumer.results.ancestry": "zkconsumer results ancestry",
    "python -m zkconsumer.results.comparison_data": "zkconsumer results import-comparison",
}


def current_command(command: str) -> str:
    """``command`` as it is spelled today: a tool run through ``python -m`` before it became a
    ``zkconsumer`` verb is named by its verb (:data:`RENAMED_TOOLS`)."""
    for old, new in RENAMED_TOOLS.items():
        if command.startswith(old + " ") or command == old:
            return new + command[len(old):]
    return command

