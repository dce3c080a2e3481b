"""A target from any spectrum through the whole jackson-sweep pipeline (issue 16): the scale c (`--c`), an
explicit list of sigma_i (`--sigma`, `--sigma-file`, `sweep_config(sigma=...)`), its fitted decay alpha_hat and
C1, and the one-line refusals of bad spectra."""
from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from jackson import sweep_config
from jackson.config import UsageError, build_parser, read_config
from jackson.rate_sweep.experiment import SweepConfig, validate
from synthetic.pod_target import PODTarget, Spectrum, decay_exponent
from sweep_helpers import refused_line


def _logits(sigma, x):
    """rho(x_t, x_s) = sum_i sigma_i sqrt2 sin(2 pi i x_t) sqrt2 sin(2 pi i x_s), written out with plain loops."""
    n, tau = x.shape
    out = np.zeros((n, tau, tau))
    for i, s in enumerate(sigma, start=1):
        p = np.sqrt(2.0) * np.sin(2 * np.pi * i * x)
        out += s * p[:, :, None] * p[:, None, :]
    return out


def _apply(x, logits):
    w = np.exp(logits - logits.max(axis=-1, keepdims=True))
    w /= w.sum(axis=-1, keepdims=True)
    return (w * x[:, None, :]).sum(axis=-1)          # F = f = identity


# ---- the scale c ------------------------------------------------------------------------------

def test_c_doubles_sigma_and_the_logits():
    args = vars(build_parser(SweepConfig, "jackson-sweep", "").parse_args(["--c", "2", "--rank", "5", "--alpha", "1.2"]))
    assert args["c"] == 2.0
    one = sweep_config(quick=True, alpha=(1.2,), rank=(5,)).cells()[0].target()
    two = sweep_config(quick=True, alpha=(1.2,), rank=(5,), c=2.0).cells()[0].target()
    i = np.arange(1, 6, dtype=float)
    np.testing.assert_allclose(two.sigma, 2.0 * i ** -1.2, rtol=0, atol=1e-15)
    np.testing.assert_allclose(two.sigma, 2.0 * one.sigma, rtol=0, atol=0)
    x = two.sample(8, seed=3)
    np.testing.assert_allclose(two.logits(x), _logits(2.0 * i ** -1.2, x), atol=1e-12)
    np.testing.assert_allclose(two.logits(x), 2.0 * one.logits(x), atol=1e-12)
    assert two.complexity()["C1"] == pytest.approx(2.0)


def test_c_one_keeps_every_cell_key():
    """c = 1 is the default: the cells of the alpha/rank grid keep their keys and init tags."""
    base = sweep_config(quick=True, rank=(2, math.inf)).cells()
    same = sweep_config(quick=True, rank=(2, math.inf), c=1.0).cells()
    assert [c.key() for c in base] == [c.key() for c in same]
    assert [c.target_tag() for c in base] == [c.target_tag() for c in same]
    assert sweep_config(quick=True, c=2.0).cells()[0].key() != base[1].key()


# ---- the explicit spectrum: alpha_hat, C1, the oracle -----------------------------------------

def test_decay_exponent_is_least_squares_on_the_nonzero_values():
    sig = (2.0, 0.9, 0.5, 0.2, 0.0, 0.0)
    i = np.array([1.0, 2, 3, 4])
    y = np.log(np.array(sig[:4]))
    lx = np.log(i)
    slope = ((lx - lx.mean()) * (y - y.mean())).sum() / ((lx - lx.mean()) ** 2).sum()
    assert decay_exponent(sig) == pytest.approx(-slope, rel=1e-12)
    assert decay_exponent([3.0 * k ** -0.8 for k in range(1, 20)]) == pytest.approx(0.8, rel=1e-12)
    assert math.isnan(decay_exponent([1.0, 0.0]))


def test_c1_of_an_explicit_spectrum_is_the_direct_computation():
    sig = (1.0, 0.7, 0.2, 0.15, 0.01)
    a = decay_exponent(sig)
    direct = max(s * (k + 1) ** a for k, s in enumerate(sig))      # inf{c: sigma_s <= c s^-alpha_hat}
    c1 = PODTarget(Spectrum(explicit=sig)).complexity()["C1"]
    assert math.isfinite(c1) and c1 == pytest.approx(direct, rel=1e-12)
    assert all(s <= c1 * (k + 1) ** -a * (1 + 1e-12) for k, s in enumerate(sig))


def test_rank3_oracle_is_exact_from_m_h_3():
    cfg = sweep_config(quick=True, sigma=(1.0, 0.5, 0.25))
    validate(cfg)
    (cell,) = cfg.cells()
    assert cell.rank == 3 and cell.alpha == round(decay_exponent((1.0, 0.5, 0.25)), 4)
    t = cell.target()
    x = t.sample(64, seed=1)
    y = t(x)
    np.testing.assert_allclose(y, _apply(x, _logits((1.0, 0.5, 0.25), x)), atol=1e-12)   # independent
    o = t.oracle(x, [1, 2, 3])
    assert float(np.mean((o["truncated"][3] - y) ** 2)) == 0.0
    np.testing.assert_allclose(o["truncated"][1], _apply(x, _logits((1.0,), x)), atol=1e-12)
    assert float(np.mean((o["truncated"][1] - y) ** 2)) > 1e-6


def test_python_form_and_config_round_trip(tmp_path):
    f = tmp_path / "my_sigma.txt"
    f.write_text("# a spectrum\n1.0\n0.5, 0.3   # two on a line\n\n0.2\n0.0\n")
    cfg = sweep_config(quick=True, sigma_file=str(f))
    assert cfg.explicit() == (1.0, 0.5, 0.3, 0.2, 0.0)
    d = cfg.as_dict()
    assert d["sigma"] == [1.0, 0.5, 0.3, 0.2, 0.0] and d["sigma_file"] == "" and d["sigma_source"] == "file my_sigma.txt"
    p = tmp_path / "config.json"
    p.write_text(json.dumps(d, default=str))
    again = read_config(SweepConfig, str(p))
    assert [c.key() for c in again.cells()] == [c.key() for c in cfg.cells()]
    assert cfg.cells()[0].key() == sweep_config(quick=True, sigma=(1, 0.5, 0.3, 0.2, 0)).cells()[0].key()


# ---- bad inputs: one line, exit 2, nothing written --------------------------------------------

BAD = {
    "sigma-increasing": (["--sigma", "0.5,1"], "non-increasing"),
    "sigma-negative": (["--sigma", "1,-0.1"], ">= 0"),
    "sigma-nan": (["--sigma", "1,nan"], "--sigma"),
    "sigma-file-nan": (["--sigma-file", "{nan_file}"], "finite"),
    "sigma-file-empty": (["--sigma-file", "{empty_file}"], "holds no values"),
    "sigma-file-missing": (["--sigma-file", "{missing_file}"], "cannot read"),
    "sigma-with-alpha": (["--sigma", "1,0.5", "--alpha", "2"], "--alpha"),
    "sigma-with-rank": (["--sigma", "1,0.5", "--rank", "2"], "--rank"),
    "sigma-and-file": (["--sigma", "1,0.5", "--sigma-file", "{nan_file}"], "not both"),
    "sigma-one-nonzero": (["--sigma", "1,0,0"], "2 nonzero"),
    "m-h-above-sigma-length": (["--sigma", "1,0.5", "--m-h", "1,2,3"], "--m-h"),
    "c-not-positive": (["--c", "0"], "--c"),
}

FAULT_CASES = [{"id": cid, "command": "jackson-sweep --quick " + " ".join(a.replace("{", "<").replace("}", ">") for a in args),
                "expect": f"exit 2, one line ({why}); nothing written",
                "test": "tests/test_custom_spectrum.py::test_bad_spectrum_one_line_exit_2"}
               for cid, (args, why) in BAD.items()]


@pytest.mark.parametrize("case", list(BAD))
def test_bad_spectrum_one_line_exit_2(tmp_path, capsys, case):
    files = {"nan_file": tmp_path / "nan.txt", "empty_file": tmp_path / "empty.txt",
             "missing_file": tmp_path / "no-such.txt"}
    files["nan_file"].write_text("1.0\nnan\n")
    files["empty_file"].write_text("# only a comment\n\n")
    args, why = BAD[case]
    args = [a.format(**{k: str(v) for k, v in files.items()}) for a in args]
    refused_line(capsys, args, tmp_path / "out", why)


def test_sigma_with_alpha_from_python():
    with pytest.raises(UsageError, match="--alpha"):
        sweep_config(quick=True, sigma=(1.0, 0.5), alpha=(1.0,))


# ---- the whole pipeline on an explicit spectrum -----------------------------------------------

@pytest.mark.slow
def test_sigma_sweep_end_to_end(tmp_path, capsys):
    from jackson.rate_sweep.cli import sweep_main
    out = tmp_path / "run"
    assert sweep_main(["--quick", "--sigma", "1,0.5,0.25", "--steps", "20", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    a_hat = round(decay_exponent((1.0, 0.5, 0.25)), 4)
    assert "predicted -(2 alpha_hat - 1)" in printed and f"alpha_hat={a_hat:g}" in printed
    res = pd.read_csv(out / "results.csv", dtype={"rank": str})
    assert sorted(res.m_h) == [1, 2, 3] and set(res["rank"]) == {"3"}
    assert res.alpha.iloc[0] == pytest.approx(a_hat)
    o = res.set_index("m_h").oracle_mse
    assert o[3] == 0.0 and o[1] > o[2] > 0            # rank 3: exact from m_h = 3
    md = (out / "summary.md").read_text()
    assert "explicit spectrum (3 values)" in md and f"alpha_hat = {a_hat:g}" in md
    assert "predicted -(2 alpha_hat - 1) from the fitted decay of the given sigma" in md
    assert f"{o[1]:.3e}" in md                         # the oracle errors are in the table
    s = json.loads((out / "summary.json").read_text())
    (t,) = s["targets"]
    assert t["explicit"]["sigma"] == [1.0, 0.5, 0.25] and t["predicted_exponent"] == pytest.approx(-(2 * a_hat - 1))
    assert math.isfinite(t["C1"])
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["sigma"] == [1.0, 0.5, 0.25]
    rep = json.loads((out / "report.json").read_text())
    assert rep["title"].startswith("jackson-sweep: explicit spectrum (3 values)")
    assert any("fitted decay of the given sigma" in p["quantity"] for p in rep["paper"])
    for png in ("error_vs_mh.png", "learned_spectrum.png", "loss_curves.png"):
        assert (out / png).stat().st_size > 0


# ---- is sigma a power law? (jackson.rates.spectrum_law) ----------------------------------------------------

def _loo_mse(x, y) -> float:
    """Leave-one-out squared error of a straight-line fit of y on x, by hand (numpy.polyfit)."""
    errs = []
    for k in range(len(x)):
        keep = np.arange(len(x)) != k
        a, b = np.polyfit(x[keep], y[keep], 1)
        errs.append((a * x[k] + b - y[k]) ** 2)
    return float(np.mean(errs))


@pytest.mark.parametrize("sigma, law", [
    ([i ** -1.5 for i in range(1, 9)], "power law"),
    ([np.exp(-i / 3) for i in range(1, 9)], "not a power law"),
    ([i ** -0.55 * (1 + 0.05 * np.sin(i)) for i in range(1, 9)], "power law"),       # a power law, perturbed
    ([1.0, 0.5, 0.25], "undecided"),
])
def test_spectrum_law_against_a_leave_one_out_fit_by_hand(sigma, law):
    from jackson.rates import spectrum_law
    got = spectrum_law(sigma)
    assert got["law"] == law
    if law != "undecided":
        s = np.asarray(sigma)
        i, y = np.arange(1, len(s) + 1.0), np.log(s)
        assert got["cv_mse_power"] == pytest.approx(_loo_mse(np.log(i), y), rel=1e-6, abs=1e-20)
        assert got["cv_mse_exponential"] == pytest.approx(_loo_mse(i, y), rel=1e-6, abs=1e-20)


def test_a_sweep_of_a_non_power_law_spectrum_predicts_no_exponent(tmp_path, capsys):
    """sigma_i = exp(-i/3): alpha_hat is still fitted (the cell's key), but the printed line, the summary and the
    ledger's rate rule (tests/test_claims.py) say it is not a power law instead of judging against -(2 alpha_hat - 1)."""
    from jackson.rate_sweep.cli import sweep_main
    sigma = ",".join(f"{np.exp(-i / 3):.6g}" for i in range(1, 13))
    out = tmp_path / "jackson" / "nl"
    assert sweep_main(["--quick", "--threads", "1", "--sigma", sigma, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "no predicted exponent: sigma is not a power law" in printed
    s = json.loads((out / "summary.json").read_text())
    (t,) = s["targets"]
    assert t["explicit"]["law"]["law"] == "not a power law"
    assert "the m_h^-(2 alpha - 1) line" not in t["checks"]["tracking"]["tracks"]
    assert "So -(2 alpha_hat - 1) predicts nothing here" in (out / "summary.md").read_text()

