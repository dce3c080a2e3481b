"""Figures checked by test: a key for every colour, no empty decade on a log axis, integer ticks on integer axes, a
readable aspect ratio and no note for a legend title (the rules and their ranges: tests/figure_rules.py).  First the
checker itself on figures built to break one rule each, then the experiments' figures drawn from tiny tables."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from figure_rules import FIGURE_ASPECT, PANEL_ASPECT, problems
from jackson.figures import figure_style, integer_ticks, pyplot


@pytest.fixture
def plt():
    with figure_style():             # the lab draws only inside its style context (jackson.figures)
        yield pyplot()               # its figures are Figures of their own: nothing to close


# ---- the checker, one rule at a time ------------------------------------------------------------------------

def test_a_colour_needs_a_legend_entry_a_text_or_a_colour_bar(plt):
    fig, ax = plt.subplots(figsize=(5, 4))
    ax.plot([0.5, 1.5, 2.5], [0.5, 1.5, 2.5], color="C1")
    ax.plot([0.5, 1.5, 2.5], [2.5, 1.5, 0.5], color="0.5")                 # grey: a reference, needs no key
    assert any("without a key" in p for p in problems(fig))
    ax.legend(handles=[ax.lines[0]], labels=["mine"])
    assert problems(fig) == []
    fig, ax = plt.subplots(figsize=(5, 4))
    cmap = plt.get_cmap("viridis")
    ax.plot([0.1, 0.9], [0.1, 0.9], color=cmap(0.3))
    assert any("without a key" in p for p in problems(fig))
    from matplotlib.cm import ScalarMappable
    fig.colorbar(ScalarMappable(cmap=cmap), ax=ax)
    assert problems(fig) == []
    fig, ax = plt.subplots(figsize=(5, 4))
    ax.imshow(np.eye(3))
    assert any("no colour bar" in p for p in problems(fig))


def test_a_log_axis_has_no_decade_that_nothing_reaches(plt):
    fig, ax = plt.subplots(figsize=(5, 4))
    ax.plot([0.5, 1.5, 2.5], [1.0, 0.3, 0.2], "k-")
    ax.set(yscale="log", ylim=(1e-5, 2))                         # padded four decades below the data
    (p,) = problems(fig)
    assert "1e-5..1e-4" in p and "1e-2..1e-1" in p and "1e-1..1e0" not in p
    ax.set_ylim(0.1, 2)
    assert problems(fig) == []
    fig, ax = plt.subplots(figsize=(5, 4))
    ax.plot([0.5, 1.5, 2.5], [1.0, 2e-5, 1e-16], "k-")                # a gap between two drawn values is data ...
    ax.set(yscale="log", ylim=(1e-8, 2))                         # ... an axis run on to meet a line leaving it is not
    (p,) = problems(fig)
    assert "1e-8..1e-7" in p and "1e-6..1e-5" in p and "1e-4..1e-3" not in p


def test_an_integer_axis_prints_whole_numbers(plt):
    fig, ax = plt.subplots(figsize=(5, 4))
    ax.plot([1, 2, 3], [0.5, 0.25, 0.15], "k-")
    ax.set(xscale="log")
    ax.set_xticks([1, 2, 3], labels=["$\\mathdefault{10^{0}}$", "$\\mathdefault{2\\times10^{0}}$",
                                     "$\\mathdefault{3\\times10^{0}}$"])   # as matplotlib's log axis prints them by default
    assert any("integer x axis" in p for p in problems(fig))    # 10^0 and 2x10^0 ticks
    fig, ax = plt.subplots(figsize=(5, 4))
    ax.plot([1, 2, 3], [0.5, 0.25, 0.15], "k-")
    ax.set(xscale="log")
    integer_ticks(ax.xaxis, [1, 2, 3])
    assert problems(fig) == []
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "2"]
    fig, ax = plt.subplots(figsize=(5, 4))
    ax.plot([1, 2, 3, 4], [0.5, 0.25, 0.15, 0.2], "k-")
    ax.set_xticks([1, 1.5, 2, 2.5, 3, 3.5, 4])                 # a linear axis's half steps, as matplotlib may place them
    assert any("integer x axis" in p for p in problems(fig))
    fig, ax = plt.subplots(figsize=(5, 4))
    ax.plot([1, 2, 3, 4], [0.5, 0.25, 0.15, 0.2], "k-")
    integer_ticks(ax.xaxis, [1, 2, 3, 4])
    assert problems(fig) == []


def test_integer_ticks_on_log_axes_are_powers_of_two_or_ten(plt):
    fig, ax = plt.subplots(figsize=(5, 4))
    ax.plot([1, 16], [0.5, 0.5], "k-")
    ax.set(xscale="log")
    integer_ticks(ax.xaxis, range(1, 17))
    fig.canvas.draw()
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "2", "4", "8", "16"]
    ax.set_xlim(1, 4096)
    integer_ticks(ax.xaxis, [1, 4096])
    fig.canvas.draw()
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "10", "100", "1000"]


def test_aspect_ratio_and_legend_title(plt):
    fig, axes = plt.subplots(1, 4, figsize=(15.2, 4.0))
    for ax in axes:
        ax.plot([0.1, 0.9], [0.1, 0.9], "k-")
    assert any(f"aspect 3.80 outside {FIGURE_ASPECT}" in p for p in problems(fig))
    fig, ax = plt.subplots(figsize=(12, 3))
    ax.plot([0.1, 0.9], [0.1, 0.9], "k-")
    assert any(f"outside {PANEL_ASPECT}" in p and "panel 0" in p for p in problems(fig))
    fig, ax = plt.subplots(figsize=(5, 4))
    ax.plot([0.1, 0.9], [0.1, 0.9], "k-", label="x")
    ax.legend(title="flagged: r=inf, alpha 0.55")
    assert any("is a note, not a key" in p for p in problems(fig))


def test_one_look_has_one_meaning(plt):
    """Two legend entries that say different things look different; greys are one colour to a reader."""
    fig, ax = plt.subplots(figsize=(5, 4))
    ax.plot([1, 2], [1, 2], color="#7f7f7f", lw=1.4, label="head 7")
    ax.plot([1, 2], [2, 1], color="0.6", lw=0.7, label="at init (every head)")
    ax.legend()
    assert any("'head 7' and 'at init (every head)' look alike" in p for p in problems(fig))
    fig, ax = plt.subplots(figsize=(5, 4))                      # the control: a dashed grey reads apart
    ax.plot([1, 2], [1, 2], color="C0", label="head 7")
    ax.plot([1, 2], [2, 1], color="0.6", ls="--", label="at init (every head)")
    ax.plot([1, 2], [1.5, 1.5], color="0.3", label="the bound")
    ax.legend()
    assert not any("look alike" in p for p in problems(fig))


def test_a_marker_names_its_series_by_more_than_its_place(plt):
    """The paper's value drawn as a black diamond beside each model's points: whose is which only its place tells."""
    def chart(paper_colour):
        fig, ax = plt.subplots(figsize=(5, 4))
        for j, m in enumerate(["RNN", "Transformer"]):
            ax.scatter([1 + 0.3 * j, 2 + 0.3 * j], [1, 2], color=f"C{j}", label=m)
            ax.scatter([1.1 + 0.3 * j, 2.1 + 0.3 * j], [1.2, 2.2], marker="D",
                       color=paper_colour or f"C{j}", edgecolor="k", label=f"{m}: the paper's value")
        ax.legend()
        return problems(fig)
    assert any("2 sets of one uncoloured marker beside 2 coloured series" in p for p in chart("k"))
    assert chart(None) == []                                    # the control: each diamond in its model's colour
    fig, ax = plt.subplots(figsize=(5, 4))                      # one uncoloured reference set is no owner question
    ax.scatter([1, 2], [1, 2], color="C0", label="a")
    ax.scatter([1, 2], [2, 1], color="C1", label="b")
    ax.scatter([1.5], [1.5], color="k", marker="D", label="the paper")
    ax.legend()
    assert problems(fig) == []


def test_a_text_covers_no_drawn_line(plt):
    fig, ax = plt.subplots(figsize=(5, 4))
    ax.plot([0.5, 1.5, 2.5], [0.5, 1.5, 2.5], "C0-", label="mine")
    ax.set(xlim=(0.4, 2.6), ylim=(0.4, 2.6))
    ax.legend(loc="lower right")
    note = ax.text(0.45, 0.5, "a note over the line", transform=ax.transAxes, ha="center", va="center")
    (p,) = problems(fig)
    assert "'a note over the line' covers" in p
    note.set_position((0.5, 0.9))                    # above the diagonal's middle, clear of it
    assert problems(fig) == []
    y = 0.4 + 0.9 * 2.2                              # the note's height in data units
    ax.plot([0.5, 2.5], [y, y], "C0-")               # a segment under it whose two ends lie outside it: covered
    (p,) = problems(fig)
    assert "'a note over the line' covers" in p
    fig, ax = plt.subplots(figsize=(5, 4))
    ax.plot([0.5, 1.5, 2.5], [0.5, 1.5, 2.5], "C0-", label="mine")
    ax.legend(loc="lower right")
    ax.annotate("written under the x label", xy=(0.5, 0), xycoords=ax.xaxis.label, xytext=(0, -3),
                textcoords="offset points", va="top", ha="center")
    assert problems(fig) == []


# ---- the experiments' figures, drawn from tiny tables -------------------------------------------------------

@pytest.fixture
def checked(monkeypatch):
    """Every figure handed to jackson.figures.save (through any module) checked where it would be written, and not
    written (the files are not what these tests read): {file name: its problems}."""
    import jackson.figures as jf
    found = {}

    def atomic(fig, path, fmt, kwargs):
        if fmt != "pdf":
            found[Path(path).name] = problems(fig, Path(path).name)
    monkeypatch.setattr(jf, "_atomic", atomic)
    return found


@pytest.fixture(scope="module")
def tiny_sweep(tmp_path_factory):
    """A seconds-long sweep of three alphas (the panel row that used to be 3.8:1), ranks 2 and inf, m_h 1, 2, 4."""
    from jackson.rate_sweep.config import sweep_config
    from jackson.rate_sweep.experiment import run_sweep
    import jackson.figures as jf
    out = tmp_path_factory.mktemp("sweep") / "run"
    cfg = sweep_config(quick=True, alpha=(0.55, 1.0, 1.5), rank=(2, math.inf), m_h=(1, 2, 4), fit_range=(1, 4),
                       fit={"steps": 8, "eval_every": 4}, out=str(out))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(jf, "_atomic", lambda *a: None)         # its tables are what the tests read, not its figures
        run_sweep(cfg, "jackson-sweep --quick (test)", progress=False)
    return out


def test_sweep_figures_keep_the_rules(tiny_sweep, tmp_path, checked):
    from jackson.rate_sweep import plots
    tabs, summary = plots.folder_tables(tiny_sweep)
    t = summary["targets"][-1]                   # one target flagged, as a degenerate or uninformative fit is
    t["degenerate"] = {**t.get("degenerate", {}), "flag": True,
                       "why": "UNINFORMATIVE fit: the uniform predictor's MSE 1 is within 3x of the best trained 1"}
    plots.plot(tmp_path, tabs, summary)
    assert set(checked) == {"error_vs_mh.png", "learned_spectrum.png", "loss_curves.png"}
    assert checked == {k: [] for k in checked}


def test_the_terms_line_is_written_under_its_panel_not_over_the_curves(tiny_sweep, tmp_path, checked, monkeypatch):
    """Each panel names the term of Eq. (17) that limits each curve (`terms_short`); that text sits under the
    panel's x label, where it hides no curve, and says what the summary says."""
    from jackson.rate_sweep import plots
    from jackson.rate_sweep.summary_text import terms_short
    kept = {}
    tabs, summary = plots.folder_tables(tiny_sweep)
    for t in summary["targets"]:
        ms = [r["m_h"] for r in t["curve"]]
        t["terms"] = {"rows": [{"m_h": m, "e_full": 1e-3 / m, "e_attn": 9e-4 / m, "e_ff": 1e-5, "limiting": "attention"}
                               for m in ms], "ratio_range": [0.9, 1.1]}
    real_save = plots.save

    def save(fig, path, **kw):                       # kept for a look, and saved as ever (so `checked` sees it)
        kept[Path(path).name] = fig
        return real_save(fig, path, **kw)
    monkeypatch.setattr(plots, "save", save)
    plots.plot(tmp_path, tabs, summary)
    assert checked["error_vs_mh.png"] == []
    fig = kept["error_vs_mh.png"]
    r = fig.canvas.get_renderer()
    panels = [ax for ax in fig.axes if ax.get_visible() and ax.axison]
    for ax in panels:
        (note,) = [t for t in ax.texts if "limited by" in t.get_text()]
        assert note.get_window_extent(r).y1 < ax.get_window_extent(r).y0       # below the drawing area
        a = float(ax.get_title().split("= ")[1].split("\n")[0])
        want = [f"r={t['rank']}: " + terms_short(t["terms"]) for t in summary["targets"] if t["alpha"] == a]
        assert " ".join(note.get_text().split()) == " ".join(" ".join(want).split())


def test_the_flag_is_said_in_its_panel_not_as_the_legend_title(tiny_sweep, tmp_path, monkeypatch):
    from jackson.rate_sweep import plots
    kept = {}
    monkeypatch.setattr(plots, "save", lambda fig, path, **kw: kept.setdefault(Path(path).name, fig))
    tabs, summary = plots.folder_tables(tiny_sweep)
    for other in summary["targets"]:                 # so tiny a fit is flagged itself: one flag, set here
        other["degenerate"] = {"flag": False, "why": ""}
    t = summary["targets"][-1]
    t["degenerate"] = {"flag": True, "why": "DEGENERATE target: x; UNINFORMATIVE fit: y"}
    plots.plot(tmp_path, tabs, summary)
    fig = kept["error_vs_mh.png"]
    titles = [ax.get_title() for ax in fig.axes if ax.get_visible() and ax.axison]
    flagged = [s for s in titles if "flagged" in s]
    assert flagged == [f"$\\alpha$ = {t['alpha']:g}\n(flagged r={t['rank']}: degenerate target; uninformative fit)"]
    (legend,) = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    assert legend.get_title().get_text() == ""
    w, h = fig.get_size_inches()
    assert w / h <= FIGURE_ASPECT[1]                 # three alphas: two panels a row, the key in the fourth place


def test_coupling_spectra_end_a_decade_below_the_smallest_nonzero_value(tmp_path, checked):
    from rnn_compare.coupling import plot_coupling
    i = np.arange(1, 13)
    original = 0.9 ** i
    mixed = np.where(i < 10, 0.95 ** i, np.where(i < 12, 3e-5, 1e-17))     # a cliff, then numerically zero
    spec = pd.DataFrame({"kernel": "exp", "alteration": ["original"] * 12 + ["mixed"] * 12, "i": list(i) * 2,
                         "sigma": np.r_[original, mixed]})
    plot_coupling(tmp_path, spec)
    assert checked == {"coupling_spectra.png": []}


def _task_example(task, seed=0):
    """A held-out instance of `task` and a learned attention (the target's, blurred): what example.json holds."""
    from jackson.app_b.cell import pick_example
    te = task.sample(8, seed)
    i = pick_example(task, te)
    S = np.asarray(te.select[i], float)
    A = 0.7 * S + 0.3 / S.shape[1]
    return {"index": i, "x": te.x[i].tolist(), "y": te.y[i].tolist(), "y_hat": te.y[i].tolist(), "A": A.tolist(),
            "S": S.tolist(), "kinds": task.row_kinds(te.x)[i].tolist()}


@pytest.mark.parametrize("name", ["nearest-point", "weighted-average", "selection-average"])
def test_task_figures_keep_the_rules(name, tmp_path, checked):
    from jackson.app_b.config import RUNS
    from jackson.app_b.figures import plot_task
    task = RUNS[name]().task
    ex = _task_example(task)
    rng = np.random.default_rng(0)
    d = task.d_out
    fof = pd.DataFrame({"position": np.arange(40) % 4,
                        **{f"fof_{j}": rng.normal(size=40) for j in range(d)}})
    for j in range(d):
        fof[f"fof_hat_{j}"] = fof[f"fof_{j}"] + 0.1 * rng.normal(size=40)
    grid = None
    if name == "weighted-average":
        g = np.linspace(-1, 1, 5)
        X, Y = np.meshgrid(g, g)
        grid = pd.DataFrame({"x1": X.ravel(), "x2": Y.ravel(), "fof": np.hypot(X, Y).ravel(),
                             "fof_hat": np.hypot(X, Y).ravel() + 0.05})
    curves = pd.DataFrame({"seed": [0] * 5 + [1] * 5, "step": list(range(0, 50, 10)) * 2,
                           "train_mse": np.r_[np.geomspace(1, 0.02, 5), np.geomspace(0.8, 0.03, 5)]})
    plot_task(tmp_path, task, ex, fof, grid, curves, 0)
    assert set(checked) == {"attention.png", "graph.png", "fof.png", "loss_curves.png"}
    assert checked == {k: [] for k in checked}


def test_every_entry_point_of_pyproject_names_a_function_that_exists():
    """pyproject.toml's entry points as written (not as some install recorded them): each module imports and has the
    named function, so `python -m jackson.lab_report.redraw` finds every experiment's redraw (rnn-compare's had
    moved to rnn_compare.tables)."""
    import importlib
    import tomllib
    proj = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())["project"]
    groups = {"console_scripts": proj.get("scripts", {}), **proj.get("entry-points", {})}
    missing = []
    for group, eps in groups.items():
        for name, value in eps.items():
            mod, _, attr = value.partition(":")             # a module alone (the rules groups) or module:function
            if not hasattr(importlib.import_module(mod), attr or "__name__"):
                missing.append(f"[{group}] {name} = {value}")
    assert missing == []


@pytest.mark.parametrize("n_layers", [4, 6])
def test_trained_vs_init_keeps_the_rules_with_eight_heads(n_layers, tmp_path, checked):
    """vit-probe's control figure: 8 heads (the 8th used to take the colour cycle's grey, the init control's colour)
    and 6 layers (they used to be one 6:1 strip)."""
    from vit_probe.spectra import plot_trained_vs_init
    i = np.arange(1, 33)
    spec = pd.DataFrame([{"layer": l, "head": h, "i": k, "mean": (1 + h) * k ** -(1.0 + 0.1 * h)}
                         for l in range(n_layers) for h in range(8) for k in i])
    init = pd.DataFrame([{"layer": l, "init": s, "head": h, "i": k, "mean": k ** -0.8}
                         for l in range(n_layers) for s in range(2) for h in range(8) for k in i])
    plot_trained_vs_init(spec, init, 32, "a trained ViT against its inits", tmp_path / "trained_vs_init.png")
    assert checked == {"trained_vs_init.png": []}


def test_the_rnn_chart_keeps_the_rules_on_a_committed_folder(tmp_path, checked):
    """Tables 2-3's chart drawn from a committed folder's tables: each paper diamond in its model's colour."""
    from rnn_compare.tables import plot
    folder = Path(__file__).resolve().parents[1] / "reports" / "rnn_compare" / "mixing-24k-b256-s3"
    plot(tmp_path, pd.read_csv(folder / "tables_long.csv"), rows=pd.read_csv(folder / "results.csv"))
    assert checked == {"mse_bars.png": []}
