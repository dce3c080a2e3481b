"""python -m jackson.lab_report.redraw: a finished folder's figures drawn again from its tables.

Checked against what the run itself drew (a fresh quick sweep: the redraw shows the same picture), on a
folder with the older summary and tables (no m_ff column, curves without medians, plain CSVs where runs now
write NAME.csv.gz: the same picture again),
on copies of committed folders (every table, summary and cell byte for byte as before), and for bad input
(one line, exit 2).  Every PDF it writes comes from matplotlib's PDF backend and holds no raster image.
"""
from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import assert_paper_figure, assert_vector_pdf, keep_figures, same_picture
from jackson.lab_report.redraw import main, redraw
from jackson.runfolder import table_path

REPORTS = Path(__file__).resolve().parent.parent / "reports"
FIGURES = (".png", ".pdf")


def digests(folder: Path) -> dict[str, str]:
    """sha256 of every file under folder that is not a figure, by relative path."""
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and p.suffix not in FIGURES}


@pytest.fixture(scope="module")
def sweep(tmp_path_factory) -> tuple[Path, Path]:
    """A quick two-seed sweep (ranks 2 and inf) and a copy of the figures its run drew."""
    from jackson import run_sweep, sweep_config
    out = tmp_path_factory.mktemp("redraw") / "run"
    run_sweep(sweep_config(quick=True, rank=(2, float("inf")), seeds=(0, 1), out=str(out)),
              "jackson-sweep --quick --rank 2,inf --seeds 0,1", progress=False)
    drawn = out.parent / "drawn"
    drawn.mkdir()
    for p in out.glob("*.png"):
        shutil.copy2(p, drawn / p.name)
    return out, drawn


@pytest.mark.slow
def test_a_redraw_shows_what_the_run_drew_and_writes_only_figures(sweep):
    out, drawn = sweep
    before = digests(out)
    pngs = redraw(out)
    assert sorted(p.name for p in pngs) == sorted(p.name for p in drawn.iterdir())
    assert digests(out) == before                       # no table, summary, report.json or cell rewritten
    for p in pngs:
        assert same_picture(p, drawn / p.name), p.name
        assert_paper_figure(p)
        assert_vector_pdf(p.with_suffix(".pdf"))


@pytest.mark.slow
def test_an_older_folder_redraws_the_same_picture(sweep, tmp_path):
    """Tables without m_ff and a summary whose curves hold only means (as jackson-sweep wrote them before
    --m-ff and the seed bands), learned_spectrum.csv and loss_curves.csv plain (before they were gzipped): the
    medians and bands come from results.csv, and the picture is the run's."""
    out, drawn = sweep
    old = tmp_path / "old"
    shutil.copytree(out, old, ignore=shutil.ignore_patterns("*.png", "*.pdf"))
    for name in ("results.csv", "learned_spectrum.csv", "loss_curves.csv"):
        path = table_path(old, name)           # the run gzipped the last two: an older run wrote them plain
        t = pd.read_csv(path, dtype={"rank": str})
        path.unlink()
        t.drop(columns=["m_ff"]).to_csv(old / name, index=False, float_format="%.6e")
    assert [p.name for p in old.glob("*.csv.gz")] == ["blocks.csv.gz"]       # read by no figure
    s = json.loads((old / "summary.json").read_text())
    for k in ("attention", "features", "m_ff"):
        del s[k]
    for t in s["targets"]:
        del t["m_ff"], t["n_seeds"]
        t["curve"] = [{k: r[k] for k in ("m_h", "train_mse", "test_mse", "test_sd", "oracle_mse",
                                         "oracle_self_exact_mse", "n_seeds", "n_converged")} for r in t["curve"]]
    (old / "summary.json").write_text(json.dumps(s))
    before = digests(old)
    for p in redraw(old):
        assert same_picture(p, drawn / p.name), p.name
        assert_vector_pdf(p.with_suffix(".pdf"))
    assert digests(old) == before


COMMITTED = ["jackson/linear",
             pytest.param("rnn_compare/mixing-24k-b256-s3", marks=pytest.mark.slow),
             pytest.param("vit_probe/sweep_mh", marks=pytest.mark.slow),
             pytest.param("vit_probe/spectra_shared", marks=pytest.mark.slow)]


@pytest.mark.parametrize("rel", COMMITTED)
def test_committed_folders_redraw_without_changing_a_number(rel, tmp_path):
    """A copy of a committed folder: the same figures, each a PNG at 200 dpi of the committed size with a
    vector PDF beside it, and every other file byte for byte as committed."""
    src = REPORTS / rel
    if not src.is_dir():
        pytest.skip(f"reports/{rel} is not in this checkout")
    dst = tmp_path / Path(rel).name
    shutil.copytree(src, dst)
    before = digests(dst)
    assert main(["--threads", "1", str(dst)]) == 0
    assert digests(dst) == before
    for p in sorted(src.glob("*.png")):
        assert_paper_figure(dst / p.name)
        assert_vector_pdf(dst / p.with_suffix(".pdf").name)
        from PIL import Image
        with Image.open(p) as a, Image.open(dst / p.name) as b:
            assert a.size == b.size, p.name


@pytest.mark.slow
def test_a_tasks_folder_redraws_its_four_pictures_and_nothing_else(tmp_path):
    """A copy of a committed jackson-tasks folder: attention, graph, fof and loss_curves drawn again from its files
    (each a PNG at 200 dpi with a PDF beside it, the committed size), every other file byte for byte as it was."""
    src = REPORTS / "tasks" / "nearest-point"
    if not src.is_dir():
        pytest.skip("reports/tasks/nearest-point is not in this checkout")
    dst = tmp_path / src.name
    shutil.copytree(src, dst)
    before = digests(dst)
    assert main(["--threads", "1", str(dst)]) == 0
    assert digests(dst) == before
    from PIL import Image
    for name in ("attention.png", "graph.png", "fof.png", "loss_curves.png"):
        assert_paper_figure(dst / name)
        with Image.open(src / name) as a, Image.open(dst / name) as b:
            assert a.size == b.size, name


@pytest.mark.parametrize("rel, n_seeds", [("jackson/default", 1), ("jackson/long-a1.5-rinf", 2)])
def test_the_error_caption_says_what_error_vs_mh_draws(rel, n_seeds, tmp_path, monkeypatch):
    """Issue 15: error_vs_mh.png draws each target's median over its seeds and, with several seeds, the min-max
    band over them (one seed: its values, no band); report.json's caption and the figure's title say which.
    On a one-seed folder with an older summary (default: no n_seeds) and a two-seed one, redrawn from tables."""
    from matplotlib.collections import PolyCollection
    from jackson.rate_sweep import plots, report
    src = REPORTS / rel
    if not src.is_dir():
        pytest.skip(f"reports/{rel} is not in this checkout")
    kept = keep_figures(monkeypatch, plots)
    tabs, summary = plots.folder_tables(src)
    plots.plot(tmp_path, tabs, summary)
    fig = kept["error_vs_mh.png"]
    caption = next(f["caption"] for f in report.report_hook(src)["figures"] if f["file"] == "error_vs_mh.png")
    (ax,) = fig.axes                        # one alpha, one target in both folders
    trained = [ln for ln in ax.get_lines() if " trained" in ln.get_label()]
    bands = [c for c in ax.collections if isinstance(c, PolyCollection)]
    rows = tabs["rows"]
    assert rows.seed.nunique() == n_seeds and len(trained) == 1
    m_h, drawn = trained[0].get_data()
    assert np.allclose(drawn, rows.groupby("m_h").test_mse.median().loc[m_h])   # the median over seeds
    assert "mean over seeds" not in caption and "bars: sd" not in caption
    if n_seeds == 1:
        assert not bands and trained[0].get_label().endswith("trained, 1 seed")
        legend = " ".join(t.get_text() for t in fig.axes[0].get_legend().get_texts())
        assert "(dots; one seed, no band)" in caption and "band" not in legend
    else:
        (band,) = bands
        y = band.get_paths()[0].vertices[:, 1]
        assert np.isclose(y.min(), rows.test_mse.min()) and np.isclose(y.max(), rows.test_mse.max())
        assert f"median of {n_seeds} seeds" in trained[0].get_label()
        assert f"(dots; median over the {n_seeds} seeds, shaded band: min-max over them)" in caption
        legend = " ".join(t.get_text() for t in fig.axes[0].get_legend().get_texts())
        assert f"median of {n_seeds} seeds (band: min-max)" in legend


def _exit2(args, capsys) -> str:
    with pytest.raises(SystemExit) as e:
        main(args)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("python -m jackson.lab_report.redraw: error:"), err
    return err[0]


def test_bad_input_is_one_line_exit_2(tmp_path, capsys):
    assert "required: FOLDER" in _exit2([], capsys)
    assert "no such folder" in _exit2([str(tmp_path / "nope")], capsys)
    assert "--threads must be >= 1" in _exit2(["--threads", "0", str(tmp_path)], capsys)
    assert "says which command made it" in _exit2([str(tmp_path)], capsys)
    other = tmp_path / "tasks"
    other.mkdir()
    (other / "command.txt").write_text("rnn-mixing-spectrum\n")
    assert "made by 'rnn-mixing-spectrum'; redraw knows" in _exit2([str(other)], capsys)
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "command.txt").write_text("jackson-sweep --quick\n")
    assert "no results.csv" in _exit2([str(empty)], capsys)
    spec = tmp_path / "spectra"
    spec.mkdir()
    (spec / "command.txt").write_text("vit-probe spectra --quick\n")
    for name in ("spectra.csv", "heads.csv", "violin_samples.csv"):
        (spec / name).write_text("layer,head,i,mean\n")
    (spec / "summary.json").write_text("{not json")
    assert "cannot redraw from its files (JSONDecodeError" in _exit2([str(spec)], capsys)
    assert "--report-json: a 'vit-probe spectra' folder's report.json holds texts of the run alone" in _exit2(
        ["--report-json", str(spec)], capsys)
    assert not list(tmp_path.rglob("*.png")) and not list(tmp_path.rglob("*.pdf"))
