"""Reaching the Hugging Face hub for timm's `--pretrained` weights, with the standard library only.

An offline `vit-probe spectra --model NAME --pretrained` should fail in seconds with one line. Importing
torch and timm alone takes about 5 s on the 2-core machine (`python -X importtime -c "import torch, timm"`:
torch 4.6 s, timm 2.2 s, measured 2026-11-23), so `vit_probe.cli` calls `early_offline_check` before it
imports them; `vit_probe.models.create_timm` repeats the exact check (timm's own cache lookup) afterwards.
"""
from __future__ import annotations

import os
import socket
import threading
from pathlib import Path
from urllib.parse import urlparse


def hub_unreachable(timeout_s: float = 3.0) -> tuple[str, str]:
    """(host, '') when the Hugging Face hub (HF_ENDPOINT, default huggingface.co) answers a TCP
    connect on port 443 within timeout_s, else (host, why).  Behind a proxy (HTTPS_PROXY set) or
    with HF_HUB_OFFLINE the direct probe says nothing useful: it is skipped, resp. reported."""
    host = urlparse(os.environ.get("HF_ENDPOINT") or "https://huggingface.co").hostname or "huggingface.co"
    if os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on"):
        return host, "HF_HUB_OFFLINE is set"
    if any(os.environ.get(v) for v in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")):
        return host, ""
    result = {}

    def probe():   # in a thread: name resolution has no timeout of its own
        try:
            socket.create_connection((host, 443), timeout=timeout_s).close()
            result["ok"] = True
        except OSError as e:
            result["why"] = f"{type(e).__name__}: {e}"
    t = threading.Thread(target=probe, daemon=True)
    t.start()
    t.join(timeout_s)
    if result.get("ok"):
        return host, ""
    return host, result.get("why", f"no answer within {timeout_s:g} s")


def offline_message(name: str, host: str, why: str) -> str:
    return (f"--pretrained: timm's weights for {name} are not in the local cache and {host} cannot be reached "
            f"({why}); run once with internet, or give local weights with --checkpoint")


def _cache_root(var: str, sub: str) -> Path:
    return Path(os.environ.get(var) or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / sub)


def maybe_cached(name: str) -> bool:
    """Whether timm's weights for `name` might be on disk, asked without timm: a Hugging Face cache folder
    models--timm--<name>[.<tag>], or any file in torch hub's checkpoints folder (timm names its URL weights
    there by the URL, which only timm knows).  True sends the question on to timm's exact lookup."""
    hf = Path(os.environ["HF_HUB_CACHE"]) if os.environ.get("HF_HUB_CACHE") else _cache_root("HF_HOME", "huggingface") / "hub"
    stem = f"models--timm--{name}"
    try:
        if hf.is_dir() and any(p.name == stem or p.name.startswith(stem + ".") for p in hf.iterdir()):
            return True
        ckpts = _cache_root("TORCH_HOME", "torch") / "hub" / "checkpoints"
        return ckpts.is_dir() and any(ckpts.iterdir())
    except OSError:
        return True            # unreadable cache: let timm decide


def _option(argv: list[str], opt: str) -> str:
    for i, a in enumerate(argv):
        if a == opt and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith(opt + "="):
            return a.split("=", 1)[1]
    return ""


def early_offline_check(argv: list[str]) -> str:
    """The one-line refusal for `--model NAME --pretrained` when the weights cannot be on disk and the hub
    cannot be reached; '' otherwise (also when the command line does not ask for timm's weights, or asks
    through --config: the exact check after timm is imported covers those)."""
    if "--pretrained" not in argv or "--no-pretrained" in argv:
        return ""
    name = _option(argv, "--model")
    if not name or maybe_cached(name):
        return ""
    host, why = hub_unreachable()
    return offline_message(name, host, why) if why else ""
