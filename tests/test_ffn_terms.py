"""Eq. (17) term by term: the FFN-class axis (--activation), the feed-forward term alone (--term ff) and
Theorem 4.1's L1 error, each against an independent computation."""
from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from torch import nn

from conftest import TINY_FIT, TINY_MODEL, tiny_cell
from jackson.config import UsageError
from jackson.fit import evaluate, fit
from jackson.models import TransformerBank
from jackson.hparams import ModelConfig
from jackson.rate_sweep.cell import measure, member_targets
from jackson.rate_sweep.experiment import QUICK, SweepConfig, validate
from synthetic.pod_target import PODTarget, Spectrum

ACTS = {"gelu": nn.GELU(), "relu": nn.ReLU(), "sin": torch.sin}


def reference_mlp(params, act, h):
    """x @ W + b per layer, the named activation between layers (written out, not the bank's code)."""
    n = len(params) // 2
    for j in range(n):
        h = h @ params[2 * j].detach() + params[2 * j + 1].detach()[0]
        if j < n - 1:
            h = ACTS[act](h)
    return h


@pytest.mark.parametrize("act", ["gelu", "relu", "sin"])
def test_activation_is_the_one_between_the_layers_of_both_mlps(act):
    cfg = dataclasses.replace(TINY_MODEL, activation=act, in_scale=30.0 if act == "sin" else 3.0)
    bank = TransformerBank(cfg, (2,), (5,))
    x = torch.rand(3, 6, generator=torch.Generator().manual_seed(1))
    mb = bank.members[0]
    with torch.no_grad():
        h = reference_mlp(list(mb.f_hat), act, x[..., None])                 # (B, T, n)
        q, k, v = h @ mb.W_Q.T, h @ mb.W_K.T, h @ mb.W_V.T
        att = torch.softmax(q @ k.transpose(1, 2), dim=-1)
        y = reference_mlp(list(mb.F_hat), act, att @ v)[..., 0]
        got = bank(x)[0]
    assert torch.allclose(got, y, atol=1e-5), (got - y).abs().max()


def test_default_activation_is_sine_and_the_classes_differ():
    assert (ModelConfig().activation, ModelConfig().in_scale) == ("sin", 60.0)
    assert TINY_MODEL.activation == "gelu"
    x = torch.rand(2, 5, generator=torch.Generator().manual_seed(2))
    outs = {a: TransformerBank(dataclasses.replace(TINY_MODEL, activation=a), (1,), (3,))(x) for a in ACTS}
    assert torch.equal(outs["gelu"], TransformerBank(TINY_MODEL, (1,), (3,))(x))   # bit-for-bit the old model
    assert not torch.allclose(outs["gelu"], outs["sin"]) and not torch.allclose(outs["gelu"], outs["relu"])


def test_default_cell_key_is_unchanged_by_the_new_fields():
    """Cells made before --activation and --term keep their keys (their folders are reused, not rerun)."""
    c = tiny_cell()
    assert c.key() == dataclasses.replace(c, term="full").key()
    assert c.key() != dataclasses.replace(c, term="ff").key()
    assert c.key() != dataclasses.replace(c, model=dataclasses.replace(TINY_MODEL, activation="sin")).key()


def test_ff_targets_are_each_members_rank_m_h_truncation():
    """term ff: member m_h fits H with rho cut to sum_{i <= m_h}; checked against the kernel built by hand."""
    cell = tiny_cell(rank=3.0, m_hs=(1, 2, 5), phi="sin", psi="cos")
    target = cell.target()
    x = target.sample(4, 0)
    y = target(x)
    got = member_targets(dataclasses.replace(cell, term="ff"), target, x, y)
    assert got.shape == (3, 4, cell.tau)
    assert member_targets(cell, target, x, y) is y
    s = Spectrum(alpha=1.5, rank=3).sigma()
    for row, m in zip(got, (1, 2, 5)):
        r = min(m, 3)
        i = np.arange(1, r + 1)
        rho = np.einsum("i,bti,bsi->bts", s[:r], np.sqrt(2) * np.sin(2 * np.pi * i * x[..., None]),
                        np.sqrt(2) * np.cos(2 * np.pi * i * x[..., None]))
        att = np.exp(rho - rho.max(-1, keepdims=True))
        att /= att.sum(-1, keepdims=True)
        np.testing.assert_allclose(row, np.einsum("bts,bs->bt", att, x), rtol=1e-10)
    np.testing.assert_allclose(got[2], y, rtol=1e-12)           # m_h >= rank: the target itself


def test_per_member_targets_train_as_shared_ones():
    """fit/evaluate with y (M, N, T) equal to a shared y (N, T) repeated: bit-identical weights and errors."""
    x = torch.rand(64, 6, generator=torch.Generator().manual_seed(3))
    y = torch.sin(3 * x).cumsum(1) / 6
    a, b = (TransformerBank(TINY_MODEL, (1, 2), (7, 8)) for _ in range(2))
    fa = fit(a, x, y, TINY_FIT, seed=0, progress=False)
    fb = fit(b, x, y.expand(2, *y.shape).contiguous(), TINY_FIT, seed=0, progress=False)
    for pa, pb in zip(a.parameters(), b.parameters()):
        assert torch.equal(pa, pb)
    assert fa.curve == fb.curve
    assert torch.equal(evaluate(a, x, y), evaluate(b, x, y.expand(2, *y.shape)))


def test_evaluate_absolute_is_the_mean_absolute_error():
    bank = TransformerBank(TINY_MODEL, (1, 3), (1, 2))
    x = torch.rand(10, 5, generator=torch.Generator().manual_seed(4))
    y = torch.rand(10, 5, generator=torch.Generator().manual_seed(5))
    with torch.no_grad():
        want = (bank(x) - y).abs().mean(dim=-1)
    assert torch.allclose(evaluate(bank, x, y, batch=3, absolute=True), want)


@pytest.fixture(scope="module")
def ff_cell_folder(tmp_path_factory):
    cell = tiny_cell(term="ff", phi="sin", psi="cos", m_hs=(1, 3))
    folder = tmp_path_factory.mktemp("ffcell")
    measure(cell, folder, progress=False)
    return cell, folder


def test_ff_cell_rows_carry_term_activation_and_the_l1_error(ff_cell_folder):
    cell, folder = ff_cell_folder
    rows = pd.read_csv(folder / "rows.csv")
    assert (rows.term == "ff").all() and (rows.activation == "gelu").all()
    # the oracle's L1 error, recomputed here from the target: E_x sum_t |H_t - H_t^(m)|
    target = cell.target()
    from jackson.rate_sweep.cell import data_seeds
    x = target.sample(cell.n_test, data_seeds(cell.seed)[1])
    y, orc = target(x), target.oracle(x, cell.m_hs)["truncated"]
    for m in cell.m_hs:
        r = rows[rows.m_h == m].iloc[0]
        assert r.oracle_l1 == pytest.approx(np.abs(orc[m] - y).sum(axis=1).mean(), rel=1e-6)
        # L1 and MSE of one model obey Jensen: (E |e| / tau)^2 <= E e^2
        assert (r.test_l1 / cell.tau) ** 2 <= r.test_mse * (1 + 1e-6)
    blocks = pd.read_csv(folder / "blocks.csv.gz")       # a cell's own block table, gzipped like the folder's
    assert {"test_l1", "oracle_l1"} <= set(blocks.kind)


def test_sweep_config_names_its_folder_by_class_and_term():
    assert str(SweepConfig(term="ff").resolved_out()).endswith("sweep-a1.5-rinf-ff")       # the default class: sine
    cfg = SweepConfig(model=ModelConfig(activation="gelu"), term="ff")
    assert str(cfg.resolved_out()).endswith("sweep-a1.5-rinf-gelu-ff")
    assert str(SweepConfig().resolved_out()).endswith("sweep-a1.5-rinf")


@pytest.mark.parametrize("change, words", [
    ({"model": dataclasses.replace(QUICK["model"], activation="tanhh")}, "--activation: choose gelu, relu, sin"),
    ({"model": dataclasses.replace(QUICK["model"], in_scale=-3.0)}, "--in-scale: the first layer's init scale must be > 0, got -3"),
    ({"term": "attn"}, "--term: choose full, ff"),
    ({"term": "ff", "model": dataclasses.replace(QUICK["model"], features="given", features_k=8)}, "--term ff: the feed-forward term needs learned features"),
    ({"term": "ff", "model": dataclasses.replace(QUICK["model"], attention="linear")}, "--term ff: a rank-m_h softmax attention"),
])
def test_bad_ffn_options_are_one_line_before_training(tmp_path, change, words):
    cfg = dataclasses.replace(SweepConfig(out=str(tmp_path / "o")), **{**QUICK, **change})
    with pytest.raises(UsageError, match=words.replace("(", r"\(").replace(")", r"\)")):
        validate(cfg)
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
@pytest.mark.parametrize("args, words", [
    (["--activation", "swish"], "--activation: choose gelu, relu, sin"),
    (["--in-scale", "-1"], "--in-scale: the first layer's init scale must be > 0"),
])
def test_cli_refuses_bad_ffn_options_in_one_line(tmp_path, sweep_exe, sub_env, args, words):
    import subprocess
    p = subprocess.run([str(sweep_exe), "--quick", "--out", str(tmp_path / "o"), *args], env=sub_env,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and words in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert not (tmp_path / "o").exists()


# ---- jackson/rate_sweep/terms.py: additivity from hand-made folders -----------------------------

def _folder(root, name, features, term, act, blocks, n_seeds=3, n_blocks=8, m_ff=128):
    """A folder with config.json, results.csv and blocks.csv whose block MSEs are `blocks[kind](m_h, seed, b)`."""
    import json
    f = root / name
    f.mkdir()
    model = {"features": features, "activation": act, "in_scale": 60.0 if act == "sin" else 3.0}
    (f / "config.json").write_text(json.dumps({"construction": "trace-free", "term": term, "model": model}))
    rows, res = [], []
    for m in (1, 2, 4):
        for s in range(n_seeds):
            for kind, fn in blocks.items():
                for b in range(n_blocks):
                    rows.append({"alpha": 1.5, "rank": "inf", "m_h": m, "m_ff": m_ff, "seed": s, "kind": kind,
                                 "block": b, "mse": fn(m, s, b)})
            tm = np.mean([blocks["test"](m, s, b) for b in range(n_blocks)])
            om = np.mean([blocks.get("oracle", blocks["test"])(m, s, b) for b in range(n_blocks)])
            res.append({"alpha": 1.5, "rank": "inf", "m_ff": m_ff, "m_h": m, "seed": s, "test_mse": tm, "oracle_mse": om})
    pd.DataFrame(rows).to_csv(f / "blocks.csv", index=False)
    pd.DataFrame(res).to_csv(f / "results.csv", index=False)
    return f


def _noise(m, s, b):
    return 1 + 0.1 * math.sin(7 * m + 3 * s + b)


def test_additivity_ratio_is_one_where_full_is_the_sum_and_the_rule_names_the_larger_term(tmp_path):
    from jackson.rate_sweep.terms import additivity
    attn = lambda m, s, b: 1e-3 / m ** 2 * _noise(m, s, b)           # noqa: E731
    ff = lambda m, s, b: 2e-4 * _noise(m, s, b + 1)                 # noqa: E731
    full = _folder(tmp_path, "full", "learned", "full", "sin",
                   {"test": lambda m, s, b: attn(m, s, b) + ff(m, s, b), "oracle": lambda m, s, b: 1e-3 / m ** 2})
    t = additivity(full, _folder(tmp_path, "ff", "learned", "ff", "sin", {"test": ff}),
                   _folder(tmp_path, "attn", "given", "full", "gelu", {"test": attn}))
    assert list(t.m_h) == [1, 2, 4] and (t.n_seeds == 3).all()
    np.testing.assert_allclose(t.ratio, 1.0, rtol=1e-12)
    assert (t.ratio_lo <= 1 + 1e-12).all() and (t.ratio_hi >= 1 - 1e-12).all()
    # m_h = 1: e_attn 1e-3, e_FF 2e-4 -> attention; m_h = 2: 2.5e-4 and 2e-4 -> both; m_h = 4: 6.25e-5 < 2e-4 -> feed-forward
    assert t.set_index("m_h").limiting.to_dict() == {1: "attention", 2: "both", 4: "feed-forward"}


def test_additivity_finds_an_error_neither_term_has(tmp_path):
    from jackson.rate_sweep.terms import additivity, limiting_term
    small = lambda m, s, b: 1e-6 * _noise(m, s, b)                  # noqa: E731
    full = _folder(tmp_path, "full", "learned", "full", "gelu", {"test": lambda m, s, b: 1e-3 * _noise(m, s, b),
                                                                  "oracle": small})
    t = additivity(full, _folder(tmp_path, "ff", "learned", "ff", "gelu", {"test": small}),
                   _folder(tmp_path, "attn", "given", "full", "gelu", {"test": small}))
    assert (t.ratio > 100).all() and (t.ratio_lo > 100).all() and (t.limiting == "neither").all()
    assert limiting_term(1.0, 0.2, 1.5) == "attention" and limiting_term(0.1, 0.9, 1.0) == "feed-forward"
    assert limiting_term(0.5, 0.4, 1.0) == "both" and limiting_term(0.1, 0.2, 1.0) == "neither"


def test_terms_refuses_folders_of_the_wrong_kind_or_class(tmp_path):
    from jackson.rate_sweep.terms import TermsError, additivity, main
    t = lambda m, s, b: 1e-4                                         # noqa: E731
    full = _folder(tmp_path, "full", "learned", "full", "gelu", {"test": t, "oracle": t})
    ff_sin = _folder(tmp_path, "ffsin", "learned", "ff", "sin", {"test": t})
    attn = _folder(tmp_path, "attn", "given", "full", "gelu", {"test": t})
    with pytest.raises(TermsError, match="--ff: .* needs features learned, term ff"):
        additivity(full, attn, attn)
    with pytest.raises(TermsError, match="other FFN classes"):
        additivity(full, ff_sin, attn)
    assert main(["--full", str(full), "--ff", str(ff_sin), "--attn", str(attn), "--out", str(tmp_path / "o")]) == 2
    assert not (tmp_path / "o").exists()


def test_terms_main_writes_its_tables_and_figures(tmp_path, capsys):
    from jackson.rate_sweep.terms import main
    ff = lambda m, s, b: 1e-4 * _noise(m, s, b)                      # noqa: E731
    full = _folder(tmp_path, "full", "learned", "full", "gelu", {"test": lambda m, s, b: 3e-4, "oracle": lambda m, s, b: 1e-4 / m})
    f = _folder(tmp_path, "ff", "learned", "ff", "gelu", {"test": ff})
    a = _folder(tmp_path, "attn", "given", "full", "gelu", {"test": lambda m, s, b: 1e-4 / m})
    assert main(["--full", str(full), "--ff", str(f), "--attn", str(a), "--out", str(tmp_path / "o")]) == 0
    for name in ("terms.csv", "eff.csv", "summary.md", "terms_vs_mh.png", "eff_heatmap.png", "command.txt"):
        assert (tmp_path / "o" / name).is_file(), name
    assert "e_full / (e_attn + e_FF)" in capsys.readouterr().out
    assert "| gelu | 1.5 | 128 | 1 | 3 |" in (tmp_path / "o" / "summary.md").read_text()


def test_terms_pairs_each_full_folder_with_the_ff_folder_of_its_class_and_width(tmp_path, capsys):
    """Two widths of one class: each --full folder is paired with the --ff folder of its m_FF, never the other."""
    from jackson.rate_sweep.terms import main
    a = _folder(tmp_path, "attn", "given", "full", "gelu", {"test": lambda m, s, b: 1e-4 / m})
    full = {w: _folder(tmp_path, f"full{w}", "learned", "full", "gelu", {"test": lambda m, s, b, w=w: 1e-4 / m + w * 1e-6,
                                                                          "oracle": lambda m, s, b: 1e-4 / m}, m_ff=w)
            for w in (128, 256)}
    ff = {w: _folder(tmp_path, f"ff{w}", "learned", "ff", "gelu", {"test": lambda m, s, b, w=w: w * 1e-6}, m_ff=w)
          for w in (128, 256)}
    argv = ["--full", f"{full[128]},{full[256]}", "--ff", f"{ff[256]},{ff[128]}", "--attn", str(a), "--out", str(tmp_path / "o")]
    assert main(argv) == 0
    t = pd.read_csv(tmp_path / "o" / "terms.csv")
    assert sorted(set(t.m_ff)) == [128, 256] and len(t) == 6
    np.testing.assert_allclose(t.ratio, 1.0, rtol=1e-9)              # each width's e_full is its own e_attn + e_FF
    assert {(r.m_ff, Path(r.ff).name) for r in t.itertuples()} == {(128, "ff128"), (256, "ff256")}
    lone = _folder(tmp_path, "full64", "learned", "full", "gelu", {"test": lambda m, s, b: 1e-4, "oracle": lambda m, s, b: 1e-4},
                   m_ff=64)
    capsys.readouterr()
    assert main(["--full", str(lone), "--ff", f"{ff[128]},{ff[256]}", "--attn", str(a), "--out", str(tmp_path / "o2")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no folder of FFN class gelu at m_FF 64" in err[0] and "gelu at m_FF 128" in err[0]


def test_l1_oracle_errors_against_the_definitions():
    """jackson/rate_sweep/l1.py: the MSE and L1 error of the rank-m truncation recomputed from the target by hand,
    and the first-order halving of the exponent on a steep spectrum."""
    from jackson.rate_sweep.l1 import oracle_errors, slopes
    t = oracle_errors(1.5, [1, 2, 4, 8], n=300, k_max=64, tau=6)
    target = PODTarget(Spectrum(alpha=1.5, k_max=64, tail_tol=1e-300), phi="sin", psi="cos", tau=6)
    x = target.sample(300, 0)
    y = target(x)
    for _, r in t.iterrows():
        m = int(r.m_h)
        ym = target.apply(x, target.logits(x) * 0 + (target.kernel(x.ravel(), x.ravel(), m)
                                                     .reshape(300, 6, 300, 6)[np.arange(300), :, np.arange(300), :]))
        assert r.mse == pytest.approx(((ym - y) ** 2).mean(), rel=1e-9)
        assert r.l1 == pytest.approx(np.abs(ym - y).sum(axis=1).mean(), rel=1e-9)
        assert r["tail"] == pytest.approx(float((Spectrum(alpha=1.5, k_max=64, tail_tol=1e-300).sigma()[m:] ** 2).sum()))
    s = slopes(t).iloc[0]
    assert s.mse_slope < s.l1_slope < 0 and s.l1_slope == pytest.approx(s.mse_slope / 2, abs=0.35)


def sweep_in(folder: Path, monkeypatch, capsys):
    """`jackson-sweep --quick --m-h 1,2 --steps 6 --threads 1 ARGS` in-process with `folder` as the working directory
    (where reports/jackson/ is looked up): (exit code, stdout, stderr).  Two m_h and six steps are the smallest sweep
    that writes every file and a terms line; the checks below read which folders a run names, not its numbers."""
    from jackson.rate_sweep.cli import sweep_main
    monkeypatch.chdir(folder)

    def run(*args):
        capsys.readouterr()
        try:
            rc = sweep_main(["--quick", "--m-h", "1,2", "--steps", "6", "--threads", "1", *args])
        except SystemExit as e:
            rc = e.code
        cap = capsys.readouterr()
        return rc, cap.out, cap.err
    return run


@pytest.mark.slow
def test_a_full_run_finds_the_matching_ff_run_and_says_which_term_limits_it(tmp_path, monkeypatch, capsys):
    """--ff-from given, or a --term ff folder of the same settings under reports/jackson/ found: the summary and the
    printed line name the limiting term with e_FF's folder; a run of other settings finds none.  (In-process, two
    m_h: what is checked is which folders each run finds, the same at any size.)"""
    sweep = sweep_in(tmp_path, monkeypatch, capsys)

    def run(*args):
        rc, out, err = sweep(*args)
        assert rc == 0, err[-2000:]
        return out
    run("--term", "ff", "--out", "reports/jackson/q-ff")
    out = run("--out", "reports/jackson/q-full")
    assert "Eq. (17) terms at m_h " in out and "limited by" in out          # printed; the folders: in the summary
    line = json.loads((tmp_path / "reports/jackson/q-full/summary.json").read_text())["targets"][0]["terms"]["line"]
    assert "e_FF from reports/jackson/q-ff" in line
    assert "the attention term alone is not measured" in line                    # no given-features run yet: said
    run("--features", "given", "--out", "reports/jackson/q-given")
    out = run("--out", "reports/jackson/q-full2")
    line = json.loads((tmp_path / "reports/jackson/q-full2/summary.json").read_text())["targets"][0]["terms"]["line"]
    assert "e_attn from reports/jackson/q-given" in line and "e_FF from reports/jackson/q-ff" in line
    assert "e_full / (e_attn + e_FF)" in line and "Eq. (17) terms at m_h " in out
    md = (tmp_path / "reports/jackson/q-full2/summary.md").read_text()
    assert "e_attn (attention term alone)" in md and "e_FF (feed-forward term alone)" in md
    def terms_line(name):
        return json.loads((tmp_path / f"reports/jackson/{name}/summary.json").read_text())["targets"][0]["terms"]["line"]
    run("--activation", "relu", "--out", "reports/jackson/q-relu")
    assert "e_FF from" not in terms_line("q-relu")
    run("--activation", "relu", "--ff-from", "reports/jackson/q-ff", "--out", "reports/jackson/q-relu2")
    assert "e_FF from reports/jackson/q-ff" in terms_line("q-relu2")      # named by the user: used, whatever its class


def test_ff_targets_from_a_precomputed_oracle_are_the_same():
    cell = tiny_cell(term="ff", m_hs=(1, 3), phi="sin", psi="cos")
    target = cell.target()
    x = target.sample(5, 1)
    y = target(x)
    np.testing.assert_array_equal(member_targets(cell, target, x, y),
                                  member_targets(cell, target, x, y, target.oracle(x, cell.m_hs)["truncated"]))


def test_find_ff_run_answers_only_at_the_same_width(tmp_path):
    """The committed e_FF a learned-features run's summary reads must be of its own m_FF: e_FF at another width is
    another feed-forward term (Eq. 17: C2 m_h^(beta+1) / m_FF^beta)."""
    import json
    from jackson.rate_sweep.references import find_ff_run
    model = {"features": "learned", "activation": "gelu", "width": 128}

    def ff_folder(name, widths):
        f = tmp_path / name
        f.mkdir()
        (f / "config.json").write_text(json.dumps({"term": "ff", "model": model, "m_ff": widths, "alpha": [1.5]}))
        (f / "summary.json").write_text("{}")
        pd.DataFrame([{"alpha": 1.5, "rank": "inf", "m_ff": w, "m_h": 1, "seed": 0, "test_mse": 1e-6}
                      for w in widths]).to_csv(f / "results.csv", index=False)
        return str(f)

    a = ff_folder("eff-a", [128, 32])
    run = {"term": "full", "model": model, "alpha": [1.5]}
    assert find_ff_run({**run, "m_ff": [256]}, [(1.5, "inf")], root=tmp_path) == ""       # no e_FF at 256
    assert find_ff_run({**run, "m_ff": []}, [(1.5, "inf")], root=tmp_path) == a           # the model's width, 128
    assert find_ff_run({**run, "m_ff": [32]}, [(1.5, "inf")], root=tmp_path) == a
    assert find_ff_run({**run, "m_ff": [128]}, [(1.0, "inf")], root=tmp_path) == ""       # another target
    b = ff_folder("eff-b", [256])
    assert find_ff_run({**run, "m_ff": [256]}, [(1.5, "inf")], root=tmp_path) == b
    assert find_ff_run({**run, "m_ff": [256], "model": {**model, "activation": "sin"}}, [(1.5, "inf")],
                       root=tmp_path) == ""                                                 # another FFN class


def test_the_sum_and_the_max_are_told_apart_only_where_both_terms_matter(tmp_path):
    """A full model that is the sum: rows where the smaller term is >= half the larger prefer the sum; where one term is
    small the sum and the max agree within 1.5x and the row cannot tell.  A full model that is the max: the same rows
    prefer the max."""
    from jackson.rate_sweep.terms import additivity
    attn = lambda m, s, b: 1e-3 / m ** 2 * _noise(m, s, b)           # noqa: E731  (m_h 1: 1e-3, 2: 2.5e-4, 4: 6.25e-5)
    ff = lambda m, s, b: 2e-4 * _noise(m, s, b + 1)                 # noqa: E731
    parts = (_folder(tmp_path, "ff", "learned", "ff", "sin", {"test": ff}),
             _folder(tmp_path, "attn", "given", "full", "gelu", {"test": attn}))
    as_sum = additivity(_folder(tmp_path, "sum", "learned", "full", "sin", {"test": lambda m, s, b: attn(m, s, b) + ff(m, s, b),
                                                                            "oracle": attn}), *parts)
    assert as_sum.set_index("m_h").prefers.to_dict() == {1: "cannot tell", 2: "sum", 4: "cannot tell"}
    as_max = additivity(_folder(tmp_path, "max", "learned", "full", "sin",
                                {"test": lambda m, s, b: max(attn(m, s, b), ff(m, s, b)), "oracle": attn}), *parts)
    r2 = as_max.set_index("m_h").loc[2]
    assert r2.prefers == "max" and r2.ratio_max_lo <= 1.0 + 1e-9 <= r2.ratio_max_hi + 1e-9 and r2.ratio_hi < 1


@pytest.mark.slow
def test_terms_measures_both_terms_where_no_committed_run_holds_them(tmp_path, monkeypatch, capsys):
    """--terms on a target no committed run measured: the run makes <out>-ff and <out>-given itself, and its line,
    summary and figure set e_full beside e_attn + e_FF; the same command again finds them by key and trains nothing.
    (In-process, two m_h: the sub-runs and their reuse are the same at any size.)"""
    sweep = sweep_in(tmp_path, monkeypatch, capsys)
    rc, out, err = sweep("--tau", "8", "--terms", "--out", "reports/jackson/t-full")
    assert rc == 0, err[-2000:]
    for sub in ("t-full-ff", "t-full-given"):
        assert (tmp_path / "reports/jackson" / sub / "summary.json").is_file()
    line = json.loads((tmp_path / "reports/jackson/t-full/summary.json").read_text())["targets"][0]["terms"]["line"]
    assert "e_attn from reports/jackson/t-full-given" in line and "e_FF from reports/jackson/t-full-ff" in line
    assert out.count("--terms: measuring") == 2 and out.count(" done (") == 3      # the run, its -ff and -given
    rc, again, err = sweep("--tau", "8", "--terms", "--out", "reports/jackson/t-full")
    assert rc == 0 and "--terms: measuring" not in again and " done (" not in again, err[-2000:]
    rc, out, err = sweep("--tau", "8", "--terms", "--term", "ff", "--out", "reports/jackson/t-bad")
    assert rc == 2 and "--terms:" in err and "Traceback" not in err
    assert not (tmp_path / "reports/jackson/t-bad").exists()
