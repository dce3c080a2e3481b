"""The sweep's inputs checked beyond each option's range, one line each (`jackson.config.UsageError`): an explicit
spectrum (`read_sigma_file`, `check_sigma`), the device (`check_device`) and a run folder
that holds another config (`check_same_config`).  `config.validate` calls them; nothing here writes."""
from __future__ import annotations

import json
from pathlib import Path

from ..config import UsageError, need, read_capped
from ..hparams import ModelConfig


def read_sigma_file(path: str) -> tuple[float, ...]:
    """sigma values from a text file: one a line or comma-separated, '#' starts a comment; one line if unreadable."""
    p = Path(path)
    try:
        text = read_capped(p, "--sigma-file")
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"--sigma-file: cannot read {p} ({getattr(e, 'strerror', None) or e})") from None
    vals = []
    for n, line in enumerate(text.splitlines(), 1):
        for part in line.split("#", 1)[0].replace(",", " ").split():
            try:
                vals.append(float(part))
            except ValueError:
                raise UsageError(f"--sigma-file: {p} line {n}: cannot read '{part}' as a number") from None
    need(bool(vals), f"--sigma-file: {p} holds no values (one a line or comma-separated, '#' comments)")
    return tuple(vals)


def check_sigma(sigma: tuple[float, ...], m_h) -> None:
    """An explicit spectrum: finite, >= 0, non-increasing, at least two nonzero values, m_h within its length."""
    import numpy as np
    s = np.asarray(sigma, dtype=float)
    shown = ", ".join(f"{v:g}" for v in s[:8]) + (" ..." if len(s) > 8 else "")
    need(bool(np.all(np.isfinite(s))), f"--sigma: values must be finite numbers, got {shown}")
    need(bool(np.all(s >= 0)), f"--sigma: values must be >= 0, got {shown}")
    up = np.flatnonzero(np.diff(s) > 0)
    if len(up):
        i = int(up[0]) + 1      # sigma_{i+1} > sigma_i, 1-based
        raise UsageError(f"--sigma: values must be non-increasing (sigma_1 >= sigma_2 >= ...), but sigma_{i + 1} = "
                         f"{s[i]:g} > sigma_{i} = {s[i - 1]:g} in {shown}")
    nz = int(np.sum(s > 0))
    need(nz >= 2, f"--sigma: need at least 2 nonzero values to fit the decay exponent alpha_hat, got {nz} in {shown}")
    big = max(m_h)
    need(big <= len(s), f"--m-h: the explicit spectrum has {len(s)} values (rank {nz}), so each m_h must be <= {len(s)} "
                        f"(pad the list with zeros to go past the rank), got {big}")


# What a second command into a folder may change without --force: where and how it runs, and what its summary is
# compared with (its cells are the same either way).  Any other difference would put a second config over the first.
RUN_ONLY = ("out", "scheduler", "device", "terms", "ff_from", "compare_to")


def check_same_config(cfg) -> None:
    """A folder that holds a run of another config is not rerun as this one: its summary, tables and config.json
    would describe this config, over the first (the cells of both stay).  One line naming the first field that
    differs, unless --force; another FFN class of learned features is named as such, with the option that reruns
    it (a folder made when GELU was the default, rerun by its bare command, would otherwise turn into a sine folder;
    a config.json older than --activation held GELU).  The same config resumes or re-summarizes the folder.  Only the
    fields config.json names are compared; one that cannot be read as today's config says nothing here (the run's
    own checks name it)."""
    import dataclasses
    from .. import runfolder
    from ..config import from_dict
    old_file = cfg.resolved_out() / "config.json"
    if runfolder.FORCE or not old_file.is_file():
        return
    try:
        named = json.loads(read_capped(old_file, "--out"))
        old = from_dict(type(cfg), named, where=f"--out {old_file}") if isinstance(named, dict) else None
    except (UsageError, TypeError, ValueError, OSError, AttributeError):
        return
    for f in dataclasses.fields(cfg) if old is not None else ():
        if f.name in RUN_ONLY or f.name not in named:
            continue
        a, b = getattr(old, f.name), getattr(cfg, f.name)
        if f.name == "model":
            a, b = old.resolved_model(), cfg.resolved_model()
            need(a.activation == b.activation or not a.features == b.features == "learned",
                 f"--out: {cfg.resolved_out()} holds a run of the {a.activation} FFN class and this command fits the "
                 f"{b.activation} class (jackson-sweep's default is {ModelConfig().activation}); add --activation "
                 f"{a.activation} to rerun or extend it, pick another --out, or give --force to add this class's cells "
                 "beside it")
        elif f.name in ("sigma", "sigma_file"):      # config.json holds a file's values as --sigma: compare values
            a, b = old.explicit(), cfg.explicit()
        if a != b:
            if dataclasses.is_dataclass(a):
                name = next(g.name for g in dataclasses.fields(a) if getattr(a, g.name) != getattr(b, g.name))
                a, b, where = getattr(a, name), getattr(b, name), f"{f.name}.{name}"
            else:
                where = f.name
            need(False, f"--out: {cfg.resolved_out()} holds a run of another config ({where} {_shown(a)} there, "
                        f"{_shown(b)} here); give the options it was run with to resume or re-summarize it (its "
                        "config.json), pick another --out, or give --force to write this config's results over its summary")


def _shown(v) -> str:
    return ",".join(_shown(x) for x in v) if isinstance(v, tuple) else f"{v:g}" if isinstance(v, float) else str(v)


def check_device(device: str) -> None:
    """cpu, or a CUDA device that exists here; one line otherwise (torch is asked only about a device other than cpu)."""
    if device == "cpu":
        return
    import torch
    try:
        dev = torch.device(device)
    except (RuntimeError, ValueError):
        raise UsageError(f"--device: cannot read '{device}' (give cpu, cuda or cuda:N)") from None
    need(dev.type in ("cpu", "cuda"), f"--device: choose cpu or cuda[:N], got {device}")
    if dev.type == "cuda":
        need(torch.cuda.is_available(), f"--device {device}: no CUDA device here (torch.cuda.is_available() is False)")
        need(dev.index is None or dev.index < torch.cuda.device_count(),
             f"--device {device}: only {torch.cuda.device_count()} CUDA device(s) here")
