"""The demo's console shows each distinct warning once and counts the copies; the file keeps all."""

from __future__ import annotations

import io
import logging
from pathlib import Path

from zkconsumer.cli.quiet import narrate_to


def test_a_warning_repeated_by_many_members_is_shown_once_with_its_count(tmp_path: Path) -> None:
    out = io.StringIO()
    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    try:
        console = narrate_to(tmp_path / "demo.log", out)
        legacy = logging.getLogger("zkconsumer.assignors.legacy")
        for m in range(40):
            legacy.warning("No broker partitions consumed by consumer thread g_m%02d-0 for "
                           "topic t-1", m)
        for n in (2, 5):
            legacy.warning("No broker partitions consumed by consumer threads %s for topic t-1",
                           ", ".join(f"g_m{i:02d}-0" for i in range(n)))
        logging.getLogger("kazoo.client").warning("Session has expired")
        logging.getLogger("zkconsumer.lab").info("member m03 joined")
    finally:
        for h in list(root.handlers):
            root.removeHandler(h)
            h.close()
        for h in saved[0]:
            root.addHandler(h)
        root.setLevel(saved[1])
    lines = out.getvalue().splitlines()
    assert lines == [
        "WARNING zkconsumer.assignors.legacy: No broker partitions consumed by consumer thread "
        "g_m00-0 for topic t-1",
        "WARNING zkconsumer.assignors.legacy: No broker partitions consumed by consumer threads "
        "g_m00-0, g_m01-0 for topic t-1",
        "WARNING kazoo.client: Session has expired",
    ]
    assert console.repeats() == [(39, lines[0]), (1, lines[1])]
    logged = (tmp_path / "demo.log").read_text()
    assert logged.count("No broker partitions consumed") == 42
    assert "member m03 joined" in logged
