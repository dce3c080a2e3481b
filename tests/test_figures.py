"""jackson/figures.py: every figure an experiment writes goes through `save` (PNG >= 200 dpi + a PDF beside
it, figure closed); no package module calls `savefig` itself."""
from __future__ import annotations

import re
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from conftest import assert_paper_figure  # noqa: E402
from jackson.figures import DPI, save  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("jackson", "synthetic", "rnn_compare", "vit_probe", "cot_dp")


def _fig():
    fig, ax = plt.subplots(figsize=(2, 1.5))
    ax.plot([1, 2, 3], [3, 1, 2])
    return fig


def test_no_package_module_calls_savefig_itself():
    """The one place a figure is written is jackson/figures.py (so every figure gets its dpi and its PDF)."""
    helper = ROOT / "jackson" / "figures.py"
    offenders = []
    for pkg in PACKAGES:
        for p in sorted((ROOT / pkg).rglob("*.py")):
            if p == helper:
                continue
            for n, line in enumerate(p.read_text().splitlines(), 1):
                if re.search(r"\bsavefig\b|\.print_figure\(|\bimsave\(", line):
                    offenders.append(f"{p.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not offenders, "use jackson.figures.save:\n" + "\n".join(offenders)


def test_save_writes_png_at_200_dpi_and_a_pdf_beside_and_closes(tmp_path):
    fig = _fig()
    paths = save(fig, tmp_path / "a.png")
    assert paths == [tmp_path / "a.png", tmp_path / "a.pdf"]
    assert_paper_figure(tmp_path / "a.png")
    assert not plt.fignum_exists(fig.number)
    assert DPI >= 200


def test_a_lower_dpi_asked_for_is_raised_to_200(tmp_path):
    save(_fig(), tmp_path / "b.png", dpi=72, bbox_inches="tight")
    assert_paper_figure(tmp_path / "b.png")


def test_the_pdf_has_no_creation_date_so_reruns_compare_equal(tmp_path):
    save(_fig(), tmp_path / "a.png")
    save(_fig(), tmp_path / "b.png")
    assert (tmp_path / "a.pdf").read_bytes() == (tmp_path / "b.pdf").read_bytes()


@pytest.mark.parametrize("name, magic", [("m.pdf", b"%PDF"), ("m.svg", b"<?xml")])
def test_a_vector_path_is_written_alone(tmp_path, name, magic):
    """`cot-dp mask --png m.pdf`: the file asked for, no PNG invented beside it."""
    assert save(_fig(), tmp_path / name) == [tmp_path / name]
    assert (tmp_path / name).read_bytes()[:len(magic)] == magic
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


def test_a_failed_write_still_closes_the_figure(tmp_path):
    fig = _fig()
    with pytest.raises(OSError):
        save(fig, tmp_path / "no_such_folder" / "a.png")
    assert not plt.fignum_exists(fig.number)


def test_the_style_is_a_context_the_callers_settings_survive_even_a_failed_drawing(tmp_path):
    """figure_style() applies paper.mplstyle inside and restores every rcParam after, also when drawing raises;
    pyplot() outside it refuses (no figure is drawn unstyled), and its figures are not pyplot's."""
    from jackson.figures import figure_style, pyplot
    matplotlib.rcParams["lines.linewidth"] = 2.5
    before = dict(matplotlib.rcParams)
    with figure_style():
        assert matplotlib.rcParams["lines.linewidth"] == 1.3 and matplotlib.rcParams["savefig.bbox"] == "tight"
        fig, ax = pyplot().subplots(figsize=(2, 1.5))
        ax.plot([1, 2], [2, 1])
        n_open = len(plt.get_fignums())
        save(fig, tmp_path / "c.png")
    assert n_open == len(plt.get_fignums())            # not one of pyplot's figures
    with pytest.raises(ZeroDivisionError):
        with figure_style():
            1 / 0
    assert dict(matplotlib.rcParams) == before
    with pytest.raises(RuntimeError, match="figure_style"):
        pyplot()
    assert_paper_figure(tmp_path / "c.png")


def test_every_drawing_function_draws_inside_the_style():
    """Each public package function that calls pyplot() (or app_b's _plt()) is decorated with @figure_style() or
    calls it inside `with figure_style():`, so no figure is drawn unstyled and none changes the caller's rcParams
    (a private helper is called by such a function; pyplot() refuses outside the style at run time)."""
    import ast
    bare = []
    for pkg in PACKAGES:
        for p in sorted((ROOT / pkg).rglob("*.py")):
            tree = ast.parse(p.read_text())
            for fn in ast.walk(tree):
                if not isinstance(fn, ast.FunctionDef) or fn.name.startswith("_") or fn.name == "pyplot":
                    continue
                calls = {n.func.id for n in ast.walk(fn) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
                if not calls & {"pyplot", "_plt"}:
                    continue
                styled = any("figure_style" in ast.unparse(d) for d in fn.decorator_list) or any(
                    isinstance(w, ast.With) and "figure_style" in ast.unparse(w) for w in ast.walk(fn))
                if not styled:
                    bare.append(f"{p.relative_to(ROOT)}:{fn.lineno} {fn.name}")
    assert not bare, "draw inside figure_style():\n" + "\n".join(bare)
