"""Drawing and saving a figure, the one way every experiment does it (paper-ready figures, no side effects).

Every plot is drawn inside `figure_style()` (a context manager, or `@figure_style()` on the function that draws):
the lab's one style (paper.mplstyle beside this module) through `matplotlib.style.context`, so the caller's
rcParams are exactly as they were afterwards -- a notebook's settings are never changed by `run_sweep`.  Inside it
`pyplot()` gives the part of matplotlib.pyplot the plots use (`subplots`, `close`, `get_cmap`) on figures that
pyplot does not manage: no backend is chosen, no window opened, nothing left open in the caller's pyplot.
`save(fig, path)` writes the PNG at `DPI` (>= 200) and a vector copy beside it (same stem, `.pdf`), then closes
the figure.  Each file is written to a temporary name beside it and renamed into place, so a process killed at
any instant leaves the old file or the new one, never a truncated one.  A path that already names a vector
format (`.pdf`, `.svg`: `cot-dp mask --png m.pdf`) is written as that file alone.  The lab report embeds the
PNGs; the PDFs are for papers.

No experiment calls `savefig` itself (tests/test_figures.py greps the package sources).
"""
from __future__ import annotations

import contextvars
import os
import types
from contextlib import contextmanager
from pathlib import Path

from .config import need
from . import quick
from .runfolder import replace_via_temp

DPI = 200
VECTOR = (".pdf", ".svg")
STYLE = Path(__file__).with_name("paper.mplstyle")   # the one style of every figure of the lab


_STYLED = contextvars.ContextVar("jackson_figure_style", default=0)   # how many figure_style() are open here


@contextmanager
def figure_style():
    """The lab's style (STYLE) for the figures drawn and saved inside; the rcParams before it are restored on exit,
    also when drawing fails.  `@figure_style()` on a function draws all of it in the style."""
    import matplotlib.style
    token = _STYLED.set(_STYLED.get() + 1)
    try:
        with matplotlib.style.context(STYLE):
            yield
    finally:
        _STYLED.reset(token)


def _subplots(nrows=1, ncols=1, *, sharex=False, sharey=False, squeeze=True, width_ratios=None, height_ratios=None,
              subplot_kw=None, gridspec_kw=None, **fig_kw):
    """matplotlib.pyplot.subplots on a Figure of its own (as pyplot builds it: Figure(**fig_kw).subplots(...))."""
    from matplotlib.figure import Figure
    fig = Figure(**fig_kw)
    return fig, fig.subplots(nrows, ncols, sharex=sharex, sharey=sharey, squeeze=squeeze, width_ratios=width_ratios,
                             height_ratios=height_ratios, subplot_kw=subplot_kw, gridspec_kw=gridspec_kw)


def _close(fig) -> None:
    """Close a figure: one pyplot manages is closed there; one of `_subplots` needs nothing (nothing holds it)."""
    if getattr(fig.canvas, "manager", None) is not None:
        import matplotlib.pyplot as plt
        plt.close(fig)


def _get_cmap(name=None):
    import matplotlib
    return matplotlib.colormaps.get_cmap(name)


_FIGURES = types.SimpleNamespace(subplots=_subplots, close=_close, get_cmap=_get_cmap)


def pyplot():
    """What every plot starts from, inside `figure_style()`: `subplots`, `close` and `get_cmap` as matplotlib.pyplot
    has them, on figures pyplot does not manage.  Outside the style it raises, so no figure is drawn unstyled."""
    if not _STYLED.get():
        raise RuntimeError("jackson.figures.pyplot: draw inside `with figure_style():` (or decorate the drawing "
                           "function with @figure_style()), so the lab's style applies and the caller's rcParams stay")
    return _FIGURES


def series_colours(n: int) -> list:
    """n colours for n series that mean different things, none of them a grey (greys are the lab's references and
    controls): the colour cycle's tab10 without its grey, then tab20's, then evenly spaced along turbo."""
    import matplotlib
    from matplotlib.colors import to_rgb
    for name in ("tab10", "tab20"):
        cols = [c for c in matplotlib.colormaps[name].colors if max(to_rgb(c)) - min(to_rgb(c)) > 0.05]
        if n <= len(cols):
            return cols[:n]
    return [matplotlib.colormaps["turbo"](x) for x in [0.05 + 0.9 * i / max(n - 1, 1) for i in range(n)]]


def integer_ticks(axis, values) -> None:
    """Tick an axis whose values are whole numbers (m_h, an index i, a step) at whole numbers, printed plainly ("8",
    never "8.0", "10^1" or "2x10^0").  A log axis is ticked at the powers of two within the values' range (1, 2, 4,
    8, ...; powers of ten over more than seven doublings), its minor ticks unlabelled; a linear one at whole
    numbers only.  Call it after the axis's scale is set."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, MaxNLocator, NullFormatter
    vals = sorted({int(round(float(v))) for v in values})
    if axis.get_scale() == "log":
        vals = [v for v in vals if v > 0]
        if not vals:
            return
        lo, hi = vals[0], vals[-1]
        base = 2 if hi / lo <= 2 ** 7 else 10
        ticks = [base ** k for k in range(0, 64) if lo <= base ** k <= hi]
        if len(ticks) < 2:
            ticks = vals if len(vals) <= 8 else [lo, hi]
        axis.set_major_locator(FixedLocator(ticks))
        axis.set_minor_formatter(NullFormatter())
    else:
        axis.set_major_locator(MaxNLocator(integer=True))
    axis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:.0f}"))


def vector_path(path: Path | str) -> Path:
    """Where `save` puts the vector copy of a PNG: the same stem with `.pdf`."""
    return Path(path).with_suffix(".pdf")


def save(fig, path: Path | str, **kwargs) -> list[Path]:
    """Write `fig` to `path` (PNG at >= DPI dpi) and its vector copy beside it; close the figure.

    kwargs go to `savefig` for both files (e.g. bbox_inches="tight").  Returns the paths written.  The style's
    save settings (tight box, padding) apply however the figure was drawn; the caller's rcParams stay as they were.
    The figure is closed even when writing fails (the OSError propagates)."""
    path = Path(path)
    kwargs["dpi"] = max(int(kwargs.get("dpi") or DPI), DPI)
    if quick.figure_of_quick_run(path):   # a quick run's figure says so in its title
        _mark_quick(fig)
    try:
        with figure_style():
            if path.suffix.lower() in VECTOR:
                _atomic(fig, path, path.suffix[1:].lower(), kwargs)
                return [path]
            _atomic(fig, path, path.suffix[1:].lower() or "png", kwargs)
            vec = vector_path(path)
            _atomic(fig, vec, "pdf", {"metadata": {"CreationDate": None}, **kwargs})   # no date: reruns compare equal
            return [path, vec]
    finally:
        _close(fig)


def _mark_quick(fig) -> None:
    """"[quick run]" in front of the figure's title (its suptitle, else its first panel's)."""
    title = fig._suptitle if fig._suptitle is not None else (fig.axes[0].title if fig.axes else None)
    if title is not None and not title.get_text().startswith(quick.TAG):
        title.set_text(f"{quick.TAG} {title.get_text()}".strip())


def _atomic(fig, path: Path, fmt: str, kwargs: dict) -> None:
    """fig.savefig through a temporary file beside `path` and a rename (jackson.runfolder.replace_via_temp)."""
    replace_via_temp(path, lambda tmp: fig.savefig(tmp, format=fmt, **kwargs))


def check_figure_file(path: str | os.PathLike, force: bool, option: str = "--png") -> list[Path]:
    """The files `jackson.figures.save` writes for `path` (a PNG and its .pdf copy beside it; a .pdf or .svg
    alone), checked before anything is computed: one that exists already is refused in one line unless `force`
    (then it is replaced, a symbolic link included, never written through), and a folder or other non-file in
    its place is refused even then."""
    path = Path(path)
    files = [path] if path.suffix.lower() in VECTOR else [path, vector_path(path)]
    for f in files:
        twin = "" if f == path else f" (the figure's .pdf copy, written beside {path.name})"
        need(f.is_symlink() or not f.exists() or f.is_file(), f"{option}: {f}{twin} exists and is not a file")
        need(force or not (f.exists() or f.is_symlink()),
             f"{option}: {f}{twin} exists; give --force to replace it, or another file name")
    return files
