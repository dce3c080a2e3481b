"""The README's "Use it from Python" section runs as written (its ```python blocks, in order, in one
namespace, in a scratch folder), and `import jackson` is documented and light."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"


PYTHON_DOC = README.parent / "docs" / "python.md"


def python_blocks() -> list[str]:
    """The README's "Use it from Python" blocks, then docs/python.md's, in order."""
    text = README.read_text()
    sec = text[text.index("## Use it from Python"):]
    sec = sec[:sec.index("\n## ", 1)]
    return re.findall(r"```python\n(.*?)```", sec + PYTHON_DOC.read_text(), re.S)


@pytest.mark.slow
def test_use_it_from_python_runs(tmp_path, monkeypatch, capsys):
    blocks = python_blocks()
    assert len(blocks) >= 2
    monkeypatch.chdir(tmp_path)
    ns: dict = {}
    for code in blocks:
        exec(compile(code, str(README), "exec"), ns)
    out = capsys.readouterr().out
    assert "predicted exponent -2.0" in out
    assert (tmp_path / "runs" / "readme" / "summary.md").is_file()
    import json
    conf = json.loads((tmp_path / "runs" / "readme" / "config.json").read_text())
    assert (conf["tau"], conf["phi"], conf["psi"], conf["alpha"], conf["rank"]) == (16, "sin", "cos", [1.5], ["inf"])
    assert conf["model"]["features"] == "given" and conf["m_h"] == [1, 2, 4, 8]    # the options, as the CLI takes them
    assert conf["fit"]["steps"] == 600 and conf["fit_range"] == [1, 8]              # the caller's m_h, all fitted
    assert [(t["alpha"], t["rank"]) for t in ns["summary"]["targets"]] == [(1.5, "inf")]
    (t,) = ns["summary"]["targets"]
    assert t["fit_m_h"] == [1, 2, 4, 8] and t["exponents"]["test"]["slope"] < 0    # what the README says: it falls
    assert list(ns["result"].results.m_h.unique()) == [1, 2, 4, 8] and ns["result"].paths["figures"]
    assert "smoke test" not in repr(ns["result"]) and "quick preset" in repr(ns["result"])


def test_quick_from_python_equals_quick_from_the_command_line():
    from jackson.config import build_parser, from_args
    from jackson.rate_sweep.experiment import SweepConfig, presets, sweep_config
    given = vars(build_parser(SweepConfig, "jackson-sweep", "").parse_args(["--quick", "--alpha", "1.0", "--steps", "20"]))
    cli = from_args(SweepConfig, given, SweepConfig(**{**presets(given)}) if presets(given) else SweepConfig())
    assert sweep_config(quick=True, alpha=(1.0,), fit={"steps": 20}) == cli
    from jackson.hparams import FitConfig
    from jackson.hparams import ModelConfig
    g = sweep_config(model=ModelConfig(features="given"))          # the given-features preset, as on the CLI
    assert g.restarts == 2 and g.fit.lr == 3e-2 and g.fit.steps == 3000
    assert sweep_config(fit=FitConfig(steps=7)).fit.steps == 7


def test_quick_flag_alone_is_refused_not_run_full_size(tmp_path):
    from jackson.config import UsageError
    from jackson.rate_sweep.experiment import SweepConfig, run_sweep, sweep_config
    with pytest.raises(UsageError, match="sweep_config"):
        run_sweep(SweepConfig(quick=True, out=str(tmp_path / "o")), "python")
    with pytest.raises(UsageError, match="unknown option"):
        sweep_config(quik=True)
    assert not (tmp_path / "o").exists()


def test_import_jackson_is_documented_and_does_not_load_torch():
    import jackson
    assert "Theorem 4.1" in jackson.__doc__ and "sweep_config" in jackson.__all__
    code = "import sys, jackson; assert 'torch' not in sys.modules; jackson.Spectrum; print('ok')"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr
    for name in jackson.__all__:
        assert getattr(jackson, name) is not None


def test_docstring_examples_run():
    import doctest

    import jackson
    import jackson.rate_sweep.config
    for mod in (jackson, jackson.rate_sweep.config):
        r = doctest.testmod(mod)
        assert r.failed == 0 and r.attempted >= 1, mod.__name__


def test_the_first_screen_orients():
    """The README's first 40 lines name both papers, link the report and hold command 1 with its output block
    (filled from a committed run); its "Two commands" section ends with the one .ci/run runs."""
    text = README.read_text()
    head = "\n".join(text.splitlines()[:40])
    assert "Jiang & Li" in head and "Yang et al." in head
    assert "(reports/index.md)" in head and "reports/index.html" in head
    assert "jackson-sweep" in head and "<!-- card-output" in head and "<!-- /card-output -->" in text
    # the card's own output, from a committed run: its line begins, and names the terms of Eq. (17), on the first screen
    assert "\nalpha=1.5 rank=inf: exponent " in head and "Theorem 4.1 -2.00; rate " in head
    assert "\nresults: reports/jackson/sweep-a1.5-rinf/results.csv, summary.md (softmax, learned features)" in head
    assert re.search(r"\n  Eq. \(17\) terms at m_h 16: limited by ", head)
    two = text[text.index("## Two commands"):text.index("\n## ", text.index("## Two commands") + 3)]
    assert "&& python -m pytest tests" in two
    ci = (README.parent / ".ci" / "run").read_text()
    assert "python -m pytest tests" in ci


def test_the_quoted_card_line_is_what_its_folder_prints():
    """The line the README quotes under command 1 is the line the committed folder it links prints (rebuilt from its
    summary.json by the command's own function); `python tests/readme_card.py` rewrites it."""
    import readme_card
    text = README.read_text()
    run = readme_card.folder(text)
    assert (run / "summary.json").is_file(), run
    assert readme_card.quoted(text) == readme_card.printed(run)


def code_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) of every line of the README's code: fenced blocks and indented (4-space) blocks."""
    out, fenced, prev_blank = [], False, True
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            fenced = not fenced
            continue
        if fenced or (line.startswith("    ") and (prev_blank or (out and out[-1][0] == n - 1))):
            out.append((n, line))
        prev_blank = not line.strip()
    return out


def test_the_readme_code_fits_a_page_and_its_commands_are_whole():
    """Each line of the README's code fits in 100 characters (a 1280 px page cuts longer ones); a command wrapped with
    line continuations is still one shell command: bash reads each of the two commands, joined, without error."""
    text = README.read_text()
    long = [(n, len(line)) for n, line in code_lines(text) if len(line) > 100]
    assert not long, f"README code lines over 100 characters (line, length): {long}"
    two = text[text.index("## Two commands"):text.index("\n## ", text.index("## Two commands") + 3)]
    commands = re.findall(r"\n\n((?:    .*\n)+)", two)
    assert len(commands) >= 2, commands
    for block in commands[:2]:
        joined = re.sub(r"\\\n\s*", "", block).strip()
        assert "\n" not in joined and joined.startswith("python3 -m venv .venv"), joined
        assert subprocess.run(["bash", "-n", "-c", joined]).returncode == 0, joined
    # the control: the detector finds an over-long line and a fenced one
    assert [n for n, _ in code_lines("text\n\n    " + "x" * 101 + "\n")] == [3]
    assert [n for n, _ in code_lines("```text\nabc\n```\n")] == [2]
