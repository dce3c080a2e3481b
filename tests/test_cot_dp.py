"""cot_dp: tasks against independent solvers, datasets, tokenizer, model, training, FLOPs, the CLI."""
from __future__ import annotations

import itertools
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from conftest import assert_paper_figure
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


# ---- the command line: bad input and faults (issue 14) ---------------------------------------------
#
# FAULT_CASES: one entry per case, {"id", "command" (as a user types it, run in a scratch folder), "expect"};
# reports/RELIABILITY.md is generated from this list.  _HOW holds how each case is set up and checked.

FAULT_CASES: list[dict] = []
_HOW: dict[str, dict] = {}
DATA = "--task arithmetic --size 2 --n-train 32 --n-test 8"          # a dataset made in milliseconds
TINY = "--steps 2 --d-model 8 --n-heads 1 --n-layers 1 --batch-size 2"   # a model trained in a second


def _case(id, command, expect, setup=None, code=2, says=(), check=None):
    FAULT_CASES.append({"id": id, "command": command, "expect": expect})
    _HOW[id] = {"setup": setup, "code": code, "says": says, "check": check}


def _write(folder, size=2, command="setup"):
    """The dataset `cot-dp data $DATA` writes (seed 2023), with `command` recorded in its meta.json."""
    t = task("arithmetic", size)
    return data.write_dataset(folder, t, *data.generate(t, 32, 8, 2023), 2023, command)


def _dataset(p, mp):
    _write(p / "d")


def _dataset_with_run(size):
    def setup(p, mp):
        _write(p / "d", size)
        (p / "d/runs").mkdir()
        (p / "d/runs/keep.txt").write_text("a finished run\n")
    return setup


def _foreign(p, mp):
    (p / "mine").mkdir()
    (p / "mine/notes.txt").write_text("my notes\n")


def _meta(p):
    return json.loads((p / "d/meta.json").read_text())


def _nothing_written(p, text=""):
    assert not (p / "d/runs").exists() and not (p / "s").exists() and not (p / "new").exists()
    assert not (p / "runs").exists() and not (p / "reports").exists()


def _no_temp_left(p):
    assert not [q for q in p.rglob(".tmp-*")], list(p.rglob(".tmp-*"))


def _fail_on_call(k, real, exc):
    calls = [0]

    def fake(*a, **kw):
        calls[0] += 1
        if calls[0] == k:
            raise exc
        return real(*a, **kw)
    return fake


ENOSPC = OSError(28, "No space left on device")

# -- cot-dp data: never delete, never half-write
_case("data-out-folder-with-other-files", f"cot-dp data {DATA} --out mine",
      "refused in one line, exit 2: mine is not a dataset folder; its files untouched, nothing written",
      setup=_foreign, says=["--out: mine", "--force"],
      check=lambda p, t: sorted(x.name for x in (p / "mine").iterdir()) == ["notes.txt"])
_case("data-out-dot", f"cot-dp data {DATA} --out .",
      "refused in one line, exit 2 (it used to empty the current folder, then crash); the folder untouched",
      setup=lambda p, mp: (p / "notes.txt").write_text("x\n"), says=["--out: ."],
      check=lambda p, t: sorted(x.name for x in p.iterdir()) == ["notes.txt"])
_case("data-out-force", f"cot-dp data {DATA} --out mine --force",
      "writes the dataset's own files (chain/, decoder/, meta.json) into mine; notes.txt kept", setup=_foreign,
      code=0, check=lambda p, t: (p / "mine/notes.txt").read_text() == "my notes\n"
      and data.load(p / "mine", task("arithmetic", 2)) is not None and (p / "mine/meta.json").is_file())
_case("data-out-same-dataset", f"cot-dp data {DATA} --out d",
      "'already there', exit 0: d's meta.json names the same task, seed and sizes; nothing rewritten, d/runs kept",
      setup=_dataset_with_run(2), code=0, says=["already there"],
      check=lambda p, t: _meta(p)["command"] == "setup" and (p / "d/runs/keep.txt").is_file())
_case("data-out-other-dataset", f"cot-dp data {DATA} --out d",
      "refused in one line, exit 2: d holds a dataset made with other settings; it is left as it was",
      setup=_dataset_with_run(3), says=["other settings", "--force"],
      check=lambda p, t: _meta(p)["task"]["size"] == 3 and (p / "d/runs/keep.txt").is_file())
_case("data-out-other-dataset-force", f"cot-dp data {DATA} --out d --force",
      "replaces the dataset's own files only; d/runs (a finished training run) kept",
      setup=_dataset_with_run(3), code=0,
      check=lambda p, t: _meta(p)["task"]["size"] == 2 and (p / "d/runs/keep.txt").is_file())
_case("data-out-is-a-file", f"cot-dp data {DATA} --out f.txt",
      "refused in one line, exit 2: --out is a file", setup=lambda p, mp: (p / "f.txt").write_text("x\n"),
      says=["not a folder"], check=lambda p, t: (p / "f.txt").read_text() == "x\n")
_case("data-out-owned-name-is-a-folder", f"cot-dp data {DATA} --out mine --force",
      "refused in one line, exit 2: mine/meta.json is a folder, so the dataset cannot be written; nothing touched",
      setup=lambda p, mp: (_foreign(p, mp), (p / "mine/meta.json").mkdir()), says=["meta.json exists and is not a file"],
      check=lambda p, t: sorted(x.name for x in (p / "mine").iterdir()) == ["meta.json", "notes.txt"])
_case("data-disk-full-new-folder", f"cot-dp data {DATA} --out new",
      "disk full while writing (injected ENOSPC): one line, exit 2; no folder new, no temporary files left",
      setup=lambda p, mp: mp.setattr(data, "write_lines", _fail_on_call(2, data.write_lines, ENOSPC)),
      says=["cannot write", "No space left"], check=lambda p, t: not (p / "new").exists() and _no_temp_left(p) is None)
_case("data-disk-full-replacing", f"cot-dp data {DATA} --out d --force",
      "disk full while writing (injected ENOSPC): one line, exit 2; d keeps its previous complete dataset",
      setup=lambda p, mp: (_dataset_with_run(3)(p, mp),
                           mp.setattr(data, "write_lines", _fail_on_call(3, data.write_lines, ENOSPC))),
      says=["cannot write"], check=lambda p, t: _meta(p)["task"]["size"] == 3 and _no_temp_left(p) is None
      and data.load(p / "d", task("arithmetic", 3)) is not None)
_case("data-fault-while-moving-in", f"cot-dp data {DATA} --out d --force",
      "a fault while the new files are moved in (injected): exit 2; d has no meta.json, so nothing half-written "
      "looks complete; d/runs kept",
      setup=lambda p, mp: (_dataset_with_run(3)(p, mp), mp.setattr(data.os, "replace", _fail_on_call(2, os.replace, ENOSPC))),
      says=["cannot write"], check=lambda p, t: not (p / "d/meta.json").exists() and (p / "d/runs/keep.txt").is_file()
      and _no_temp_left(p) is None)
for _id, _opt, _says in [("seed-negative", "--data-seed -1", "--data-seed"),
                         ("seed-2**63", "--data-seed 9223372036854775808", "--data-seed"),
                         ("n-train-0", "--n-train 0", "--n-train"), ("lis-size-1", "--task lis --size 1", "--size"),
                         ("p-not-prime", "--p 1", "--p"), ("task-unknown", "--task sorting", "--task"),
                         ("value-range-1", "--task lis --value-range 1", "--value-range")]:
    _case(f"data-{_id}", f"cot-dp data {_opt} --out new", f"one line naming {_says}, exit 2; nothing written",
          says=[_says], check=_nothing_written)

# -- cot-dp train: unreadable data folders
_case("train-data-missing", "cot-dp train --data nowhere", "one line naming nowhere, exit 2", says=["nowhere"])


def _bytes(rel, content):
    def setup(p, mp):
        _write(p / "d")
        (p / "d" / rel).write_bytes(content(p / "d" / rel))
    return setup


_case("train-data-not-utf8", "cot-dp train --data d",
      "one line naming d/chain/train_data.txt and its line, exit 2 (it was a UnicodeDecodeError traceback)",
      setup=_bytes("chain/train_data.txt", lambda f: f.read_bytes().replace(b"=", b"\xff=", 2)),
      says=["train_data.txt line 1: not UTF-8"], check=_nothing_written)
_case("train-meta-truncated", "cot-dp train --data d", "one line naming d/meta.json (not valid JSON), exit 2",
      setup=_bytes("meta.json", lambda f: f.read_bytes()[:40]), says=["meta.json: not valid JSON"], check=_nothing_written)
_case("train-meta-without-task", "cot-dp train --data d", "one line naming d/meta.json and its 'task' entry, exit 2",
      setup=_bytes("meta.json", lambda f: b'{"seed": 1}'), says=["meta.json: no usable 'task'"], check=_nothing_written)
_case("train-meta-not-utf8", "cot-dp train --data d", "one line naming d/meta.json (not UTF-8), exit 2",
      setup=_bytes("meta.json", lambda f: b"\xff\xfe{}"), says=["meta.json: not UTF-8"], check=_nothing_written)
_case("train-meta-unknown-task", "cot-dp train --data d", "one line naming d/meta.json and the task it records, exit 2",
      setup=_bytes("meta.json", lambda f: b'{"task": {"name": "sorting", "size": 2, "params": {}}}'),
      says=["meta.json: records a task", "sorting"], check=_nothing_written)
_case("train-data-file-empty", "cot-dp train --data d", "one line naming d/chain/train_data.txt (no examples), exit 2",
      setup=_bytes("chain/train_data.txt", lambda f: b""), says=["train_data.txt: no examples"], check=_nothing_written)
_case("train-data-file-missing", "cot-dp train --data d", "one line naming d/chain/test_data.txt (no such file), exit 2",
      setup=lambda p, mp: (_write(p / "d"), (p / "d/chain/test_data.txt").unlink()),
      says=["test_data.txt: no such file"], check=_nothing_written)
_case("train-malformed-line", "cot-dp train --data d",
      "one line naming the file and line 9 (a prompt with no answer), exit 2",
      setup=_bytes("chain/test_data.txt", lambda f: f.read_bytes() + b"3 + ( 4 =\n"),
      says=["test_data.txt line 9"], check=_nothing_written)
_case("train-no-meta-no-task", "cot-dp train --data d",
      "a folder without meta.json (the benchmark's) and no --task/--size: one line, exit 2",
      setup=lambda p, mp: (_write(p / "d"), (p / "d/meta.json").unlink()), says=["--task, --size"], check=_nothing_written)
_case("train-task-mismatch", "cot-dp train --data d --task lis",
      "one line: d was made for arithmetic size 2 (meta.json), exit 2", setup=_dataset, says=["--task", "arithmetic size 2"],
      check=_nothing_written)
_case("train-max-len-too-short", "cot-dp train --data d --max-len 5",
      "one line: the data's sequences are longer than 5 positions, exit 2", setup=_dataset,
      says=["--max-len"], check=lambda p, t: f"{_meta(p)['max_len']} tokens" in t and _nothing_written(p) is None)

# -- option validation, before anything is read, computed or written
BAD_TRAINING_OPTIONS = [("lr-nan", "--lr nan", "--lr"), ("lr-inf", "--lr inf", "--lr"), ("lr-0", "--lr 0", "--lr"),
                        ("steps-0", "--steps 0", "--steps"), ("batch-size-0", "--batch-size 0", "--batch-size"),
                        ("epochs-inf", "--epochs inf", "--epochs"), ("weight-decay-inf", "--weight-decay inf", "--weight-decay"),
                        ("grad-clip-inf", "--grad-clip inf", "--grad-clip"), ("beta2-1", "--beta2 1", "--beta2"),
                        ("eval-every-0", "--eval-every 0", "--eval-every"), ("schedule-unknown", "--schedule bogus", "--schedule"),
                        ("dropout-nan", "--dropout nan", "--dropout"), ("device-unknown", "--device tpu", "--device")]
for _id, _opt, _says in BAD_TRAINING_OPTIONS + [
        ("dim-0", "--d-model 0", "--d-model"), ("seed-negative", "--seed -1", "--seed"),
        ("seed-2**63", "--seed 9223372036854775808", "--seed"), ("model-unknown", "--model performer", "--model"),
        ("n-eval-negative", "--n-eval -1", "--n-eval"), ("max-len-negative", "--max-len -1", "--max-len"),
        ("options-beside-meta", "--p 13", "--p")]:
    _case(f"train-{_id}", f"cot-dp train --data d {_opt}", f"one line naming {_says}, exit 2; nothing read or written",
          setup=_dataset, says=[_says], check=_nothing_written)
for _id, _opt, _says in BAD_TRAINING_OPTIONS + [
        ("seeds-negative", "--seeds -1", "--seeds"), ("seeds-2**63", "--seeds 9223372036854775808", "--seeds"),
        ("data-seed-negative", "--data-seed -1", "--data-seed"), ("target-acc-nan", "--target-acc nan", "--target-acc"),
        ("n-eval-negative", "--n-eval -1", "--n-eval"), ("task-unknown", "--task sorting", "--task"),
        ("size-too-big", "--size 99", "--size"), ("ed-size-too-small", "--task ed --size 2", "--size"),
        ("dims-not-multiple-of-heads", "--d-model 30", "--d-model"), ("dims-too-small", "--d-model 4", "--d-model"),
        ("dims-0", "--d-model 0", "--d-model"), ("dims-not-a-number", "--d-model sixteen", "--d-model"),
        ("model-unknown", "--model standard,performer", "--model"), ("p-not-prime", "--p 9", "--p"),
        ("two-presets", "--full", "--quick")]:
    _case(f"sweep-{_id}", f"cot-dp sweep --quick {_opt} --out s", f"one line naming {_says}, exit 2; nothing written",
          says=[_says], check=_nothing_written)
_case("sweep-corrupt-dataset-meta", "cot-dp sweep --quick --task arithmetic --model linear --size 2 --out s",
      "a truncated s/data/arithmetic-2/meta.json: one line naming it, exit 2",
      setup=lambda p, mp: ((p / "s/data/arithmetic-2").mkdir(parents=True),
                           (p / "s/command.txt").write_text("cot-dp sweep --quick\n"),    # the earlier run's folder
                           (p / "s/data/arithmetic-2/meta.json").write_text('{"task": {')), says=["meta.json: not valid JSON"],
      check=lambda p, t: not (p / "s/cells").exists())
_case("sweep-quick-default-out", "cot-dp sweep --quick --estimate --task arithmetic --model linear --size 2",
      "a smoke run writes to runs/cot_dp/quick-arithmetic (printed), never under reports/", code=0,
      says=["output: runs/cot_dp/quick-arithmetic"],
      check=lambda p, t: (p / "runs/cot_dp/quick-arithmetic/estimate.csv").is_file() and not (p / "reports").exists())
for _id, _opt, _says in [("length-0", "--length 0", "--length"), ("c-negative", "--c -1", "--c"), ("k-0", "--k 0", "--k"),
                         ("png-missing-folder", "--png nowhere/m.png", "--png"), ("png-unknown-format", "--png m.xyz", "--png"),
                         ("png-is-a-folder", "--png sub.png", "--png")]:
    _case(f"mask-{_id}", f"cot-dp mask {_opt}", f"one line naming {_says}, exit 2; no file written", says=[_says],
          setup=lambda p, mp: (p / "sub.png").mkdir(),
          check=lambda p, t: sorted(x.name for x in p.iterdir()) == ["sub.png"] and not any((p / "sub.png").iterdir()))
_case("unknown-command", "cot-dp frobnicate", "one line listing the commands, exit 2", says=["unknown command"])


# -- the public CoT benchmark's data as it is (issue 16)
def _benchmark_lis(p, mp):
    """Their LIS lines reach 249, above our default range 0..149; no meta.json."""
    t = task("lis", 4, value_range=250)
    lines = [t.solve(f"{a} {b} {c} {d} <sep>".split()) for a, b, c, d in
             [(249, 3, 100, 7), (5, 6, 1, 2), (9, 8, 7, 6), (1, 2, 3, 4), (200, 10, 20, 30), (0, 149, 150, 248)]]
    (p / "lis/chain").mkdir(parents=True)
    (p / "lis/chain/train_data.txt").write_text("".join(" ".join(x) + " \n" for x in lines[:4]))
    (p / "lis/chain/test_data.txt").write_text("".join(" ".join(x) + " \n" for x in lines[4:]))


def _benchmark_arithmetic(p, mp):
    """Their arithmetic test split: prompts only, answers in test_ans.txt, so no held-out CoT."""
    (p / "ar/chain").mkdir(parents=True)
    (p / "ar/chain/train_data.txt").write_text("( 7 - 0 ) * 5 = 7 * 5 = 2 \n1 + 2 * 3 = 1 + 6 = 7 \n")
    (p / "ar/chain/test_data.txt").write_text("3 * 4 - 1 = \n2 / 3 + 1 = \n")
    (p / "ar/chain/test_ans.txt").write_text("0\n9\n")


_case("train-benchmark-lis-values-to-249", f"cot-dp train --data lis --task lis --size 4 {TINY}",
      "trains: --value-range raised from 150 to 250, taken from the data, and said so (it was refused: token '249')",
      setup=_benchmark_lis, code=0, says=["--value-range raised from 150 to 250 (taken from the data)"],
      check=lambda p, t: json.loads((p / "lis/runs/standard-d8-s0/config.json").read_text())
      ["task_resolved"]["params"]["value_range"] == 250)
_case("train-benchmark-arithmetic-no-heldout-cot", f"cot-dp train --data ar --task arithmetic --size 2 {TINY}",
      "trains; held-out loss reported as NaN (printed n/a), not 0.0: no test line carries a CoT",
      setup=_benchmark_arithmetic, code=0, says=["held-out loss n/a"],
      check=lambda p, t: np.isnan(pd.read_csv(p / "ar/runs/standard-d8-s0/rows.csv").test_loss[0])
      and pd.read_csv(p / "ar/runs/standard-d8-s0/curve.csv").test_loss.isna().all())


@pytest.mark.parametrize("case", FAULT_CASES, ids=[c["id"] for c in FAULT_CASES])
def test_fault_case(case, tmp_path, monkeypatch, capsys):
    how = _HOW[case["id"]]
    monkeypatch.chdir(tmp_path)
    if how["code"] == 2:   # a refused command computes nothing (and a regression cannot start a long training)
        monkeypatch.setattr("cot_dp.sweep.train", lambda *a, **k: pytest.fail("trained despite the bad input"))
    if how["setup"]:
        how["setup"](tmp_path, monkeypatch)
    argv = shlex.split(case["command"])
    assert argv[0] == "cot-dp"
    try:
        code = cot_main(argv[1:])
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    assert code == how["code"], (out, err)
    if code == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("cot-dp") and ": error: " in lines[0], err
    for s in how["says"]:
        assert s in out + err, (s, out, err)
    if how["check"]:
        assert how["check"](tmp_path, out + err) is not False


def test_fault_cases_are_listed_once_with_a_command_and_an_expectation():
    ids = [c["id"] for c in FAULT_CASES]
    assert len(ids) == len(set(ids)) == len(_HOW)
    assert all(set(c) == {"id", "command", "expect"} and c["command"].startswith("cot-dp ") and c["expect"]
               for c in FAULT_CASES)


@pytest.mark.slow
def test_killed_data_run_leaves_the_earlier_dataset_or_nothing(tmp_path):
    """SIGKILL while `cot-dp data` writes (held there after its first file): an existing folder keeps its
    earlier complete dataset byte for byte, a new folder does not appear; only a hidden .tmp-* is left."""
    slow = ("import sys, time\nfrom cot_dp import data\nfrom cot_dp.cli import main\nreal = data.write_lines\n"
            "def held(path, lines):\n    real(path, lines)\n    print('wrote', flush=True)\n    time.sleep(60)\n"
            "data.write_lines = held\nmain(sys.argv[1:])\n")
    _write(tmp_path / "d", size=3)
    (tmp_path / "d/runs").mkdir()
    before = {f: (tmp_path / "d" / f).read_bytes() for f in data.OWNED_FILES}
    for out in ("d", "new"):
        proc = subprocess.Popen([sys.executable, "-c", slow, "data", *DATA.split(), "--out", out, "--force"],
                                cwd=tmp_path, stdout=subprocess.PIPE, env={**os.environ, "OMP_NUM_THREADS": "1"})
        assert proc.stdout.readline().strip() == b"wrote"
        proc.kill()
        proc.wait()
        proc.stdout.close()
    assert {f: (tmp_path / "d" / f).read_bytes() for f in data.OWNED_FILES} == before
    assert (tmp_path / "d/runs").is_dir() and not (tmp_path / "new").exists()
    assert [q.name.startswith(".tmp-") for q in tmp_path.iterdir() if q.name not in ("d",)] == [True]


def test_heldout_loss_is_nan_without_cot_lines(small_ds):
    s = small_ds.test
    no_cot = data.Split(s.ids[:4], s.lengths[:4], s.prompt_lens[:4], s.answers[:4], torch.zeros(4, dtype=torch.bool))
    m = CotTransformer(ModelConfig(d_model=16), len(small_ds.tokenizer), small_ds.max_len, 0)
    assert np.isnan(heldout_loss(m, no_cot, 4, "cpu")) and heldout_loss(m, s, 4, "cpu") > 0


def test_summaries_write_n_a_where_there_is_no_heldout_cot(tmp_path):
    from cot_dp.sweep import SweepConfig, summarize
    cfg = SweepConfig(task="ed,ed_local", models="standard", dims=(64,), sizes=(4,), out=str(tmp_path))
    res = pd.DataFrame([{"task": t, "model": "standard", "size": 4, "d_model": 64, "seed": 0, "accuracy": 0.5,
                         "cot_exact": np.nan, "test_loss": np.nan, "n_eval": 8, "gflops": 1.0, "gflops_params": 0.5,
                         "L": 40} for t in ("ed", "ed_local")])
    summary = summarize(tmp_path, res, cfg, "cot-dp sweep --test")
    md = (tmp_path / "summary.md").read_text()
    assert "Exact CoT: standard n/a vs n/a" in md and "Held-out loss per CoT/answer token: standard n/a vs n/a" in md
    assert summary["tasks"]["ed"]["standard"]["mean_test_loss"] is None
    assert "NaN" not in (tmp_path / "summary.json").read_text()


def test_quick_presets_never_default_under_reports():
    from cot_dp.sweep import SweepConfig
    assert SweepConfig(quick=True).resolved_out() == Path("runs/cot_dp/quick-arithmetic")
    assert SweepConfig(quick=True, task="ed,lis").resolved_out() == Path("runs/cot_dp/quick-ed_lis")
    assert SweepConfig().resolved_out() == Path("reports/cot_dp/cpu-arithmetic")   # the committed results' folder


def test_data_rerun_over_a_dataset_with_runs_inside_keeps_them(tmp_path, capsys):
    args = ["data", *DATA.split(), "--out", str(tmp_path / "d")]
    assert cot_main(args) == 0
    (tmp_path / "d/runs/standard-d8-s0").mkdir(parents=True)
    (tmp_path / "d/runs/standard-d8-s0/rows.csv").write_text("accuracy\n1\n")
    before = {f: (tmp_path / "d" / f).stat().st_mtime_ns for f in data.OWNED_FILES}
    assert cot_main(args) == 0
    assert "already there" in capsys.readouterr().out
    assert {f: (tmp_path / "d" / f).stat().st_mtime_ns for f in data.OWNED_FILES} == before
    assert (tmp_path / "d/runs/standard-d8-s0/rows.csv").is_file()


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
    args = [str(exe), "sweep", "--quick", "--task", "arithmetic,lis", "--model", "standard,linear",
            "--out", str(out)]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=300)
    return out, proc, args


@pytest.mark.slow
def test_quick_sweep_writes_results_figures_and_report(quick_sweep):
    out, proc, args = quick_sweep
    assert proc.returncode == 0, proc.stderr[-3000:]
    for f in ("results.csv", "summary.md", "summary.json", "min_gflops.csv", "report.json", "config.json",
              "command.txt", "accuracy_arithmetic.png", "accuracy_lis.png"):
        assert (out / f).is_file(), f
    assert (out / "accuracy_arithmetic.png").read_bytes()[:8] == PNG
    for f in ("accuracy_arithmetic.png", "accuracy_lis.png"):
        assert_paper_figure(out / f)
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


@pytest.mark.slow
def test_quick_sweep_resumes_without_retraining(quick_sweep):
    out, _, args = quick_sweep
    before = {p.name: p.stat().st_mtime_ns for p in (out / "cells").glob("*/rows.csv")}
    proc = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "resuming: 8 of 8 cells already finished" in proc.stdout
    assert {p.name: p.stat().st_mtime_ns for p in (out / "cells").glob("*/rows.csv")} == before


@pytest.mark.slow
def test_sweep_on_dask_gives_the_in_process_numbers(tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    args = ["sweep", "--quick", "--task", "arithmetic", "--model", "linear", "--size", "2"]
    assert cot_main(args + ["--out", str(tmp_path / "local")]) == 0
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        assert cot_main(args + ["--out", str(tmp_path / "dask"), "--dask-scheduler", cluster.scheduler_address]) == 0
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
    assert cot_main(["sweep", "--quick", "--estimate", "--model", "linear", "--out", str(out)]) == 0
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
