"""ARCHITECTURE.md kept true: the core imports no experiment, every code path in the quantity table
resolves, and every library module has a line in the module map.

The import graph is read with `ast` (nothing is imported), so an import inside a function, a relative
import (`from .experiment import x`, `from . import report`) and `importlib.import_module("...")`
with a literal name all count.
"""
from __future__ import annotations

import ast
import dataclasses
import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "ARCHITECTURE.md"

# the shared core: used by every experiment, imports none of them
CORE = ("jackson.config", "jackson.runfolder", "jackson.checkpoint", "jackson.sweep", "jackson.progress", "jackson.expr",
        "jackson.fit", "jackson.schedule", "jackson.models", "jackson.attention", "jackson.pod", "jackson.rates",
        "jackson.figures", "jackson.verdict", "jackson.command", "jackson.column_words", "jackson.hparams", "jackson.threads",
        "jackson.evidence", "jackson.budget", "jackson.quick")
# experiment packages the core must not import (a name or anything under it)
EXPERIMENTS = ("jackson.rate_sweep", "jackson.app_b", "jackson.lab_report", "rnn_compare", "vit_probe", "cot_dp")
LIBRARY = ("jackson", "synthetic", "rnn_compare", "vit_probe", "cot_dp")   # packages whose modules need a line


def section(title: str) -> str:
    """The text of ARCHITECTURE.md under the `## title` heading, up to the next `## ` heading."""
    text = DOC.read_text()
    m = re.search(rf"^## {re.escape(title)}[^\n]*\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert m, f"ARCHITECTURE.md has no '## {title}' section"
    return m.group(1)


def table_rows(text: str) -> list[list[str]]:
    """Cells of the markdown table rows in text (header and separator rows left out)."""
    rows, header_next = [], False
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("|"):
            header_next = True
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if all(re.fullmatch(r":?-+:?", c) for c in cells):
            continue
        if header_next:          # the first row of each table is its header
            header_next = False
            continue
        rows.append(cells)
    return rows


# ---- (a) the import graph of the core ------------------------------------------------------------

def module_file(name: str) -> Path:
    p = ROOT.joinpath(*name.split("."))
    return p / "__init__.py" if p.is_dir() else p.with_suffix(".py")


def imported_names(source: str, module: str, is_package: bool = False) -> set[str]:
    """Every module name `source` (the text of `module`) imports, anywhere in it: absolute, relative
    (resolved against `module`'s package), inside functions, and importlib.import_module("literal")."""
    package = module if is_package else module.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                parts = parts[:max(len(parts) - (node.level - 1), 0)]
                base = ".".join(parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            out.add(base)
            out.update(f"{base}.{a.name}" for a in node.names if a.name != "*")   # `from . import report`
        elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if name in ("import_module", "__import__"):
                out.add(node.args[0].value)
    return out


def forbidden(names: set[str]) -> list[str]:
    return sorted(n for n in names for e in EXPERIMENTS if n == e or n.startswith(e + "."))


@pytest.mark.parametrize("source, hit", [
    ("from .rate_sweep.experiment import SweepConfig", "jackson.rate_sweep.experiment"),
    ("from .rate_sweep.tables import collect", "jackson.rate_sweep.tables"),
    ("from . import lab_report", "jackson.lab_report"),
    ("def f():\n    from .app_b.results import collect\n", "jackson.app_b.results"),
    ("import rnn_compare.models as m", "rnn_compare.models"),
    ("def g():\n    import importlib\n    return importlib.import_module('vit_probe.data')", "vit_probe.data"),
    ("from jackson import app_b", "jackson.app_b"),
    ("from ..cot_dp import sweep", "cot_dp.sweep"),
])
def test_the_import_check_sees_every_kind_of_import(source, hit):
    assert hit in forbidden(imported_names(source, "jackson.fit"))


def test_the_import_check_passes_core_imports():
    src = "from .config import need\nfrom . import runfolder\nimport numpy as np\nfrom .models import ModelConfig\n"
    assert forbidden(imported_names(src, "jackson.fit")) == []


@pytest.mark.parametrize("module", CORE)
def test_core_module_imports_no_experiment(module):
    path = module_file(module)
    assert path.is_file(), f"core module {module} is missing: update CORE here and ARCHITECTURE.md"
    names = imported_names(path.read_text(), module, path.name == "__init__.py")
    bad = forbidden(names)
    assert not bad, f"{module} (core) imports experiment code: {', '.join(bad)}"


@pytest.mark.parametrize("module", CORE)
def test_core_module_imports_no_target(module):
    """The core (models, fit, runner, rates) works on any data: it never needs a `synthetic` target."""
    path = module_file(module)
    names = imported_names(path.read_text(), module, path.name == "__init__.py")
    bad = sorted(n for n in names if n == "synthetic" or n.startswith("synthetic."))
    assert not bad, f"{module} (core) imports a target module: {', '.join(bad)}"


REPORT = "jackson.lab_report"
OWNED = ("jackson.rate_sweep", "jackson.app_b", "rnn_compare", "vit_probe", "cot_dp", "synthetic")


def report_modules() -> list[str]:
    return sorted(".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
                  for p in module_file(REPORT).parent.glob("*.py"))


@pytest.mark.parametrize("module", report_modules())
def test_the_report_imports_no_experiment(module):
    """The report knows run folders, report.json and claims files; the experiments' rules, redraws and report.json
    writers reach it through entry points (pyproject.toml), not imports."""
    path = module_file(module)
    names = imported_names(path.read_text(), module, path.name == "__init__.py")
    bad = sorted(n for n in names for e in OWNED if n == e or n.startswith(e + "."))
    assert not bad, f"{module} (the report) imports experiment code: {', '.join(bad)}"


def test_the_map_marks_exactly_the_core():
    rows = table_rows(section("Module map"))
    marked = {re.sub(r"\.py$", "", row[0].strip("`")).replace("/", ".") for row in rows
              if len(row) >= 3 and row[1].strip("* ").lower() == "core"}
    assert marked == set(CORE)


# the old module names are gone: nothing is kept only for history
OLD = ("jackson.experiment", "jackson.rate_cell", "jackson.given", "jackson.results", "jackson.cli", "jackson.tasks",
       "jackson.task_results", "jackson.task_figures", "jackson.report", "jackson.claims", "jackson.columns")


@pytest.mark.parametrize("old", OLD)
def test_no_compatibility_module_is_left(old):
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(old)


# ---- (b) every code path of the quantity table resolves ------------------------------------------

PATH = re.compile(rf"`((?:{'|'.join(LIBRARY)})(?:\.[A-Za-z_]\w*)*)`")


def resolve(dotted: str):
    """The object at a dotted path: the longest importable module prefix, then attributes; a last part
    that names a dataclass field gives its `dataclasses.Field` (defined with or without a default)."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ModuleNotFoundError:
            continue
        rest = parts[i:]
        break
    else:
        raise AssertionError(f"{dotted}: no importable module")
    for j, name in enumerate(rest):
        fields = {f.name: f for f in dataclasses.fields(obj)} if dataclasses.is_dataclass(obj) else {}
        if j == len(rest) - 1 and name in fields:
            return fields[name]
        if hasattr(obj, name):
            obj = getattr(obj, name)
        else:
            raise AssertionError(f"{dotted}: {'.'.join(parts[:len(parts) - len(rest) + j])} has no '{name}'")
    return obj


def quantity_paths() -> list[tuple[str, str]]:
    out = []
    for row in table_rows(section("Where each quantity of the paper lives")):
        out += [(row[0], p) for cell in row for p in PATH.findall(cell)]
    return out


def test_quantity_table_has_one_place_per_row():
    rows = table_rows(section("Where each quantity of the paper lives"))
    assert len(rows) >= 20
    for row in rows:
        assert len(row) == 4, f"row {row[0]!r}: expected 4 columns (quantity, paper, lives in, notes)"
        assert len(PATH.findall(row[2])) == 1, f"row {row[0]!r}: 'lives in' must name exactly one place"


@pytest.mark.parametrize("quantity, dotted", quantity_paths())
def test_quantity_path_resolves(quantity, dotted):
    resolve(dotted)


def test_resolve_reads_dataclass_fields_and_refuses_missing_names():
    assert resolve("jackson.models.ModelConfig.width").default == 128
    assert resolve("jackson.rate_sweep.cell.RateCell.alpha").name == "alpha"   # a field without a default
    with pytest.raises(AssertionError):
        resolve("jackson.models.ModelConfig.no_such_field")
    with pytest.raises(AssertionError):
        resolve("jackson.no_such_module.x")


# ---- (c) every library module has a line in the module map ---------------------------------------

def library_modules() -> list[str]:
    """Every .py file under the library packages, as a repository path (empty __init__.py left out)."""
    out = []
    for pkg in LIBRARY:
        for p in sorted((ROOT / pkg).rglob("*.py")):
            if p.name == "__init__.py" and not p.read_text().strip():
                continue
            out.append(p.relative_to(ROOT).as_posix())
    return out


@pytest.mark.parametrize("path", library_modules())
def test_module_is_in_the_map(path):
    assert f"`{path}`" in section("Module map"), f"{path} has no line in ARCHITECTURE.md's module map"


def test_the_map_names_no_module_that_is_gone():
    named = set(re.findall(rf"`((?:{'|'.join(LIBRARY)})/[\w/]+\.py)`", section("Module map")))
    gone = sorted(p for p in named if not (ROOT / p).is_file())
    assert not gone, f"ARCHITECTURE.md names modules that do not exist: {gone}"


# ---- (d) no circles, no module over 500 lines --------------------------------------------------------------

def import_graph() -> dict[str, set[str]]:
    """module -> the library modules it imports (anywhere in it; a package's own parents left out)."""
    mods = {}
    for pkg in LIBRARY:
        for p in (ROOT / pkg).rglob("*.py"):
            parts = p.relative_to(ROOT).with_suffix("").parts
            mods[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p
    graph = {}
    for m, p in mods.items():
        deps = set()
        for n in imported_names(p.read_text(), m, p.name == "__init__.py"):
            while n and n not in mods:
                n = n.rpartition(".")[0]
            if n and n != m and not m.startswith(n + "."):
                deps.add(n)
        graph[m] = deps
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]; counter[0] += 1; stack.append(root); on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]; counter[0] += 1; stack.append(w); on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop(); on.discard(w); comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_the_circle_check_finds_a_circle():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_import_circle():
    """No two modules import each other, directly or round a loop, a function-local import included."""
    assert circles(import_graph()) == []


MAX_LINES = 500


def test_no_module_over_500_lines():
    long = {f"{p.relative_to(ROOT)}": n for pkg in LIBRARY for p in (ROOT / pkg).rglob("*.py")
            if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines (split them by responsibility): {long}"
