"""The rules every figure of the lab keeps, checked on a matplotlib Figure before it is saved (tests/test_figure_rules.py):

- **a key for every colour**: each coloured mark (line, marker, scatter point, bar, band, image) has its colour in a
  legend of the figure, in a text of its panel written in that colour (a direct label), or on the colour map of a
  colour bar of the figure; black, white and greys need no key (reference lines, grids);
- **no empty decade**: a log axis ends within a decade of the values drawn (a vertex of a line, a scatter point, a
  bar's end, a band's edge): no whole decade [10^k, 10^(k+1)] lies between a limit and the nearest value drawn
  inside the limits (limits padded past the data, or an axis running on to meet a line that leaves it); a gap
  between two drawn values is data (the distance between two curves);
- **integer ticks on integer axes**: where every data value of an axis is a whole number (m_h, a step, an index),
  each numeric tick label is a plain whole number ("2", not "2.5", "2x10^0" or "10^1");
- **a readable aspect ratio**: each panel's width / height within `PANEL_ASPECT`, the whole figure's within
  `FIGURE_ASPECT` (a row of wide panels reads small on the report's page).
- **one meaning per colour**: two legend entries that read differently (their labels) do not look alike: the same
  colour (any two greys count as one), line style and marker; head 7 in the cycle's grey beside "at init" in grey
  says two things with one look;
- **a marker's owner told by more than its place**: in a panel of two or more keyed colours, an uncoloured (grey or
  black) marker drawn as several sets of one look, one per series, names its series only by where it sits: it takes
  its series' colour;
- **no text over the data**: a text of a panel (a note, an annotation) covers no drawn line, neither a vertex nor a
  point along a segment between two: a note written over the curves it describes hides them (an in-cell number of a
  heatmap is not over a line; a label written at a line's vertex names that point, as a graph's node label does).

`problems(fig)` returns one line per broken rule ([] when the figure keeps them all).
"""
from __future__ import annotations

import math
import re

import numpy as np

PANEL_ASPECT = (0.4, 2.5)       # a panel's width / height, its drawing area (colour bars and axis-free panels aside)
FIGURE_ASPECT = (0.5, 3.0)      # the whole figure's width / height as saved
COLOUR_TOL = 0.02               # two colours are the same when every RGB channel agrees within this
GREY_TOL = 0.03                 # a colour whose channels agree within this is a grey (black and white included)


def _rgb(c) -> tuple[float, float, float] | None:
    from matplotlib.colors import to_rgba
    try:
        r, g, b, a = to_rgba(c)
    except (ValueError, TypeError):
        return None
    return None if a == 0 else (r, g, b)


def _is_grey(rgb) -> bool:
    return max(rgb) - min(rgb) <= GREY_TOL


def _colours(artist) -> list[tuple[float, float, float]]:
    """The colours an artist shows (RGB, transparent ones left out)."""
    from matplotlib.collections import Collection
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    out = []
    if isinstance(artist, Line2D):
        if artist.get_linestyle() not in ("None", "none", "", " ") and artist.get_linewidth() > 0:
            out.append(artist.get_color())
        if artist.get_marker() not in ("None", "none", "", " ", None):
            out += [artist.get_markerfacecolor(), artist.get_markeredgecolor()]
    elif isinstance(artist, Collection):
        if artist.get_array() is None:          # a mapped collection is checked through its colour map
            out += list(artist.get_facecolor())
            if np.any(np.asarray(artist.get_linewidth()) > 0):
                out += list(artist.get_edgecolor())
    elif isinstance(artist, Patch):
        out.append(artist.get_facecolor())
        if artist.get_linewidth() > 0 and artist.get_fill() is False:
            out.append(artist.get_edgecolor())
    return [rgb for rgb in (_rgb(c) for c in out) if rgb is not None]


def _same(a, b) -> bool:
    return all(abs(x - y) <= COLOUR_TOL for x, y in zip(a, b))


def _colorbars(fig) -> list:
    """The colour maps shown by colour bars in the figure."""
    return [ax._colorbar.cmap for ax in fig.axes if getattr(ax, "_colorbar", None) is not None]


def _keyed(fig, ax) -> list[tuple[float, float, float]]:
    """Colours given a meaning: the legends' handles and the panel's coloured texts."""
    keyed = []
    legends = [a.get_legend() for a in fig.axes] + list(fig.legends)
    for leg in legends:
        if leg is None:
            continue
        for h in leg.legend_handles:
            keyed += _colours(h)
        keyed += [rgb for t in leg.get_texts() if (rgb := _rgb(t.get_color())) is not None]
    keyed += [rgb for t in ax.texts if (rgb := _rgb(t.get_color())) is not None]
    return keyed


def _on_cmap(rgb, cmaps) -> bool:
    for cmap in cmaps:
        samples = cmap(np.linspace(0, 1, 256))[:, :3]
        if np.min(np.max(np.abs(samples - np.asarray(rgb)), axis=1)) <= COLOUR_TOL:
            return True
    return False


def _data_artists(ax) -> list:
    from matplotlib.collections import Collection
    return [a for a in [*ax.lines, *ax.collections, *ax.patches]
            if a.get_visible() and (not isinstance(a, Collection) or len(a.get_paths()) or len(a.get_offsets()))]


def key_problems(fig, ax, where: str) -> list[str]:
    cmaps = _colorbars(fig)
    keyed = _keyed(fig, ax)
    out, missing = [], {}
    for a in _data_artists(ax):
        for rgb in _colours(a):
            if not (_is_grey(rgb) or any(_same(rgb, k) for k in keyed) or _on_cmap(rgb, cmaps)):
                missing.setdefault("#%02x%02x%02x" % tuple(round(255 * v) for v in rgb), type(a).__name__)
    if missing:
        out.append(f"{where}: {len(missing)} colour(s) without a key (no legend entry, no text in that colour, "
                   f"no colour bar): " + ", ".join(f"{c} ({k})" for c, k in sorted(missing.items())[:4])
                   + (", ..." if len(missing) > 4 else ""))
    for im in [*ax.images, *[c for c in ax.collections if c.get_array() is not None]]:
        shown = im.get_cmap()(np.linspace(0, 1, 16))[:, :3]
        if all(_is_grey(rgb) for rgb in shown):
            continue                             # drawn in one grey (contour lines in white): no scale to read
        if getattr(im, "colorbar", None) is None and not any(cm.name == im.get_cmap().name for cm in cmaps):
            out.append(f"{where}: {type(im).__name__} mapped through {im.get_cmap().name} has no colour bar")
    return sorted(set(out))


def _values(ax, axis: str) -> np.ndarray:
    """The data values a panel draws along 'x' or 'y': each vertex of a line, scatter point, band edge and bar end.
    Only artists drawn in data coordinates on that axis count (not axhline's x)."""
    from matplotlib.collections import Collection
    from matplotlib.lines import Line2D
    from matplotlib.patches import Rectangle
    i = 0 if axis == "x" else 1
    vals = []
    for a in _data_artists(ax):
        if not a.get_transform().contains_branch_seperately(ax.transData)[i]:
            continue
        if isinstance(a, Line2D):
            vals.append(np.asarray(a.get_xydata(), float)[:, i])
        elif isinstance(a, Collection):
            off = np.asarray(a.get_offsets(), float)
            if len(off) > 1 and a.get_offset_transform().contains_branch_seperately(ax.transData)[i]:
                vals.append(off[:, i])
            else:
                vals += [np.asarray(p.vertices, float)[:, i] for p in a.get_paths() if len(p.vertices)]
        elif isinstance(a, Rectangle):
            x, y, w, h = a.get_x(), a.get_y(), a.get_width(), a.get_height()
            vals.append(np.array([x, x + w] if i == 0 else [y, y + h], float))
    v = np.concatenate(vals) if vals else np.array([])
    return v[np.isfinite(v)]


def decade_problems(ax, where: str) -> list[str]:
    """A whole decade between a log axis's limit and the nearest value drawn inside the limits: the axis padded past
    the data, or running on below (above) its last drawn value to meet a line that leaves it.  A gap between two
    drawn values inside the limits is data (the distance between two curves), not an empty decade."""
    out = []
    for axis in ("x", "y"):
        if (ax.get_xscale() if axis == "x" else ax.get_yscale()) != "log":
            continue
        lo, hi = sorted(ax.get_xlim() if axis == "x" else ax.get_ylim())
        v = _values(ax, axis)
        v = v[(v > 0) & (v >= lo * (1 - 1e-9)) & (v <= hi * (1 + 1e-9))]
        if not len(v):
            out.append(f"{where}: log {axis} axis: nothing drawn inside its limits")
            continue
        vmin, vmax = float(v.min()), float(v.max())
        empty = [k for k in range(math.ceil(math.log10(lo) - 1e-9), math.floor(math.log10(hi) + 1e-9))
                 if 10.0 ** (k + 1) < vmin * (1 - 1e-9) or 10.0 ** k > vmax * (1 + 1e-9)]
        if empty:
            out.append(f"{where}: log {axis} axis: no data in the decade(s) "
                       + ", ".join(f"1e{k}..1e{k + 1}" for k in empty) + " between its limits and the data")
    return out


_NUMERIC = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")


def _label_text(t) -> str:
    s = t.get_text().replace("\u2212", "-").replace("$", "").replace("\\mathdefault", "")
    return s.replace("{", "").replace("}", "").strip()


def tick_problems(fig, ax, where: str) -> list[str]:
    """Call after the figure is drawn (tick labels exist once drawn)."""
    out = []
    for axis, obj in (("x", ax.xaxis), ("y", ax.yaxis)):
        v = _values(ax, axis)
        if not len(v) or not np.all(np.abs(v - np.round(v)) < 1e-9):
            continue                             # not an integer axis
        lo, hi = sorted(ax.get_xlim() if axis == "x" else ax.get_ylim())
        bad = []
        for tick in [*obj.get_major_ticks(), *obj.get_minor_ticks()]:
            lab = tick.label1
            if not lab.get_visible() or not lab.get_text().strip():
                continue
            loc = tick.get_loc()
            if not (lo - 1e-9 <= loc <= hi + 1e-9):
                continue
            s = _label_text(lab)
            numeric = bool(_NUMERIC.match(s)) or "^" in s or "times" in s or "\u00d7" in s
            if numeric and not re.fullmatch(r"-?\d+", s):
                bad.append(lab.get_text())
        if bad:
            out.append(f"{where}: integer {axis} axis with tick labels {sorted(set(bad))}")
    return out


def aspect_problems(fig, where: str) -> list[str]:
    out = []
    w, h = fig.get_size_inches()
    if not FIGURE_ASPECT[0] <= w / h <= FIGURE_ASPECT[1]:
        out.append(f"{where}: figure {w:.1f} x {h:.1f} in: aspect {w / h:.2f} outside {FIGURE_ASPECT}")
    for i, ax in enumerate(fig.axes):
        if not ax.get_visible() or not ax.axison or _is_colorbar(ax):
            continue
        bb = ax.get_window_extent()
        if bb.height <= 0:
            continue
        r = bb.width / bb.height
        if not PANEL_ASPECT[0] <= r <= PANEL_ASPECT[1]:
            out.append(f"{where}: panel {i} ({ax.get_title()!r}) aspect {r:.2f} outside {PANEL_ASPECT}")
    return out


SEGMENT_SAMPLES = 8              # points looked at along each segment of a line, its two ends included


def text_problems(fig, ax, where: str) -> list[str]:
    """A text of `ax` whose box covers a point of a drawn line (in display pixels)."""
    from matplotlib.text import Annotation
    renderer = fig.canvas.get_renderer()
    pts, ends = [], []
    for ln in ax.lines:
        joined = ln.get_linestyle() not in ("None", "none", "")
        if not ln.get_visible() or not joined and ln.get_marker() in (None, "None", "none", ""):
            continue
        xy = np.asarray(ln.get_xydata(), dtype=float)
        xy = ln.get_transform().transform(xy[np.isfinite(xy).all(axis=1)])
        ends.append(xy)
        if len(xy) > 1 and joined:
            f = np.linspace(0, 1, SEGMENT_SAMPLES)[:, None, None]
            xy = (xy[:-1][None] * (1 - f) + xy[1:][None] * f).reshape(-1, 2)
        pts.append(xy)
    if not pts:
        return []
    pts, ends = np.concatenate(pts), np.concatenate(ends)
    box = ax.get_window_extent(renderer)
    pts = pts[(pts[:, 0] >= box.x0) & (pts[:, 0] <= box.x1) & (pts[:, 1] >= box.y0) & (pts[:, 1] <= box.y1)]
    out = []
    for t in ax.texts:
        if not t.get_visible() or not t.get_text().strip():
            continue
        if isinstance(t, Annotation):            # a label of a point of the data: the point it annotates
            at = ax.transData.transform(np.asarray(t.xy, dtype=float)) if t.xycoords == "data" else None
        else:
            at = t.get_transform().transform(np.asarray(t.get_position(), dtype=float))
        if at is not None and (np.abs(ends - at).max(axis=1) <= 1.5).any():
            continue                             # it names a vertex of a line (a graph's node): a label, not a note
        b = t.get_window_extent(renderer)
        n = int(((pts[:, 0] >= b.x0) & (pts[:, 0] <= b.x1) & (pts[:, 1] >= b.y0) & (pts[:, 1] <= b.y1)).sum())
        if n:
            out.append(f"{where}: the text {t.get_text()[:40]!r} covers {n} point(s) of the drawn lines")
    return out


def _is_colorbar(ax) -> bool:
    return getattr(ax, "_colorbar", None) is not None or ax.get_label() == "<colorbar>"


def legend_problems(fig, where: str) -> list[str]:
    """A legend's title names what its entries are; a list of flagged targets is no title."""
    out = []
    for leg in [a.get_legend() for a in fig.axes] + list(fig.legends):
        if leg is not None and leg.get_title().get_text().lower().startswith("flagged"):
            out.append(f"{where}: legend title {leg.get_title().get_text()!r} is a note, not a key")
    return out


def _look(handle) -> tuple | None:
    """What tells a legend entry apart: its colour (greys as one), line style and marker; None without a colour."""
    rgbs = _colours(handle)
    if not rgbs:
        return None
    style = getattr(handle, "_unscaled_dash_pattern", None) or (   # a line's dashes (a custom pattern is "--" too)
        handle.get_linestyle() if hasattr(handle, "get_linestyle") else None)
    if hasattr(handle, "get_marker"):
        marker = handle.get_marker()
    else:                                        # a scatter's handle: its marker is its path
        marker = tuple(np.round(handle.get_paths()[0].vertices, 3).ravel()) if len(handle.get_paths()) else None
    return ("grey" if _is_grey(rgbs[0]) else rgbs[0], str(style), str(marker))


def _alike(a, b) -> bool:
    return a[1:] == b[1:] and (a[0] == b[0] == "grey" or "grey" not in (a[0], b[0]) and _same(a[0], b[0]))


def meaning_problems(fig, where: str) -> list[str]:
    """Two legend entries with different labels and one look."""
    out = []
    for leg in [a.get_legend() for a in fig.axes] + list(fig.legends):
        if leg is None:
            continue
        entries = [(t.get_text(), lk) for h, t in zip(leg.legend_handles, leg.get_texts()) if (lk := _look(h))]
        for i, (la, a) in enumerate(entries):
            for lb, b in entries[i + 1:]:
                if la != lb and _alike(a, b):
                    out.append(f"{where}: legend entries {la!r} and {lb!r} look alike (one colour, style and marker)")
    return out


def owner_problems(fig, ax, where: str) -> list[str]:
    """Uncoloured marker sets of one look repeated beside two or more keyed colours."""
    from matplotlib.collections import PathCollection
    from matplotlib.lines import Line2D
    coloured = {rgb for rgb in _keyed(fig, ax) if not _is_grey(rgb)}
    if len({tuple(round(v, 2) for v in c) for c in coloured}) < 2:
        return []
    groups: dict = {}
    for a in _data_artists(ax):
        rgbs = _colours(a)
        if not rgbs or not all(_is_grey(c) for c in rgbs):
            continue
        if isinstance(a, PathCollection) and len(a.get_offsets()):
            look = ("scatter", tuple(np.round(a.get_paths()[0].vertices, 3).ravel()), tuple(a.get_sizes()[:1]))
        elif isinstance(a, Line2D) and a.get_marker() not in ("None", "none", "", " ", None) \
                and a.get_linestyle() in ("None", "none", "", " "):
            look = ("line", str(a.get_marker()), a.get_markersize())
        else:
            continue
        groups[look] = groups.get(look, 0) + 1
    return [f"{where}: {n} sets of one uncoloured marker beside {len(coloured)} coloured series: each set's owner "
            f"is told only by its place (colour it by its series)" for n in groups.values() if n >= 2]


def problems(fig, name: str = "figure") -> list[str]:
    """Every broken rule of `fig`, one line each."""
    if not hasattr(fig.canvas, "get_renderer"):  # a Figure of its own (jackson.figures) has a base canvas that draws nothing
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        FigureCanvasAgg(fig)
    fig.canvas.draw()                            # tick labels and panel sizes exist once drawn
    out = aspect_problems(fig, name) + legend_problems(fig, name) + meaning_problems(fig, name)
    for i, ax in enumerate(fig.axes):
        if _is_colorbar(ax) or not ax.get_visible():
            continue
        where = f"{name} panel {i} ({ax.get_title()!r})"
        out += key_problems(fig, ax, where) + text_problems(fig, ax, where) + owner_problems(fig, ax, where)
        if ax.axison:                            # a panel drawn without axes (a graph) has no ticks to read
            out += decade_problems(ax, where) + tick_problems(fig, ax, where)
    return out
