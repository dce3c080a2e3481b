"""A quick run says so in its printed result, under the heading of its summary.md and in its figures' titles (a
redraw's too); a run that is not quick (or whose config says "quick": "true", not the bool) is never marked."""
from __future__ import annotations

import pytest

from jackson import quick
from jackson.figures import pyplot, figure_style, save
from jackson.runfolder import open_run


def _draw(folder, title: str | None, panel: str):
    with figure_style():
        fig, ax = pyplot().subplots()
        ax.set_title(panel)
        if title:
            fig.suptitle(title)
        save(fig, folder / "f.png")
    return fig


@pytest.mark.parametrize("flag, marked", [(True, True), (False, False), ("true", False), (None, False)])
def test_the_mark_follows_the_resolved_config(tmp_path, flag, marked):
    out = tmp_path / "run"
    with open_run(out, "jackson-sweep", "jackson-sweep --out run", {"quick": flag}) as o:
        (o / "summary.md").write_text("# summary\ntext\n")
        with_sup = _draw(o, "the figure", "a panel")
        without = _draw(o, None, "a panel")
    tag = f"{quick.TAG} "
    assert with_sup._suptitle.get_text() == (tag if marked else "") + "the figure"
    assert with_sup.axes[0].get_title() == "a panel"                  # one tag per figure, on its title
    assert without.axes[0].get_title() == (tag if marked else "") + "a panel"
    assert (out / "summary.md").read_text() == "# summary\n" + (f"\n> {quick.NOTE}\n\n" if marked else "") + "text\n"
    again = _draw(out, "redrawn", "p")                                 # a redraw into the folder later: tagged too
    assert again._suptitle.get_text() == (tag if marked else "") + "redrawn"
    other = _draw(tmp_path, "outside", "p")                            # a folder that holds no quick run
    assert other._suptitle.get_text() == "outside"


@pytest.mark.slow
def test_jackson_sweep_quick_says_quick_where_it_is_read(tmp_path, capsys):
    from jackson.rate_sweep.cli import sweep_main
    out = tmp_path / "q"
    assert sweep_main(["--quick", "--m-h", "1,2", "--steps", "6", "--threads", "1", "--out", str(out)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed.index(quick.NOTE) < printed.index(f"results: {out}/results.csv, summary.md (softmax, learned "
                                                    "features)")      # before the result
    results = [line for line in printed if line.startswith(f"{quick.TAG} alpha=")]
    assert results and all(": exponent " in line for line in results)
    assert (out / "summary.md").read_text().split("\n")[:3] == ["# jackson-sweep summary (softmax attention, "
                                                                "learned features)", "", f"> {quick.NOTE}"]
    # run again: the note is not doubled, and the folder is as it was
    before = (out / "summary.md").read_text()
    assert sweep_main(["--quick", "--m-h", "1,2", "--steps", "6", "--threads", "1", "--out", str(out)]) == 0
    assert (out / "summary.md").read_text() == before
