"""The notebook-style example reproduces P/E suspension Fig. 1 from the committed results."""

import importlib.util
import pathlib

import pytest

pytest.importorskip("matplotlib")
ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_the_pe_suspension_figure_is_drawn_from_the_experiments_results(tmp_path, capsys):
    spec = importlib.util.spec_from_file_location(
        "fig1", ROOT / "examples" / "pe_suspension_fig1.py"
    )
    fig1 = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fig1)
    out = tmp_path / "fig1.png"
    fig1.main(out)
    printed = capsys.readouterr().out
    # 96 points, each run with three seeds.
    assert "0 points run, 288 already done" in printed
    assert out.stat().st_size > 10_000
    # The table it prints is the report's: fin1 on SLC, RPS / FIFO.
    import ssdlab

    df = ssdlab.experiment.results(ROOT / "experiments" / "pe-suspension")
    fin1 = df[(df["workload"] == "fin1") & (df["preset"] == "pe-suspension-slc")]
    assert sorted(fin1["seed"].unique()) == [1, 2, 3]
    by = fin1.groupby("variant")["read.mean_us"].mean()
    assert f"{by['RPS'] / by['FIFO']:.3f}" in printed
