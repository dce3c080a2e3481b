"""cot_dp: tasks against independent solvers, datasets, tokenizer, model, training, FLOPs, the CLI."""
from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from cot_dp import data, flops
from cot_dp.cli import main as cot_main
from cot_dp.model import ArchConfig, CotTransformer, ModelConfig
from cot_dp.tasks import TaskConfig, TaskParams
from cot_dp.tasks import arithmetic, edit_distance
from cot_dp.tokenizer import EOS_ID, PAD_ID, Tokenizer
from cot_dp.train import TrainConfig, accuracy, batch_loss, heldout_loss, train
from jackson.attention import block_size, sparse_mask

PNG = b"\x89PNG\r\n\x1a\n"
BENCH_ED = "j y k k | y k y j y j <sep> 3 4 5 3 5 5 , 1 3 4 5 3 5 , 3 1 3 5 5 6 , 5 3 4 6 7 8 , <sep> 8"


def task(name="arithmetic", size=3, **params):
    return TaskConfig(name=name, size=size, params=TaskParams(**params))


# ---- arithmetic vs Python's own evaluation -----------------------------------------------------

class ModP:
    """An int mod p whose operators Python's parser combines (precedence, brackets, associativity)."""
    p = 11

    def __init__(self, v):
        self.v = v % self.p

    def __add__(self, o): return ModP(self.v + o.v)
    def __sub__(self, o): return ModP(self.v - o.v)
    def __mul__(self, o): return ModP(self.v * o.v)
    def __truediv__(self, o): return ModP(self.v * pow(o.v, -1, self.p))


def py_eval(tokens, p):
    ModP.p = p
    src = " ".join(f"ModP({t})" if t.isdigit() else t for t in tokens)
    return eval(src, {"ModP": ModP}).v  # noqa: S307 -- our own generated tokens


@pytest.mark.parametrize("p,size", [(11, 1), (11, 4), (11, 7), (7, 5), (13, 3)])
def test_arithmetic_cot_agrees_with_python_mod_p(p, size):
    cfg = task("arithmetic", size, p=p)
    rng = np.random.default_rng(size * 100 + p)
    for _ in range(60):
        toks = cfg.sample(rng)
        steps = " ".join(toks).split(" = ")
        assert len(steps) == size + 1                          # one operator per step
        want = py_eval(steps[0].split(), p)
        for k, s in enumerate(steps):
            s = s.split()
            assert sum(t in arithmetic.OPS for t in s) == size - k
            assert py_eval(s, p) == want                       # every step keeps the value
        assert toks[-1] == str(want) and steps[-1] == str(want)


def test_arithmetic_worked_example_and_leftmost_handle():
    cfg = task("arithmetic", 4)
    got = cfg.solve("( 7 - 0 ) * 5 * 0 - 10 =".split())
    assert " ".join(got) == "( 7 - 0 ) * 5 * 0 - 10 = 7 * 5 * 0 - 10 = 2 * 0 - 10 = 0 - 10 = 1"
    assert " ".join(cfg.solve("2 + 3 * 4 - 6 / 3 =".split())) == "2 + 3 * 4 - 6 / 3 = 2 + 1 - 6 / 3 = 3 - 6 / 3 = 3 - 2 = 1"


def test_p_must_be_prime():
    with pytest.raises(ValueError, match="--p"):
        task("arithmetic", 3, p=12).check()


# ---- edit distance vs a brute force over alignment paths ---------------------------------------

def ed_brute(s1, s2, ins, dele, sub, edges):
    """Min over every monotone path (0,0) -> (|s1|,|s2|) of its cost, each move costed on its own."""
    best = [float("inf")]

    def walk(i, j, cost):
        if (i, j) == (len(s1), len(s2)):
            best[0] = min(best[0], cost)
            return
        if i < len(s1):                                        # down: delete s1[i]
            walk(i + 1, j, cost + ((1 if edges == "unit" else dele) if j == 0 else dele))
        if j < len(s2):                                        # right: insert s2[j]
            walk(i, j + 1, cost + ((1 if edges == "unit" else ins) if i == 0 else ins))
        if i < len(s1) and j < len(s2):                        # diagonal: keep or substitute
            walk(i + 1, j + 1, cost + (0 if s1[i] == s2[j] else sub))
    walk(0, 0, 0)
    return best[0]


@pytest.mark.parametrize("edges", ["unit", "costs"])
def test_edit_distance_table_agrees_with_brute_force(edges):
    rng = np.random.default_rng(3)
    for trial in range(40):
        ins, dele, sub = (int(x) for x in rng.integers(1, 5, size=3))
        cfg = task("ed", 4, ins_cost=ins, del_cost=dele, sub_cost=sub, ed_edges=edges)
        s1 = list(rng.choice(list("abc"), size=int(rng.integers(1, 5))))
        s2 = list(rng.choice(list("abc"), size=int(rng.integers(1, 5))))
        dp = edit_distance.table(cfg, s1, s2)
        for i, j in itertools.product(range(1, len(s1) + 1), range(1, len(s2) + 1)):
            assert dp[i][j] == ed_brute(s1[:i], s2[:j], ins, dele, sub, edges)
        toks = cfg.solve([*s1, "|", *s2, "<sep>"])
        assert toks[-1] == str(dp[-1][-1])


def test_edit_distance_reproduces_the_public_benchmark_line():
    toks = BENCH_ED.split()
    assert task("ed", 4).solve(toks[:toks.index("<sep>") + 1]) == toks


def test_ed_samples_are_well_formed():
    cfg = task("ed", 6)
    rng = np.random.default_rng(0)
    for _ in range(50):
        s1, s2 = edit_distance.split_prompt(cfg.sample(rng))
        assert len(s1) <= len(s2) and 3 <= len(s1) <= 8 and 3 <= len(s2) <= 8 and s1 != s2


def test_ed_local_same_answers_and_local_blocks():
    rng = np.random.default_rng(1)
    ed, loc = task("ed", 5), task("ed_local", 5)
    for _ in range(30):
        a = ed.sample(rng)
        s1, s2 = edit_distance.split_prompt(a)
        b = loc.solve(a[:a.index("<sep>") + 1])
        assert b[-1] == a[-1]                                  # same problem, same answer
        blocks = " ".join(b[b.index("<sep>") + 1:-2]).split(" , ")
        dp = edit_distance.table(ed, s1, s2)
        assert len(blocks) == len(s1)
        for i, blk in enumerate(blocks, 1):                    # a_i..a_n | s2 : dp[i][1..]
            assert blk.replace(" ,", "").split() == [*s1[i - 1:], "|", *s2, ":", *map(str, dp[i][1:])]
            assert len(blk.split()) + 1 <= 3 * (ed.size + 2) + 4   # the stated reach m bounds every block


# ---- LIS vs brute force ------------------------------------------------------------------------

def test_lis_dp_agrees_with_brute_force_over_subsequences():
    rng = np.random.default_rng(2)
    cfg = task("lis", 9, value_range=12)
    for _ in range(40):
        toks = cfg.sample(rng)
        n = cfg.size
        a = [int(t) for t in toks[:n]]
        dp = [int(t) for t in toks[n + 1:2 * n + 1]]
        for i in range(n):
            best = max(len(c) for r in range(1, i + 2) for c in itertools.combinations(range(i + 1), r)
                       if c[-1] == i and all(a[x] < a[y] for x, y in zip(c, c[1:])))
            assert dp[i] == best
        assert toks[-1] == str(max(dp)) and toks[n] == toks[2 * n + 1] == "<sep>"


# ---- datasets ----------------------------------------------------------------------------------

def test_datasets_are_deterministic_disjoint_and_read_back(tmp_path):
    cfg = task("arithmetic", 3)
    tr, te = data.generate(cfg, 300, 60, seed=5)
    tr2, te2 = data.generate(cfg, 300, 60, seed=5)
    assert tr == tr2 and te == te2
    assert data.generate(cfg, 300, 60, seed=6)[0] != tr
    keys_tr, keys_te = {tuple(t) for t in tr}, {tuple(t) for t in te}
    assert len(keys_tr) == 300 and len(keys_te) == 60 and not keys_tr & keys_te
    a = data.write_dataset(tmp_path / "a", cfg, tr, te, 5)
    b = data.write_dataset(tmp_path / "b", cfg, tr2, te2, 5)
    for f in ("chain/train_data.txt", "chain/test_data.txt", "decoder/train_data.txt"):
        assert (a / f).read_bytes() == (b / f).read_bytes()
    line = (a / "chain/train_data.txt").read_text().splitlines()[0]
    assert line == " ".join(tr[0]) + " "                       # the benchmark's trailing space
    dec = (a / "decoder/test_data.txt").read_text().splitlines()[0].split()
    assert dec == te[0][:te[0].index("=") + 1] + [te[0][-1]]
    ds = data.load(a, cfg)
    assert len(ds.train) == 300 and len(ds.test) == 60
    assert ds.tokenizer.decode(ds.test.ids[7]) == te[7]
    assert ds.max_len == max(len(t) for t in tr + te)
    assert int(ds.test.prompt_lens[7]) == te[7].index("=") + 1


def test_too_few_distinct_examples_is_an_error():
    with pytest.raises(data.DataError, match="distinct"):
        data.generate(task("arithmetic", 1, p=2), 50, 10, seed=0)


@pytest.mark.parametrize("line,msg", [
    ("1 + 2 = 3 x", "token 'x'"),
    ("1 + 2 3", "no '='"),
    ("", "empty line"),
    ("1 + 2 = 4", "answer 4"),
    ("1 + 2 =", "nothing after the prompt"),
])
def test_malformed_lines_name_their_line_number(tmp_path, line, msg):
    cfg = task("arithmetic", 1)
    tr, te = data.generate(cfg, 20, 5, seed=0)
    folder = data.write_dataset(tmp_path / "d", cfg, tr, te, 0)
    lines = (folder / "chain/train_data.txt").read_text().splitlines()
    lines.insert(3, line)
    (folder / "chain/train_data.txt").write_text("\n".join(lines) + "\n")
    with pytest.raises(data.DataError, match=f"line 4: .*{msg}"):
        data.load(folder, cfg)


def test_reads_the_benchmarks_arithmetic_test_split_with_separate_answers(tmp_path):
    cfg = task("arithmetic", 2)
    chain = tmp_path / "d" / "chain"
    chain.mkdir(parents=True)
    (chain / "train_data.txt").write_text("( 7 - 0 ) * 5 = 7 * 5 = 2 \n1 + 2 * 3 = 1 + 6 = 7 \n")
    (chain / "test_data.txt").write_text("3 * 4 - 1 = \n2 / 3 + 1 = \n")
    (chain / "test_ans.txt").write_text("0\n9\n")
    ds = data.load(tmp_path / "d", cfg)
    assert ds.test.has_cot.tolist() == [False, False]
    assert [ds.tokenizer.vocab[int(a)] for a in ds.test.answers] == ["0", "9"]   # 2/3 = 2*4 = 8 mod 11; +1
    (chain / "test_ans.txt").write_text("0\n5\n")
    with pytest.raises(data.DataError, match="line 2: the answer 5"):
        data.load(tmp_path / "d", cfg)


def test_tokenizer_fixed_vocabulary_round_trip():
    tok = Tokenizer.for_task(task("arithmetic", 3))
    assert tok.vocab[:2] == ["<pad>", "<eos>"] and (PAD_ID, EOS_ID) == (0, 1)
    assert tok.vocab[2:9] == ["+", "-", "*", "/", "(", ")", "="] and tok.vocab[9:] == [str(i) for i in range(11)]
    toks = "( 1 + 10 ) / 3 = 0 / 3 = 0".split()
    ids = tok.encode(toks)
    assert ids[-1] == EOS_ID and tok.decode(ids + [PAD_ID, 5]) == toks
    with pytest.raises(KeyError):
        tok.encode(["11"])


# ---- the model -----------------------------------------------------------------------------------

def tiny_model(kind, L=30, D=16, seed=0, **arch):
    return CotTransformer(ModelConfig(model=kind, d_model=D, arch=ArchConfig(**arch)), 20, L, seed).eval()


@pytest.mark.parametrize("kind", ["standard", "sparse", "linear"])
def test_step_by_step_equals_full_forward(kind):
    m = tiny_model(kind, linear_chunk=8)
    x = torch.randint(2, 20, (3, 30), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        full = m(x)
        caches = [None] * len(m.blocks)
        inc = torch.stack([m.step(x[:, t], t, caches) for t in range(30)], dim=1)
    torch.testing.assert_close(inc, full, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("kind", ["standard", "sparse", "linear"])
def test_model_is_causal(kind):
    m = tiny_model(kind, linear_chunk=8)
    x = torch.randint(2, 20, (2, 30), generator=torch.Generator().manual_seed(1))
    y = x.clone()
    y[:, 17:] = (y[:, 17:] + 3) % 18 + 2                       # change every token after position 16
    with torch.no_grad():
        a, b = m(x), m(y)
    torch.testing.assert_close(a[:, :17], b[:, :17], rtol=0, atol=1e-6)
    assert not torch.allclose(a[:, 17:], b[:, 17:])


def test_sparse_model_uses_the_eq6_mask_with_the_papers_block():
    m = tiny_model("sparse", L=87)
    att = m.blocks[0].attn
    assert att.block == block_size(87) == 8
    assert torch.equal(att.mask, sparse_mask(87, 8, 1, 1))
    x = torch.randint(2, 20, (1, 40), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        logits, pats = m(x, return_patterns=True)              # the manual path
        torch.testing.assert_close(m(x), logits)               # the fused path computes the same
    assert (pats[0][0, :, ~sparse_mask(40, 8, 1, 1)] == 0).all()


def test_greedy_generation_equals_naive_recomputation():
    m = tiny_model("standard", L=12, seed=3)
    prompts = torch.tensor([[5, 6, 7, 8], [9, 10, 0, 0]])
    plens = torch.tensor([4, 2])
    out = m.generate(prompts, plens, EOS_ID)
    for b in range(2):
        seq = prompts[b, :int(plens[b])].tolist()
        while len(seq) < 13:
            with torch.no_grad():
                nxt = int(m(torch.tensor([seq[:12]]))[0, len(seq) - 1].argmax())
            seq.append(nxt)
            if nxt == EOS_ID:
                break
        assert out[b, :len(seq)].tolist() == seq


def test_same_seed_same_init_different_seed_different():
    a, b, c = tiny_model("linear", seed=4), tiny_model("linear", seed=4), tiny_model("linear", seed=5)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))
    assert not torch.equal(a.embed.weight, c.embed.weight)


# ---- training and evaluation --------------------------------------------------------------------

@pytest.fixture(scope="module")
def small_ds(tmp_path_factory):
    cfg = task("arithmetic", 2)
    tr, te = data.generate(cfg, 400, 40, seed=1)
    return data.load(data.write_dataset(tmp_path_factory.mktemp("ds") / "a2", cfg, tr, te, 1), cfg)


def test_loss_counts_only_tokens_after_the_prompt(small_ds):
    s = small_ds.train
    m = CotTransformer(ModelConfig(d_model=16), len(small_ds.tokenizer), small_ds.max_len, 0)
    _, count = batch_loss(m, s.ids[:8], s.lengths[:8], s.prompt_lens[:8])
    assert count == int((s.lengths[:8] - s.prompt_lens[:8]).sum())   # CoT, answer and <eos>


def test_training_fits_a_small_set_and_is_reproducible(small_ds):
    s = small_ds.train
    few = data.Split(s.ids[:32], s.lengths[:32], s.prompt_lens[:32], s.answers[:32], s.has_cot[:32])
    cfg = TrainConfig(steps=40, batch_size=32, lr=3e-3, eval_every=20, eval_size=32)
    runs = []
    for _ in range(2):
        m = CotTransformer(ModelConfig(d_model=16, arch=ArchConfig(dropout=0.0)), len(small_ds.tokenizer),
                           small_ds.max_len, 0)
        before = heldout_loss(m, few, 32, "cpu")
        runs.append((train(m, few, few, cfg, seed=0, progress=False), m))
    (r1, m1), (r2, m2) = runs
    assert [c["train_loss"] for c in r1.curve] == [c["train_loss"] for c in r2.curve]
    assert all(torch.equal(p, q) for p, q in zip(m1.parameters(), m2.parameters()))
    assert r1.curve[-1]["test_loss"] == pytest.approx(heldout_loss(m1, few, 32, "cpu"))
    assert r1.curve[-1]["test_loss"] < 0.5 * before       # it learns the 32 sequences it sees


class Oracle(torch.nn.Module):
    """Stands in for a model: generates the true sequences (or corrupts the answer)."""

    def __init__(self, split, corrupt=False):
        super().__init__()
        self.split, self.corrupt = split, corrupt

    def generate(self, prompts, plens, eos_id):
        i = next(k for k in range(len(self.split)) if torch.equal(self.split.ids[k, :prompts.shape[1]].long(), prompts[0]))
        ids = self.split.ids[i:i + len(prompts)].long().clone()
        if self.corrupt:
            ends = self.split.lengths[i:i + len(prompts)] - 2
            ids[torch.arange(len(prompts)), ends] = 2          # a wrong answer token
        return torch.cat([ids, torch.full((len(prompts), 2), eos_id)], dim=1)


def test_accuracy_scores_the_final_answer(small_ds):
    s = small_ds.test
    right = accuracy(Oracle(s), s, batch=len(s))
    assert right["accuracy"] == 1.0 and right["cot_exact"] == 1.0 and right["n_eval"] == len(s)
    wrong = accuracy(Oracle(s, corrupt=True), s, batch=len(s))
    assert wrong["accuracy"] == 0.0 and wrong["cot_exact"] == 0.0


# ---- FLOPs --------------------------------------------------------------------------------------

def test_flops_formula_by_summing_positions():
    D, L, V, M, H = 32, 40, 20, 3, 4
    mask = sparse_mask(L, block_size(L), 1, 1)
    for model in ("standard", "sparse", "linear"):
        tot = 0
        for i in range(1, L + 1):
            keys = i if model == "standard" else int(mask[i - 1].sum())
            attn = 4 * D * keys if model != "linear" else 4 * D * (D // H) + 4 * D
            tot += M * (8 * D * D + 16 * D * D + attn) + 2 * D * V
        assert flops.per_sequence(model, D, L, V, M, H) == tot
    assert flops.per_sequence("sparse", D, 400, V) < flops.per_sequence("standard", D, 400, V)


def test_paper_table2_is_24MD2L_with_the_stated_dims():
    dims = {"standard": (64, 128, 128, 128), "linear": (256, 512, 512, 512), "sparse": (128, 256, 256, 256)}
    for model, ds in dims.items():
        for D, L, paper in zip(ds, flops.PAPER_TABLE2_LENGTHS, flops.PAPER_TABLE2[model]):
            assert abs(flops.params_flops(D, L) / 1e9 / paper - 1) < 0.05, (model, D, L)


# ---- the command line -------------------------------------------------------------------------------

def one_line_error(capsys, argv, option):
    with pytest.raises(SystemExit) as e:
        cot_main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("cot-dp") and option in err[0], err
    return err[0]


@pytest.mark.parametrize("argv,option", [
    (["sweep", "--task", "sorting"], "--task"),
    (["sweep", "--sizes", "99"], "--sizes"),
    (["sweep", "--task", "ed", "--sizes", "2"], "--sizes"),
    (["sweep", "--dims", "30"], "--dims"),
    (["sweep", "--dims", "4"], "--dims"),
    (["sweep", "--models", "standard,performer"], "--models"),
    (["sweep", "--p", "9"], "--p"),
    (["sweep", "--quick", "--full"], "--quick"),
    (["sweep", "--dims", "sixteen"], "--dims"),
    (["data", "--task", "lis", "--size", "1"], "--sizes"),
    (["data", "--p", "1"], "--p"),
    (["mask", "--length", "0"], "--length"),
    (["frobnicate"], "unknown command"),
])
def test_bad_input_one_line_exit_2(tmp_path, capsys, argv, option):
    one_line_error(capsys, [*argv, *(["--out", str(tmp_path / "o")] if argv[0] in ("sweep", "data") else [])], option)
    assert not (tmp_path / "o").exists()


def test_train_rejects_malformed_data_and_too_short_models(tmp_path, capsys):
    assert cot_main(["data", "--task", "arithmetic", "--size", "2", "--n-train", "64", "--n-test", "8",
                     "--out", str(tmp_path / "d")]) == 0
    meta = json.loads((tmp_path / "d/meta.json").read_text())
    msg = one_line_error(capsys, ["train", "--data", str(tmp_path / "d"), "--max-len", "5"], "--max-len")
    assert f"{meta['max_len']} tokens" in msg
    one_line_error(capsys, ["train", "--data", str(tmp_path / "d"), "--task", "lis"], "--task")
    f = tmp_path / "d/chain/test_data.txt"
    f.write_text(f.read_text() + "3 + ( 4 =\n")
    msg = one_line_error(capsys, ["train", "--data", str(tmp_path / "d"), "--steps", "1"], "line 9")
    assert "test_data.txt" in msg and not (tmp_path / "d/runs").exists()


def test_mask_command_prints_the_pattern(capsys, tmp_path):
    assert cot_main(["mask", "--length", "16", "--png", str(tmp_path / "m.png")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("L = 16, B = 4")
    rows = out[1:17]
    assert all(("".join("#" if c else "." for c in r.tolist())) == rows[i]
               for i, r in enumerate(sparse_mask(16, 4, 1, 1)))
    assert (tmp_path / "m.png").read_bytes()[:8] == PNG


@pytest.fixture(scope="module")
def quick_sweep(tmp_path_factory):
    out = tmp_path_factory.mktemp("sweep") / "q"
    exe = Path(sys.executable).parent / "cot-dp"
    args = [str(exe), "sweep", "--quick", "--task", "arithmetic,lis", "--models", "standard,linear",
            "--out", str(out)]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=300)
    return out, proc, args


def test_quick_sweep_writes_results_figures_and_report(quick_sweep):
    out, proc, args = quick_sweep
    assert proc.returncode == 0, proc.stderr[-3000:]
    for f in ("results.csv", "summary.md", "summary.json", "min_gflops.csv", "report.json", "config.json",
              "command.txt", "accuracy_arithmetic.png", "accuracy_lis.png"):
        assert (out / f).is_file(), f
    assert (out / "accuracy_arithmetic.png").read_bytes()[:8] == PNG
    res = pd.read_csv(out / "results.csv")
    assert len(res) == 2 * 2 * 2                               # tasks x sizes x models (one D)
    assert set(res.model) == {"standard", "linear"} and (res.d_model == 16).all()
    assert res.accuracy.between(0, 1).all() and (res.gflops > 0).all() and res.baseline.between(0, 1).all()
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["preset"] == "quick" and cfg["grid"]["lis"]["sizes"] == [4, 6]
    assert (out / "command.txt").read_text().strip().endswith(f"--out {out}")
    rep = json.loads((out / "report.json").read_text())
    assert rep["section"] == "cot_dp" and "quick preset" in rep["title"]
    assert {f["file"] for f in rep["figures"]} == {"accuracy_arithmetic.png", "accuracy_lis.png"}
    assert set(rep) >= {"title", "data", "command", "seeds", "figures", "paper", "text"}
    assert "Preset: **quick**" in (out / "summary.md").read_text()
    assert (out / "data/arithmetic-2/chain/train_data.txt").is_file()


def test_quick_sweep_resumes_without_retraining(quick_sweep):
    out, _, args = quick_sweep
    before = {p.name: p.stat().st_mtime_ns for p in (out / "cells").glob("*/rows.csv")}
    proc = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "resuming: 8 of 8 cells already finished" in proc.stdout
    assert {p.name: p.stat().st_mtime_ns for p in (out / "cells").glob("*/rows.csv")} == before


def test_sweep_on_dask_gives_the_in_process_numbers(tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    args = ["sweep", "--quick", "--task", "arithmetic", "--models", "linear", "--sizes", "2"]
    assert cot_main(args + ["--out", str(tmp_path / "local")]) == 0
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        assert cot_main(args + ["--out", str(tmp_path / "dask"), "--scheduler", cluster.scheduler_address]) == 0
    a, b = (pd.read_csv(tmp_path / f / "results.csv") for f in ("local", "dask"))
    cols = ["accuracy", "cot_exact", "test_loss", "gflops", "baseline"]
    assert len(a) == 1 and np.allclose(a[cols].to_numpy(float), b[cols].to_numpy(float), rtol=1e-6)


def test_presets_and_options_on_top(tmp_path):
    from cot_dp.cli import run_cli
    from cot_dp.sweep import PRESETS, SweepConfig, validate
    get = lambda argv: run_cli("cot-dp sweep", SweepConfig, "", lambda c, cmd: c, argv,  # noqa: E731
                               {"quick": PRESETS["quick"], "full": PRESETS["full"]})[0]
    full = get(["--full", "--lr", "3e-4", "--task", "arithmetic,ed,lis", "--out", str(tmp_path / "f")])
    assert full.preset == "full" and full.train.lr == 3e-4 and full.train.epochs == 100
    assert full.train.batch_size == 512 and (full.n_train, full.n_test) == (1_000_000, 100_000)
    assert full.train.total_steps(full.n_train) == 195_313                 # 100 epochs of 1M at batch 512
    assert full.sizes_of("arithmetic") == (6, 10, 13, 16) and full.sizes_of("lis") == (40, 110, 175, 250)
    assert full.sizes_of("ed") == (6, 12, 16, 20) and full.dims_of("ed")[-1] == 1024
    assert full.arch.dropout == 0.1 and full.train.weight_decay == 0.01 and full.train.beta2 == 0.999
    validate(full)
    cpu = get(["--out", str(tmp_path / "c")])
    assert cpu.preset == "cpu" and len(cpu.cells()) == 27
    assert len(get(["--task", "ed,ed_local,lis"]).cells()) == 18
    assert get([]).resolved_out() == Path("reports/cot_dp/cpu-arithmetic")


def test_min_gflops_takes_the_cheapest_d_that_reaches_the_target():
    from cot_dp.sweep import _trend, min_gflops
    rows = [("standard", 2, 32, 0.95, 1.0), ("standard", 2, 64, 0.99, 4.0), ("standard", 3, 32, 0.5, 2.0),
            ("standard", 3, 64, 0.91, 8.0), ("linear", 2, 32, 0.2, 1.0), ("linear", 2, 64, 0.3, 4.0),
            ("linear", 3, 32, 0.1, 2.0), ("linear", 3, 64, 0.2, 8.0)]
    res = pd.DataFrame([{"task": "arithmetic", "model": m, "size": s, "d_model": d, "seed": 0, "accuracy": a,
                         "gflops": g, "gflops_params": g / 2, "L": 10 * s} for m, s, d, a, g in rows])
    mg = min_gflops(res, 0.9).set_index(["model", "size"])
    assert mg.loc[("standard", 2), "min_d"] == 32 and mg.loc[("standard", 2), "min_gflops"] == 1.0
    assert mg.loc[("standard", 3), "min_d"] == 64 and mg.loc[("standard", 3), "min_gflops"] == 8.0
    assert np.isnan(mg.loc[("linear", 3), "min_gflops"]) and mg.loc[("linear", 3), "best_accuracy"] == 0.2
    assert [_trend(x) for x in ([32, 64], [64, 64], [None, None], [32, None])] == \
        ["grows", "flat", "never reached", "reached at small sizes only"]


def test_answer_baseline_is_the_share_of_test_answers_equal_to_the_train_mode(tmp_path):
    from cot_dp.sweep import answer_baseline
    chain = tmp_path / "chain"
    chain.mkdir()
    ed = task("ed", 4)   # answers need not be right: read as load(check_answers=False) reads
    (chain / "train_data.txt").write_text("a b | a <sep> 1 2 , <sep> 3 \na | c <sep> 5 , <sep> 5 \nb | b <sep> 3 , <sep> 3 \n")
    (chain / "test_data.txt").write_text("c | c <sep> 3 , <sep> 3 \nc | a <sep> 5 , <sep> 5 \nd | d <sep> 5 , <sep> 5 \n"
                                         "d | a <sep> 3 , <sep> 3 \n")
    assert answer_baseline(tmp_path, ed) == 0.5              # train mode "3"; test answers 3, 5, 5, 3
    assert answer_baseline(tmp_path, ed, n_eval=3) == pytest.approx(1 / 3)
    (chain / "test_data.txt").write_text("c | c <sep> \nc | a <sep> \nd | d <sep> \nd | a <sep> \n")
    (chain / "test_ans.txt").write_text("3\n3\n3\n5\n")     # their split: answers kept apart
    assert answer_baseline(tmp_path, ed) == 0.75


def test_locality_summary_and_figure_state_the_measured_means(tmp_path):
    from cot_dp.sweep import SweepConfig, plot_locality, summarize
    cfg = SweepConfig(task="ed,ed_local", models="standard,linear", dims=(64,), sizes=(4, 6), out=str(tmp_path))
    rng = np.random.default_rng(0)
    res = pd.DataFrame([{"task": t, "model": m, "size": s, "d_model": 64, "seed": 0, "accuracy": rng.uniform(),
                         "cot_exact": rng.uniform(), "test_loss": rng.uniform(0.1, 1), "n_eval": 512,
                         "gflops": 1.0, "gflops_params": 0.5, "L": 10 * s + (40 if t == "ed_local" else 0),
                         "baseline": 0.1 * s}
                        for t in ("ed", "ed_local") for m in ("standard", "linear") for s in (4, 6)])
    summary = summarize(tmp_path, res, cfg, "cot-dp sweep --test")
    md = (tmp_path / "summary.md").read_text()
    for col, name in (("accuracy", "answer accuracy"), ("cot_exact", "Exact CoT"), ("test_loss", "Held-out loss")):
        mean = res.groupby(["task", "model"])[col].mean()
        want = "; ".join(f"{m} {mean[('ed_local', m)]:.3f} vs {mean[('ed', m)]:.3f}" for m in ("standard", "linear"))
        assert want in md, (name, want)
    assert "A constant answer (the training set's most frequent) scores 0.400 at size 4, 0.600 at size 6" in md
    assert summary["baseline"] == {t: {4: pytest.approx(0.4), 6: pytest.approx(0.6)} for t in ("ed", "ed_local")}
    path = plot_locality(tmp_path, res, cfg)
    assert path.name == "locality_ed_vs_ed_local.png" and path.read_bytes()[:8] == PNG
    assert plot_locality(tmp_path, res[res.task == "ed"], SweepConfig(task="ed,lis")) is None


def test_estimate_times_cells_and_trains_nothing(tmp_path, capsys):
    out = tmp_path / "e"
    assert cot_main(["sweep", "--quick", "--estimate", "--models", "linear", "--out", str(out)]) == 0
    est = pd.read_csv(out / "estimate.csv")
    assert len(est) == 2 and (est.step_ms > 0).all() and (est.projected_s > est.step_ms / 1000 * est.steps).all()
    assert not (out / "cells").exists() and not (out / "results.csv").exists()
    assert "projected:" in capsys.readouterr().out


@pytest.mark.parametrize("command", ["data", "sweep", "train", "mask"])
def test_help_lists_every_option(capsys, command):
    with pytest.raises(SystemExit) as e:
        cot_main([command, "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert {"data": "--n-train", "sweep": "--estimate", "train": "--max-len", "mask": "--length"}[command] in out
