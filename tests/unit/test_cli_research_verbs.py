"""The research tools are zkconsumer verbs: each one reproduces its committed output."""

from __future__ import annotations

import filecmp
import json
from pathlib import Path

import pytest

from zkconsumer.cli.main import main

REPO = Path(__file__).resolve().parents[2]
SPLIT = REPO / "results" / "splitbrain"


def test_validate_split_brain_reproduces_the_committed_validation(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)  # the folders as the committed command named them
    out = tmp_path / "v5"
    assert main(["spark", "validate-split-brain", "--real", "results/splitbrain/real-v5-small",
                 "--real", "results/splitbrain/real-v5-n10",
                 "--plan", "results/splitbrain/validation-plan-5.json", "--out", str(out)]) == 0
    for name in ("checks.csv", "unscored.csv", "validation.md"):
        assert filecmp.cmp(out / name, SPLIT / "validation-5" / name, shallow=False), name
    command = json.loads((out / "meta.json").read_text())["command"]
    assert command.startswith("zkconsumer spark validate-split-brain --real ")


def test_validate_split_brain_without_a_sweep_exits_2(tmp_path, capsys):
    assert main(["spark", "validate-split-brain", "--real", str(tmp_path),
                 "--out", str(tmp_path / "out")]) == 2
    assert f"no sweep.csv in {tmp_path}" in capsys.readouterr().err


def test_ancestry_names_a_fix_that_is_no_commit(tmp_path, capsys):
    assert main(["results", "ancestry", "--fix", "no-such-commit", "--protocols", "zk-range",
                 "--out", str(tmp_path / "fix"), str(SPLIT / "real-v5-small")]) == 2
    assert "--fix 'no-such-commit' is not a commit" in capsys.readouterr().err
    assert not (tmp_path / "fix").exists()


def test_import_comparison_refuses_an_unfinished_output(tmp_path, capsys):
    assert main(["results", "import-comparison", str(tmp_path),
                 str(tmp_path / "dest")]) == 2
    assert "has no meta.json: not a finished compare output" in capsys.readouterr().err


@pytest.mark.parametrize("verb", [["sim", "kafka-check"], ["results", "ancestry"],
                                  ["results", "import-comparison"],
                                  ["spark", "validate-split-brain"]])
def test_each_tool_has_its_help(verb, capsys):
    with pytest.raises(SystemExit) as done:
        main([*verb, "--help"])
    assert done.value.code == 0
    assert f"usage: zkconsumer {' '.join(verb)}" in capsys.readouterr().out
