"""The rule tests/tools.py applies: a missing program skips its tests with one line saying how to get it, unless
$JACKSON_REQUIRE_TOOLS names it (.ci/run sets it), where the test runs and fails naming the program."""
import pytest

import tools


@pytest.mark.parametrize("name", ["chromium", "pdflatex"])
def test_a_missing_program_skips_unless_required(name, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))                  # nothing on PATH
    monkeypatch.delenv(tools.REQUIRE_ENV, raising=False)
    mark = tools.needs(name)
    assert mark.args[0] is True and mark.kwargs["reason"].startswith(f"no {name} on PATH: as root, `apt-get install")
    monkeypatch.setenv(tools.REQUIRE_ENV, f"other,{name}")
    assert tools.needs(name).args[0] is False                  # required: it runs ...
    with pytest.raises(AssertionError, match=f"requires {name} and it is not on PATH"):
        tools.tool(name)                                       # ... and fails, naming what to install


def test_a_present_program_runs(tmp_path, monkeypatch):
    exe = tmp_path / "pdflatex"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv(tools.REQUIRE_ENV, raising=False)
    assert tools.needs("pdflatex").args[0] is False and tools.tool("pdflatex") == str(exe)
