"""cot_dp.data and cot_dp.tokenizer: datasets in the benchmark's layout, read back; the fixed vocabulary."""
from __future__ import annotations

import pytest

from cot_dp import data
from cot_dp.tokenizer import EOS_ID, PAD_ID, Tokenizer
from cot_dp_helpers import task


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
