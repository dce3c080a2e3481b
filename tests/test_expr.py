"""jackson.expr: the safe expression grammar (parsed by ast, evaluated by a whitelist walker, never eval)."""
from __future__ import annotations

import builtins
import doctest
import pickle
import shlex

import numpy as np
import pytest

import jackson.expr
from jackson.config import UsageError
from jackson.expr import FUNCTIONS, MAX_DEPTH, MAX_LENGTH, Expression

U, V = np.linspace(0.01, 0.99, 7)[:, None], np.linspace(0.01, 0.99, 5)[None, :]   # a (7, 5) grid in (0, 1)


def _kernel(text: str) -> str:
    return f"rnn-mixing-spectrum --kernel {shlex.quote(text)}"


# Every expression the grammar refuses, as a user would give it.  (The hostile ones that try to run
# code are in tests/test_rnn_compare.py, where the command is also checked to create no file.)
# SAYS: a piece of the one-line message each case must print.
_CASES = [
    ("expr-subscript", "u[0]", "subscript is not allowed: 'u[0]'"),
    ("expr-comprehension", "[x for x in u]", "comprehension is not allowed"),
    ("expr-generator-in-call", "sum(x for x in u)", "unknown function 'sum'"),
    ("expr-keyword-argument", "sin(u, out=v)", "a keyword argument is not allowed"),
    ("expr-string-literal", "'abc'", "a string literal is not allowed"),
    ("expr-f-string", 'f"{u}"', "f-string is not allowed"),
    ("expr-comparison", "u < v", "comparison is not allowed"),
    ("expr-boolean", "u and v", "and/or is not allowed"),
    ("expr-conditional", "u if v else 1", "if-else is not allowed"),
    ("expr-walrus", "(w := u)", "assignment (:=) is not allowed"),
    ("expr-lambda", "lambda: 1", "lambda is not allowed"),
    ("expr-star-argument", "sin(*u)", "*-unpacking is not allowed"),
    ("expr-tuple", "u, v", "tuple is not allowed"),
    ("expr-matmul", "u @ v", "the operator MatMult is not allowed"),
    ("expr-floor-division", "u // v", "the operator FloorDiv is not allowed"),
    ("expr-bare-function", "sin + u", "a function without its call is not allowed: 'sin'"),
    ("expr-wrong-arity", "minimum(u)", "minimum takes 2 arguments, got 1"),
    ("expr-unknown-name", "w * u", "unknown name 'w'"),
    ("expr-builtins-name", "__builtins__", "unknown name '__builtins__'"),
    ("expr-complex-literal", "1j * u", "the literal 1j is not allowed"),
    ("expr-bool-literal", "True", "the literal True is not allowed"),
    ("expr-infinite-literal", "1e400 * u", "the number '1e400' is not a finite float"),
    ("expr-too-long", "+".join(["u"] * 260), f"longer than {MAX_LENGTH} characters"),
    ("expr-too-deep", "+" * 150 + "u", f"nested deeper than {MAX_DEPTH} levels"),
    ("expr-too-many-parentheses", "(" * 240 + "u" + ")" * 240, "not an expression"),
    ("expr-empty", "", "empty"),
    ("expr-syntax-error", "u +* v", "not an expression"),
    ("expr-log-of-negative", "log(u-2)", "'log(u-2)' is not finite on the grid (invalid value"),
    ("expr-overflow", "10**400 + u", "is not finite on the grid (overflow"),
    ("expr-exp-overflow", "exp(1000*u)", "is not finite on the grid (overflow"),
    ("expr-zero-over-zero", "0*u/0", "is not finite on the grid"),
]
FAULT_CASES = [{"id": i, "command": _kernel(text),
                "expect": f"exit 2, one line: rnn-mixing-spectrum: error: --kernel: ...{says}..."}
               for i, text, says in _CASES]
SAYS = {i: says for i, _, says in _CASES}


@pytest.mark.parametrize("case", FAULT_CASES, ids=[c["id"] for c in FAULT_CASES])
def test_refused_expressions_one_line_exit_2(case, capsys, tmp_path, monkeypatch):
    from rnn_compare.cli import spectrum_main
    monkeypatch.chdir(tmp_path)
    argv = shlex.split(case["command"])
    assert argv[0] == "rnn-mixing-spectrum"
    with pytest.raises(SystemExit) as e:
        spectrum_main(argv[1:])
    out, err = capsys.readouterr()
    assert e.value.code == 2 and out == ""
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("rnn-mixing-spectrum: error: --kernel: ")
    assert SAYS[case["id"]] in lines[0] and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []
    # the library refuses it the same way, at parse time or on the grid
    with pytest.raises(UsageError) as ue:
        Expression(argv[2], variables=("u", "v"), name="--kernel")(U, V)
    assert SAYS[case["id"]] in str(ue.value) and "\n" not in str(ue.value)


# ---- what it accepts, and that it computes what numpy computes ----------------------------------

VALID = [
    ("1 + 2*sin(2*pi*u)*sin(2*pi*v)", lambda u, v: 1 + 2 * np.sin(2 * np.pi * u) * np.sin(2 * np.pi * v)),
    ("exp(-(u-v)**2 / 0.1)", lambda u, v: np.exp(-(u - v) ** 2 / 0.1)),
    ("-u % 0.3 + +v", lambda u, v: (-u) % 0.3 + v),
    ("sqrt(u*v) + log(1+u) - log10(v) * e", lambda u, v: np.sqrt(u * v) + np.log(1 + u) - np.log10(v) * np.e),
    ("tan(u) + arcsin(v) + arccos(u) + arctan(v) + arctan2(u, v)",
     lambda u, v: np.tan(u) + np.arcsin(v) + np.arccos(u) + np.arctan(v) + np.arctan2(u, v)),
    ("sinh(u) * cosh(v) / (1 + tanh(u - v))", lambda u, v: np.sinh(u) * np.cosh(v) / (1 + np.tanh(u - v))),
    ("abs(u - 0.5) * sign(v - 0.5) + minimum(u, v) - maximum(u, 2*v)",
     lambda u, v: np.abs(u - 0.5) * np.sign(v - 0.5) + np.minimum(u, v) - np.maximum(u, 2 * v)),
    ("2**-3 * u**2.5 + 1e-3", lambda u, v: 2.0 ** -3 * u ** 2.5 + 1e-3 + 0 * v),
    ("exp(-1000*u)", lambda u, v: np.exp(-1000 * u) + 0 * v),   # underflow to ~0 is fine
]


@pytest.mark.parametrize("text,ref", VALID, ids=[t for t, _ in VALID])
def test_valid_expressions_equal_numpy(text, ref):
    k = Expression(text, variables=("u", "v"))
    got = k(U, V)
    assert got.dtype == np.float64 and got.shape == (7, 5)
    np.testing.assert_allclose(got, ref(U, V), rtol=1e-14, atol=0)
    np.testing.assert_array_equal(k(u=U, v=V), got)          # keywords == positional


def test_every_function_is_covered_by_a_valid_case():
    used = " ".join(t for t, _ in VALID)
    assert all(f"{name}(" in used for name in FUNCTIONS)


def test_constant_and_one_variable_results_broadcast_to_the_inputs():
    np.testing.assert_array_equal(Expression("1", ("u", "v"))(U, V), np.ones((7, 5)))
    np.testing.assert_allclose(Expression("pi*x", ("x",))(x=[1.0, 2.0]), [np.pi, 2 * np.pi])
    assert Expression("u", ("u", "v"))(U, V).shape == (7, 5)


def test_module_docstring_example_runs():
    res = doctest.testmod(jackson.expr)
    assert res.attempted >= 4 and res.failed == 0


def test_never_calls_eval_or_exec(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("eval/exec called")
    monkeypatch.setattr(builtins, "eval", boom)
    monkeypatch.setattr(builtins, "exec", boom)
    k = Expression("1 + 2*sin(2*pi*u)*sin(2*pi*v)", ("u", "v"))
    np.testing.assert_allclose(k(U, V), VALID[0][1](U, V), rtol=1e-14)


def test_pickles_as_text_and_rechecks_on_load():
    k = Expression("exp(-(u-v)**2)", ("u", "v"), name="--kernel")
    k2 = pickle.loads(pickle.dumps(k))
    assert (k2.text, k2.variables, k2.name) == (k.text, k.variables, k.name)
    np.testing.assert_array_equal(k2(U, V), k(U, V))
    forged = object.__new__(Expression)                     # a pickle carrying a hostile text
    forged.text, forged.variables, forged.name = "u.__class__", ("u",), "--kernel"
    with pytest.raises(UsageError, match="attribute access"):
        pickle.loads(pickle.dumps(forged))


def test_inputs_and_variable_names_are_checked():
    k = Expression("u + v", ("u", "v"), name="--kernel")
    with pytest.raises(UsageError, match="--kernel: the input v is not finite"):
        k(U, np.array([np.nan]))
    with pytest.raises(TypeError, match="missing"):
        k(U)
    with pytest.raises(TypeError, match="unexpected"):
        k(u=U, v=V, w=V)
    with pytest.raises(ValueError, match="clashes"):
        Expression("pi", variables=("pi",))
