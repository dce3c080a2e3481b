"""Datasets in the public CoT benchmark's text format, and their tensors.

A dataset folder holds (Feng et al. 2023's layout; one example per line, tokens separated by
single spaces, a trailing space as theirs):
    <dir>/chain/train_data.txt, <dir>/chain/test_data.txt      prompt, CoT and answer
    <dir>/decoder/train_data.txt, <dir>/decoder/test_data.txt  prompt and answer only
    <dir>/meta.json                                            task, seed, counts, lengths (ours)
Reading also accepts their arithmetic test split, whose lines stop at the first "=" with the
answers in chain/test_ans.txt.  Train and test are disjoint and free of repeats, and the same
task config and seed give the same files.  Writing never deletes: `write_dataset` writes or
replaces only the files in OWNED_FILES (meta.json last), through a temporary folder.
"""
from __future__ import annotations

import dataclasses
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from .tasks import TaskConfig, TaskParams
from .tokenizer import PAD_ID, Tokenizer


class DataError(ValueError):
    """A dataset that cannot be used; the message names the file and line."""


# ---- generation ------------------------------------------------------------------------------

EXAMPLE_BYTES = (20, 128)    # memory of one generated example of L tokens: at least 20 L + 128 bytes (its list and
                             # token strings, and the tuple the repeat check keeps), the price of `generate`; measured
                             # with tracemalloc over 2,001 examples: 22 (arithmetic 16) to 68 (lis 250) bytes a token


def longest_example(task: TaskConfig, draws: int = 4) -> int:
    """The longest of a few examples of `task` (tokens, without <eos>): the length a price is computed from."""
    rng = np.random.default_rng(0)
    return max(len(task.sample(rng)) for _ in range(draws))


def generation_bytes(task: TaskConfig, n: int) -> dict[str, float]:
    per, fixed = EXAMPLE_BYTES
    return {f"{n:,} examples of about {longest_example(task):,} tokens": n * (per * longest_example(task) + fixed)}


def generate(task: TaskConfig, n_train: int, n_test: int, seed: int) -> tuple[list[list[str]], list[list[str]]]:
    """n_train + n_test distinct examples (test disjoint from train), in the order drawn; priced first
    (`generation_bytes`, jackson.budget): a request past the memory limit is a one-line DataError."""
    from jackson import budget
    budget.check(f"--n-train/--n-test: generating {task.name} size {task.size}", generation_bytes(task, n_train + n_test),
                 DataError)
    rng = np.random.default_rng([seed, 6])
    seen: set[tuple[str, ...]] = set()
    out: list[list[str]] = []
    misses, need = 0, n_train + n_test
    while len(out) < need:
        ex = task.sample(rng)
        key = tuple(ex)
        if key in seen:
            misses += 1
            if misses > 1000 + 20 * need:   # the task has fewer distinct examples than asked for
                raise DataError(f"--n-train/--n-test: {task.name} size {task.size} gave only {len(out)} distinct "
                                f"examples of the {need} asked for; ask for fewer")
            continue
        seen.add(key)
        out.append(ex)
    return out[:n_train], out[n_train:]


# The files a dataset folder is made of: the only paths `write_dataset` ever writes or replaces.
# meta.json is written last, so a folder with a meta.json holds a complete dataset.
SPLIT_FILES = ("chain/train_data.txt", "chain/test_data.txt", "decoder/train_data.txt", "decoder/test_data.txt")
OWNED_FILES = (*SPLIT_FILES, "meta.json")


def write_lines(path: Path, lines) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for toks in lines:
            f.write(" ".join(toks) + " \n")


def dataset_meta(task: TaskConfig, train, test, seed: int, command: str = "") -> dict:
    lengths = [len(t) for t in [*train, *test]]
    return {"task": dataclasses.asdict(task), "seed": seed, "n_train": len(train), "n_test": len(test),
            "max_len": max(lengths), "mean_len": float(np.mean(lengths)), "vocab": Tokenizer.for_task(task).vocab,
            "command": command}


def check_no_links(folder, root=None) -> None:
    """Refuse (DataError, one line) a dataset folder that `write_dataset` would write through a symbolic
    link: no path below `root` (default: `folder` itself) on the way to a file it writes -- the folders
    between root and `folder`, chain/, decoder/, and the files -- may be a link, so no write follows one
    out of the folder the user named.  `root` itself may be a link: it is the folder named."""
    folder = Path(folder)
    root = folder if root is None else Path(root)
    try:
        between = folder.relative_to(root).parts
    except ValueError:
        raise DataError(f"{folder}: not inside {root}") from None
    for name in OWNED_FILES:
        p = root
        for part in (*between, *Path(name).parts):
            p = p / part
            if p.is_symlink():
                raise DataError(f"{p} is a symbolic link (to {os.readlink(p)}); a dataset is written only "
                                f"inside {root}, never through a link: remove the link or pick another folder")
            if not p.exists():
                break


def write_dataset(folder, task: TaskConfig, train, test, seed: int, command: str = "", root=None) -> Path:
    """Write the chain/ and decoder/ splits and meta.json into `folder`, atomically; nothing else in
    `folder` is touched, and nothing is written through a symbolic link below `root` (default: `folder`;
    `check_no_links`).

    Everything is written into a fresh temporary folder first.  A new `folder` is that temporary
    folder renamed; into an existing one the files are moved one by one (os.replace) after its old
    meta.json is removed, and the new meta.json goes in last, so a run killed at any moment leaves
    either the previous complete dataset or files without a meta.json, never a mix that looks complete."""
    check_no_links(folder, root)
    folder = Path(folder).resolve()
    sep = task.sep
    folder.parent.mkdir(parents=True, exist_ok=True)
    # beside a new folder; inside an existing one (always writable and on the same file system)
    tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{folder.name}-", dir=folder if folder.is_dir() else folder.parent))
    try:
        for split, lines in (("train", train), ("test", test)):
            write_lines(tmp / "chain" / f"{split}_data.txt", lines)
            write_lines(tmp / "decoder" / f"{split}_data.txt", (t[:t.index(sep) + 1] + [t[-1]] for t in lines))
        (tmp / "meta.json").write_text(json.dumps(dataset_meta(task, train, test, seed, command), indent=1),
                                       encoding="utf-8")
        if not folder.exists():
            os.rename(tmp, folder)
            return folder
        (folder / "meta.json").unlink(missing_ok=True)
        for name in OWNED_FILES:                     # meta.json last
            (folder / name).parent.mkdir(exist_ok=True)
            os.replace(tmp / name, folder / name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)       # ours: made by mkdtemp above (gone after the rename)
    return folder


MAX_META_BYTES = 1 << 20     # a meta.json is a few hundred bytes; a larger one is refused unread
MAX_LINE_BYTES = 1 << 20     # one line of a split file (the longest CoT line of any preset is under 40 kB)
MAX_PROMPT_TOKENS = 2048     # a prompt longer than this is refused before it is solved (the longest of any task at
                             # its largest size, LIS 512, has about 514 tokens)
TOKEN_LIST_BYTES = 24        # memory per byte of a split file once read as lists of token strings (a str object
                             # and a list slot per 2-3 byte token), the price of `load` before it reads


def read_meta(folder) -> dict:
    """<folder>/meta.json as a dict; DataError naming the file if it is unreadable, not a regular file (a FIFO is
    never opened), larger than MAX_META_BYTES, nested past jackson.config.MAX_JSON_DEPTH or not a JSON object."""
    from jackson.config import UsageError, loads_json
    path = Path(folder) / "meta.json"
    try:
        _regular(path)
        if path.stat().st_size > MAX_META_BYTES:
            raise DataError(f"{path}: {path.stat().st_size:,} bytes, more than a meta.json's limit of {MAX_META_BYTES:,}")
        meta = loads_json(path.read_text(encoding="utf-8"), "meta.json", path)
    except UsageError as e:
        raise DataError(str(e)) from None
    except UnicodeDecodeError:
        raise DataError(f"{path}: not UTF-8 text") from None
    except json.JSONDecodeError as e:
        raise DataError(f"{path}: not valid JSON ({e.msg}, line {e.lineno} column {e.colno}; truncated?)") from None
    except OSError as e:
        raise DataError(f"{path}: cannot read ({e.strerror})") from None
    if not isinstance(meta, dict):
        raise DataError(f"{path}: not a JSON object")
    return meta


def same_dataset(meta: dict, task: TaskConfig, seed: int, n_train: int, n_test: int) -> bool:
    """Whether a meta.json (as read) describes the dataset these settings generate."""
    return (meta.get("task") == dataclasses.asdict(task) and meta.get("seed") == seed
            and meta.get("n_train") == n_train and meta.get("n_test") == n_test)


def task_from_meta(folder) -> TaskConfig:
    """The TaskConfig recorded in <folder>/meta.json (what `write_dataset` writes); DataError naming
    the file if the entry is missing or ill-typed."""
    path = Path(folder) / "meta.json"
    m = read_meta(folder).get("task")
    if not isinstance(m, dict) or not isinstance(m.get("name"), str) or type(m.get("size")) is not int:
        raise DataError(f"{path}: no usable 'task' entry (want {{\"name\": str, \"size\": int, \"params\": {{...}}}})")
    params = m.get("params", {})
    fields = {f.name: f for f in dataclasses.fields(TaskParams)}
    if not isinstance(params, dict) or any(k not in fields or type(v) is not type(getattr(TaskParams(), k))
                                           for k, v in params.items()):
        raise DataError(f"{path}: 'task.params' must map {', '.join(fields)} to values of their types, got "
                        f"{params if _quotable(path) else _hidden(path)}")
    task = TaskConfig(name=m["name"], size=m["size"], params=TaskParams(**params))
    try:
        task.check()
    except ValueError as e:
        raise DataError(f"{path}: records a task this code cannot read ({e})") from None
    return task


def largest_number(folder) -> int:
    """The largest integer token in <folder>/chain/{train,test}_data.txt (-1 if there is none): what
    a vocabulary must reach to read the files (LIS: the value range)."""
    return largest_number_at(folder)[0]


MAX_DIGITS = 9       # an integer token longer than this reaches no task's vocabulary (LIS: values below 2048)


def largest_number_at(folder) -> tuple[int, str]:
    """(largest integer token, "<file> line <n>" where it is) of <folder>/chain/{train,test}_data.txt;
    (-1, "") if there is none.  A token of more than MAX_DIGITS digits is a DataError naming its file and
    line (no vocabulary reaches it; Python would not even convert one of 4,300 digits)."""
    best, where = -1, ""
    for name in ("train_data.txt", "test_data.txt"):
        path = Path(folder) / "chain" / name
        for n, toks in _split_lines(path):
            for t in toks:
                if not (t.isascii() and t.isdigit()):
                    continue
                if len(t.lstrip("0")) > MAX_DIGITS:
                    raise DataError(f"{path} line {n}: number {_short(t, path)} is beyond any task's vocabulary")
                if int(t) > best:
                    best, where = int(t), f"{path} line {n}"
    return best, where


def _short(token: str, path: Path | None = None, width: int = 20) -> str:
    """A token of the file `path` as a message shows it: quoted, and cut with its length said when it is long; not
    shown at all when `path` leads outside its dataset folder (`_quotable`)."""
    if path is not None and not _quotable(path):
        return _hidden(path)
    return f"'{token}'" if len(token) <= width else f"'{token[:width]}...' ({len(token)} characters)"


def _root(path: Path) -> Path:
    """The dataset folder a file of it belongs to: <dir> of <dir>/chain/x.txt, <dir>/decoder/x.txt, <dir>/meta.json."""
    path = Path(path)
    return path.parent.parent if path.parent.name in ("chain", "decoder") else path.parent


def _quotable(path: Path) -> bool:
    """Whether a message may quote the content of `path`: it lies, links resolved, inside its dataset folder (the
    input the user named); a link to a file elsewhere (/etc/passwd) is read as data but never echoed."""
    from jackson.budget import inside
    return inside(path, _root(path))


def _hidden(path: Path) -> str:
    return f"(not shown: {Path(path).name} leads outside {_root(path)})"


def _regular(path: Path) -> None:
    """A file that exists must be a regular file (checked before it is opened: a FIFO's open waits for a writer)."""
    import stat
    try:
        mode = path.stat().st_mode
    except OSError:
        return
    if not stat.S_ISREG(mode):
        raise DataError(f"{path}: not a regular file (a folder, FIFO or device); not read")


# ---- reading -----------------------------------------------------------------------------------

def _split_lines(path: Path):
    """(line number, tokens) of each line of a split file, decoded as UTF-8; DataError names the
    file (and line) that cannot be read."""
    _regular(path)
    if not path.is_file():
        raise DataError(f"{path}: no such file")
    try:
        with open(path, "rb") as f:
            for n, raw in enumerate(iter(lambda: f.readline(MAX_LINE_BYTES + 1), b""), 1):
                if len(raw) > MAX_LINE_BYTES:        # read no further into a line than the limit
                    raise DataError(f"{path} line {n}: longer than {MAX_LINE_BYTES:,} bytes (no task writes such a line)")
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError:
                    raise DataError(f"{path} line {n}: not UTF-8 text") from None
                yield n, line.split()
    except OSError as e:
        raise DataError(f"{path}: cannot read ({e.strerror})") from None


def read_answers(path: Path) -> list[str] | None:
    """Their arithmetic chain/test_ans.txt (one answer per line), or None if there is none."""
    _regular(path)
    if not path.is_file():
        return None
    return [t for _, toks in _split_lines(path) for t in toks]


def read_lines(path: Path, task: TaskConfig, tok: Tokenizer, answers: list[str] | None = None,
               check_answers: bool = True) -> list[list[str]]:
    """Token lists from one split file; DataError names the first malformed line.

    `answers` (their arithmetic test_ans.txt) completes prompt-only lines as prompt + [answer].
    check_answers: every answer must equal the task's own solver's (catches other parameters)."""
    out = []
    for n, toks in _split_lines(path):
        where = f"{path} line {n}"
        if not toks:
            raise DataError(f"{where}: empty line")
        bad = next((t for t in toks if t not in tok.ids or t in ("<pad>", "<eos>")), None)
        if bad is not None:
            raise DataError(f"{where}: token {_short(bad, path)} is not in the {task.name} vocabulary")
        if task.sep not in toks:
            raise DataError(f"{where}: no '{task.sep}' ends a prompt")
        k = toks.index(task.sep) + 1
        if k > MAX_PROMPT_TOKENS:      # solving it would cost more than the line: arithmetic's CoT grows as k^2
            raise DataError(f"{where}: a prompt of {k:,} tokens, longer than any task's at its largest size (at most "
                            f"{MAX_PROMPT_TOKENS:,}); not solved")
        if k == len(toks):
            if answers is None:
                raise DataError(f"{where}: nothing after the prompt (no CoT, no answer)")
            if n > len(answers):
                raise DataError(f"{where}: test_ans.txt has only {len(answers)} answers")
            toks = toks + [answers[n - 1]]
        if check_answers:
            try:
                want = task.solve(toks[:k])[-1]
            except (ValueError, IndexError, ZeroDivisionError):
                raise DataError(f"{where}: the prompt is not a valid {task.name} problem") from None
            if toks[-1] != want:
                raise DataError(f"{where}: the answer {toks[-1] if _quotable(path) else _hidden(path)} is not the {task.name} answer {want} "
                                "(other task parameters?)")
        out.append(toks)
    if not out:
        raise DataError(f"{path}: no examples")
    return out


@dataclass
class Split:
    ids: torch.Tensor          # (N, T_max) token ids with <eos>, right-padded with <pad>=0 (int16 storage)
    lengths: torch.Tensor      # (N,) ids per example, <eos> included
    prompt_lens: torch.Tensor  # (N,) ids up to and including the first separator
    answers: torch.Tensor      # (N,) id of the answer (the token before <eos>)
    has_cot: torch.Tensor      # (N,) bool: the line carries its CoT (their test_ans.txt lines do not)

    def __len__(self) -> int:
        return len(self.lengths)


def to_split(lines: list[list[str]], task: TaskConfig, tok: Tokenizer, has_cot: list[bool] | None = None) -> Split:
    enc = [tok.encode(t) for t in lines]
    T = max(len(e) for e in enc)
    ids = torch.full((len(enc), T), PAD_ID, dtype=torch.int16 if len(tok) < 2 ** 15 else torch.int32)
    for i, e in enumerate(enc):
        ids[i, :len(e)] = torch.tensor(e, dtype=ids.dtype)
    lengths = torch.tensor([len(e) for e in enc])
    return Split(ids, lengths, torch.tensor([task.prompt_len(t) for t in lines]),
                 torch.tensor([e[-2] for e in enc]),
                 torch.tensor(has_cot if has_cot is not None else [True] * len(enc)))


@dataclass
class Dataset:
    task: TaskConfig
    tokenizer: Tokenizer
    train: Split
    test: Split
    folder: Path

    @property
    def max_len(self) -> int:
        """Longest sequence in tokens (without <eos>): the L of the FLOPs count and of B."""
        return int(max(self.train.lengths.max(), self.test.lengths.max())) - 1


def load(folder, task: TaskConfig, check_answers: bool = True) -> Dataset:
    """Read <folder>/chain/{train,test}_data.txt for `task`; DataError on anything malformed."""
    from jackson import budget
    folder = Path(folder)
    tok = Tokenizer.for_task(task)
    chain = folder / "chain"
    files = [chain / n for n in ("train_data.txt", "test_data.txt")]
    size = sum(f.stat().st_size for f in files if f.is_file())
    budget.check(f"reading {chain} ({size:,} bytes)", {"the token lists": TOKEN_LIST_BYTES * size}, DataError)
    train = read_lines(chain / "train_data.txt", task, tok, check_answers=check_answers)
    short = [t for t in train if t.index(task.sep) + 2 >= len(t)]
    if short:
        raise DataError(f"{chain / 'train_data.txt'}: training lines need a CoT after the prompt")
    answers = read_answers(chain / "test_ans.txt")
    test = read_lines(chain / "test_data.txt", task, tok, answers=answers, check_answers=check_answers)
    has_cot = [t.index(task.sep) + 2 < len(t) for t in test]
    return Dataset(task, tok, to_split(train, task, tok), to_split(test, task, tok, has_cot), folder)
