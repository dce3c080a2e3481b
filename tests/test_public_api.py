"""The public API of every package (issue 16): `import <package>` loads no torch (and no timm), every
name of __all__ resolves to the object its submodule defines, and the package docstring's example runs
(doctest) -- the examples a user reads first are checked, not just present."""
from __future__ import annotations

import doctest
import importlib
import subprocess
import sys

import pytest

PACKAGES = ("jackson", "synthetic", "rnn_compare", "vit_probe", "cot_dp")


@pytest.mark.parametrize("package", PACKAGES)
def test_import_is_lazy(package):
    code = f"import sys, {package}; print('torch' in sys.modules, 'timm' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


@pytest.mark.parametrize("package", PACKAGES)
def test_every_public_name_resolves(package):
    mod = importlib.import_module(package)
    assert len(mod.__all__) >= 5 and len(set(mod.__all__)) == len(mod.__all__)
    for name in mod.__all__:
        obj = getattr(mod, name)
        home = getattr(obj, "__module__", None)
        if home is not None and not isinstance(obj, type(sys)):      # a function or class: from this lab
            assert home.split(".")[0] in PACKAGES, (package, name, home)
        assert not isinstance(obj, type(sys)), f"{package}.{name} is a module, not the exported object"
    with pytest.raises(AttributeError):
        getattr(mod, "not_a_public_name")


@pytest.mark.parametrize("package", PACKAGES)
def test_docstring_example_runs(package):
    res = doctest.testmod(importlib.import_module(package))
    assert res.attempted >= 2 and res.failed == 0
