"""The sweep's inputs checked beyond each option's range, one line each (`jackson.config.UsageError`): an explicit
spectrum (`read_sigma_file`, `check_sigma`), the device (`check_device`) and a run folder
that holds another FFN class (`check_same_class`).  `config.validate` calls them; nothing here writes."""
from __future__ import annotations

import json
from pathlib import Path

from ..config import UsageError, need, read_capped
from ..hparams import ModelConfig
from .axes import CLASSLESS_MODEL


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


def check_same_class(cfg) -> None:
    """A folder that holds a run of another FFN class is not rerun as this one (its cells would stay, but its config,
    summary and figures would change class): one line naming the class it holds, unless --force.  Say the class:
    a folder made when GELU was the default, rerun by its bare command, would otherwise turn into a sine folder."""
    from .. import runfolder
    old = cfg.resolved_out() / "config.json"
    if runfolder.FORCE or cfg.model.features == "given" or not old.is_file():
        return
    try:
        model = json.loads(read_capped(old, "--out")).get("model")
    except (OSError, UnicodeDecodeError, ValueError, AttributeError, UsageError):
        return                        # unreadable: the run's own checks say so when it rewrites it
    if not isinstance(model, dict) or model.get("features", "learned") == "given":
        return
    held = model.get("activation", CLASSLESS_MODEL.activation)     # absent: written before --activation existed
    need(held == cfg.model.activation,
         f"--out: {cfg.resolved_out()} holds a run of the {held} FFN class and this command fits the "
         f"{cfg.model.activation} class (jackson-sweep's default is {ModelConfig().activation}); add --activation {held} "
         "to rerun or extend it, pick another --out, or give --force to add this class's cells beside it")


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
