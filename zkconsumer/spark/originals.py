"""Original 0.10.2 members in Spark tasks: what every Spark job hosting them shares.

The tasks start the original protocols' JVM members from the broker's 0.10.2 build
(:func:`original_home_for`: refused, naming the broker spec, before any server starts when there
is no such build; the Java driver is compiled here once, an executor elsewhere compiles its
own). A leaving original member writes its JVM's resident memory into its ``stopping`` record;
:func:`memory_note` is the summary's line on it, over the record lines of a run
(:func:`rss_kbs`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from zkconsumer.lab.records import Lifecycle


def original_home_for(protocols: Iterable[str], broker: str | None, servers_named: bool) -> str:
    """The 0.10.2 build the original protocols' JVM members run from ("" without them)."""
    from zkconsumer.lab.drivers.original import ensure_compiled
    from zkconsumer.lab.original_build import original_home

    home = original_home(list(protocols), broker, servers_named)
    if home:
        ensure_compiled(home)
    return home


def rss_kbs(raws: Iterable[str]) -> list[int]:
    """The JVM resident memory (kB) of every leaving original member among record lines."""
    from zkconsumer.lab.drivers.original import rss_of

    out = []
    for raw in raws:
        try:
            rec = json.loads(raw)
        except ValueError:
            continue
        if rec.get("k") == "lc" and rec.get("w") == Lifecycle.STOPPING.value:
            kb = rss_of(str(rec.get("detail", "")))
            if kb is not None:
                out.append(kb)
    return out


def memory_note(kbs: Sequence[int]) -> str | None:
    """One line on the original members' JVMs' resident memory (None: none reported)."""
    if not kbs:
        return None
    mb = sorted(k / 1024 for k in kbs)
    return (f"Original 0.10.2 members (a JVM each): resident memory at their leave, median "
            f"{mb[len(mb) // 2]:.0f} MB, max {mb[-1]:.0f} MB over {len(mb)} members.")
