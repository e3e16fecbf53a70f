"""``zkconsumer spark fit-speed``: bad input is refused with exit status 2, naming what is wrong."""

from pathlib import Path

import pytest

from zkconsumer.cli.main import main

REPO = Path(__file__).resolve().parents[2]
CAL = str(REPO / "results/scale/calibration-10/calibration.json")


@pytest.mark.parametrize(("fit", "message"), [
    ("plan.json", "--fit wants PLAN.json=ROWS.csv, got 'plan.json'"),
    ("missing-plan.json=rows.csv", "missing-plan.json"),
])
def test_a_bad_fit_argument_exits_2_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              fit: str, message: str) -> None:
    code = main(["spark", "fit-speed", "--fit", str(tmp_path / fit) if "=" in fit else fit,
                 "--calibration", CAL, "--out", str(tmp_path / "out")])
    assert code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("row", "options", "message"), [
    # an N = 12 read does not serve the N = 48 cells
    ("zk-range-n12-p24-join-s0-abc,12,join,2000,formation_read,,0.09", ["--members", "48"],
     "no formation_read rows for zk-range N = 48"),
    # per cell, the join's read does not serve the leave
    ("zk-range-n48-p24-join-s0-abc,48,join,2000,formation_read,,1.2", ["--per", "cell"],
     "no formation_read rows for zk-range N = 48 leave"),
])
def test_rows_without_the_cells_formation_reads_are_refused_by_name(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], row: str, options: list[str],
        message: str) -> None:
    rows = tmp_path / "rows.csv"
    rows.write_text(f"run_id,members,event,heartbeat_ms,kind,member,seconds\n{row}\n")
    plan = REPO / "results/scale/validation-plan-22.json"
    code = main(["spark", "fit-speed", "--fit", f"{plan}={rows}", "--calibration", CAL,
                 *options, "--out", str(tmp_path / "out")])
    assert code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
