"""pyproject.toml says what the code needs: every third-party package a module of the lab imports (at its top or
inside a function) is declared, and no module imports a standard-library module newer than `requires-python`.

The imports are read from the source (ast), so a lazily imported package counts as much as a top-level one; the
import name is mapped to its distribution by the installed metadata (PIL -> pillow, sklearn -> scikit-learn)."""
from __future__ import annotations

import ast
import importlib.metadata as md
import re
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
OWN = tuple(p.rstrip("*") for p in PYPROJECT["tool"]["setuptools"]["packages"]["find"]["include"])

# top-level standard-library modules by the Python release that added them (the "New Modules" sections of the
# What's New pages); 3.12 and 3.13 added none
STDLIB_ADDED = {(3, 11): {"tomllib"}, (3, 12): set(), (3, 13): set(), (3, 14): {"annotationlib", "compression"}}


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def declared() -> set[str]:
    """The distribution names pyproject.toml declares (dependencies, their extras and the optional ones), normalised."""
    reqs = list(PYPROJECT["project"]["dependencies"])
    for extra in PYPROJECT["project"].get("optional-dependencies", {}).values():
        reqs += extra
    out = set()
    for r in reqs:   # "dask[distributed]" declares dask and, through its extra, distributed
        m = re.match(r"([A-Za-z0-9_.\-]+)\s*(?:\[([^\]]*)\])?", r)
        out |= {_norm(m.group(1))} | {_norm(x) for x in (m.group(2) or "").split(",") if x.strip()}
    return out


def floor() -> tuple[int, int]:
    m = re.fullmatch(r">=\s*(\d+)\.(\d+)", PYPROJECT["project"]["requires-python"].strip())
    assert m, PYPROJECT["project"]["requires-python"]
    return int(m.group(1)), int(m.group(2))


def imports() -> dict[str, set[str]]:
    """Top-level module name -> the lab's files that import it (absolute imports only)."""
    found: dict[str, set[str]] = {}
    for pkg in OWN:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Import):
                    mods = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    mods = [node.module]
                else:
                    continue
                for m in mods:
                    found.setdefault(m.split(".")[0], set()).add(str(path.relative_to(ROOT)))
    return found


def undeclared(found: dict[str, set[str]], names: set[str], dists: dict[str, list[str]]) -> list[str]:
    out = []
    for mod, files in sorted(found.items()):
        if mod in sys.stdlib_module_names or mod in OWN:
            continue
        owners = dists.get(mod)
        if not owners:
            out.append(f"{mod} (no installed distribution provides it) in {sorted(files)[0]}")
        elif not any(_norm(d) in names for d in owners):
            out.append(f"{mod} (distribution {owners[0]}) in {sorted(files)[0]}")
    return out


def too_new(found: dict[str, set[str]], low: tuple[int, int]) -> list[str]:
    return [f"{mod} (Python {v[0]}.{v[1]}) in {sorted(found[mod])[0]}"
            for v, mods in STDLIB_ADDED.items() if v > low for mod in sorted(mods) if mod in found]


def test_every_third_party_import_is_declared():
    assert undeclared(imports(), declared(), md.packages_distributions()) == []


def test_no_standard_library_module_newer_than_requires_python():
    assert floor() >= (3, 11)          # tomllib is imported (the claims files)
    assert too_new(imports(), floor()) == []


def test_the_checks_catch_what_they_are_for():
    """Controls: an import the declarations lack, and tomllib under a 3.10 floor, are named."""
    found = {"numpy": {"a.py"}, "yaml": {"b.py"}, "PIL": {"c.py"}, "tomllib": {"d.py"}, "os": {"e.py"}}
    dists = {"numpy": ["numpy"], "yaml": ["PyYAML"], "PIL": ["Pillow"]}
    assert undeclared(found, {"numpy", "pillow"}, dists) == ["yaml (distribution PyYAML) in b.py"]
    assert undeclared({"nosuchmodule": {"f.py"}}, set(), {}) == [
        "nosuchmodule (no installed distribution provides it) in f.py"]
    assert too_new(found, (3, 10)) == ["tomllib (Python 3.11) in d.py"]
    assert too_new(found, (3, 11)) == []


@pytest.mark.parametrize("dist", ["jinja2"])
def test_what_is_needed_without_an_import_is_declared(dist):
    """pandas' to_latex imports jinja2 itself: no module of the lab names it, so the scan above cannot see it."""
    assert _norm(dist) in declared()
    import pandas as pd
    assert "tabular" in pd.DataFrame({"x": [1]}).to_latex()
