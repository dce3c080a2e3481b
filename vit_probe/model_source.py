"""A model to probe that is not named by --model or --arch: a description JSON (`--model-json FILE`)
or a factory (`--model-factory module:function`), with an optional `--checkpoint` state dict loaded
strictly into it.  Any model whose attention is timm's `Attention` or torch's
`nn.MultiheadAttention` can be probed (`vit_probe.models.attention_modules`).

A description is one JSON object: "kind" and that kind's keys (any other key is refused):

    {"kind": "torch-vit", "patch": 8, "dim": 32, "depth": 2, "heads": 2, "norm_first": false}
    {"kind": "timm", "name": "vit_tiny_patch16_224", "kwargs": {"num_classes": 10, "img_size": 32}}
    {"kind": "arch", "arch": "vit_p4_d128_l4_h4"}
    {"kind": "factory", "factory": "mypkg.models:build", "kwargs": {"depth": 2}}

torch-vit keys are the fields of `vit_probe.torch_vit.TorchViTConfig` (defaults for the ones left
out); `kwargs` go to `timm.create_model` or to the factory.  Any kind may say how the model's inputs were
normalised when it was trained, `"normalize": "imagenet"` or `{"mean": [0.5, 0.5, 0.5], "std": [0.5, 0.5, 0.5]}`
(`vit_probe/normalize.py`; `--normalize` wins over it).  A factory is any importable callable
that returns an `nn.Module` (the current folder is searched first, as `python -m` would); importing
it runs its code, as the user asked.  The model gets 32x32 images (resized to its `img_size` attribute
when it has one) normalised as `--normalize`, else its description, says (default: CIFAR-10's
statistics; a timm model at its own image size: its own), and its first `num_prefix_tokens` tokens (default
1, a class token) are left out by `--tokens patches` (`vit_probe.spectra`).
"""
from __future__ import annotations

import dataclasses
import importlib
import os
import sys
from pathlib import Path

from torch import nn

from jackson.config import RunFailed, UsageError, from_dict, loads_json, need, read_capped
from jackson.schedule import torch_seeded

from . import models, normalize
from .torch_vit import TorchViT, TorchViTConfig, describe, validate

KINDS = ("torch-vit", "timm", "arch", "factory")
MAX_DESCRIPTION_BYTES = 1 << 20   # a model description is a few hundred bytes; a larger file is refused unread
SHARED_KEYS = {"normalize"}   # any kind: the input normalisation the model was trained with (vit_probe/normalize.py)
KEYS = {"torch-vit": {f.name for f in dataclasses.fields(TorchViTConfig)} | SHARED_KEYS,
        "timm": {"name", "kwargs"} | SHARED_KEYS, "arch": {"arch"} | SHARED_KEYS,
        "factory": {"factory", "kwargs"} | SHARED_KEYS}
REQUIRED = {"torch-vit": set(), "timm": {"name"}, "arch": {"arch"}, "factory": {"factory"}}


def read_description(path: str | Path) -> dict:
    """The description in `path`, checked: a known kind, only its keys, the required ones present,
    strings where strings belong and an object for kwargs.  UsageError (one line) otherwise."""
    path = Path(path).expanduser()
    where = f"--model-json {path.name}"
    try:
        d = loads_json(read_capped(path, "--model-json", MAX_DESCRIPTION_BYTES), "--model-json", path)
    except FileNotFoundError:
        raise UsageError(f"--model-json: {path} does not exist") from None
    except UsageError:
        raise
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise UsageError(f"--model-json: cannot read {path} as JSON ({getattr(e, 'strerror', None) or e})") from None
    need(isinstance(d, dict) and "kind" in d, f'{where}: give a JSON object with a "kind" ({", ".join(KINDS)})')
    kind = d["kind"]
    if kind not in KINDS:
        raise UsageError(f"{where}: kind {kind!r} is not supported; {models.CHECKPOINT_KINDS}")
    extra = sorted(set(d) - KEYS[kind] - {"kind"})
    need(not extra, f"{where}: unknown key(s) {', '.join(extra)} for kind {kind} "
                    f"(valid: {', '.join(sorted(KEYS[kind]))})")
    missing = sorted(REQUIRED[kind] - set(d))
    need(not missing, f"{where}: kind {kind} needs {', '.join(missing)}")
    for k in ("name", "arch", "factory"):
        need(k not in d or isinstance(d[k], str), f"{where}: '{k}' should be a string, got {d.get(k)!r}")
    need(isinstance(d.get("kwargs", {}), dict), f"{where}: 'kwargs' should be an object, got {d.get('kwargs')!r}")
    if "normalize" in d:
        normalize.parse_described(d["normalize"], f"{where}: 'normalize'")
    return d


def torch_vit_config(d: dict, where: str = "--model-json") -> TorchViTConfig:
    """TorchViTConfig from a torch-vit description (types checked, sizes validated)."""
    cfg = from_dict(TorchViTConfig, {k: v for k, v in d.items() if k not in {"kind"} | SHARED_KEYS}, where=where)
    validate(cfg, where)
    return cfg


def import_factory(spec: str, option: str = "--model-factory"):
    """The callable named by 'module:function' (function may be dotted: 'module:Class.build')."""
    mod_name, _, attr = spec.partition(":")
    ok = all(p.isidentifier() for p in mod_name.split(".")) and all(p.isidentifier() for p in attr.split("."))
    need(ok, f"{option}: '{spec}' is not module:function (e.g. mypkg.models:build)")
    here = os.getcwd()
    added = here not in sys.path
    if added:                     # a console script does not search the current folder; python -m does
        sys.path.insert(0, here)
    try:
        module = importlib.import_module(mod_name)
    except ModuleNotFoundError as e:
        if e.name and (mod_name == e.name or mod_name.startswith(e.name + ".")):   # the module itself, not its imports
            raise UsageError(f"{option}: no module named {e.name} (run from the folder that holds it, or add "
                             "that folder to PYTHONPATH)") from None
        raise UsageError(f"{option}: importing {mod_name} failed (ModuleNotFoundError: {e})") from None
    except Exception as e:
        raise UsageError(f"{option}: importing {mod_name} failed ({type(e).__name__}: "
                         f"{str(e).splitlines()[0][:160] if str(e) else ''})") from None
    except SystemExit as e:       # a module that calls sys.exit() (or exit()) while it is imported
        raise RunFailed(f"{spec} exited while its module was imported (SystemExit {e.code!r}) ({option})") from None
    finally:
        if added:
            sys.path.remove(here)
    fn = module
    for part in attr.split("."):
        need(hasattr(fn, part), f"{option}: {mod_name} has no {attr}")
        fn = getattr(fn, part)
    need(callable(fn), f"{option}: {spec} is not callable")
    return fn


def from_factory(spec: str, kwargs: dict, seed: int, option: str = "--model-factory") -> nn.Module:
    """spec(**kwargs), its random init drawn from `seed` (global torch RNG state left as it was)."""
    fn = import_factory(spec, option)
    with torch_seeded(seed):
        try:
            model = fn(**kwargs)
        except RecursionError:
            raise RunFailed(f"{spec} recursed past Python's limit (RecursionError) without returning a model "
                            f"({option})") from None
        except Exception as e:
            raise RunFailed(f"{spec} raised {type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''} "
                            f"({option})") from None
        except SystemExit as e:      # sys.exit(), exit(), quit(): the factory must return, not end the command
            raise RunFailed(f"{spec} exited (SystemExit {e.code!r}) without returning a model ({option})") from None
    if not isinstance(model, nn.Module):
        raise RunFailed(f"{spec} returned {_kind(model)}, not a model (a torch nn.Module) ({option})")
    return model


def _kind(value) -> str:
    """What a factory returned, in words, without its content: 'None', 'a int', 'a dict'."""
    return "None" if value is None else f"a {type(value).__name__}"


def load(d: dict, checkpoint: str, seed: int, option: str = "--model-json") -> tuple[nn.Module, str, str]:
    """(model, description, checkpoint check) for a torch-vit, timm or factory description; the
    checkpoint, if any, loaded strictly (missing / unexpected / shape lines name what does not fit).
    The arch kind goes through `common.load_model`'s --arch path."""
    kind = d["kind"]
    if kind == "factory":
        model = from_factory(d["factory"], d.get("kwargs", {}), seed, option)
        name = f"{d['factory']}()"
    elif kind in ("torch-vit", "timm"):
        with torch_seeded(seed):     # the init drawn from `seed`, global RNG state kept
            if kind == "torch-vit":
                cfg = torch_vit_config(d, f"{option} (torch-vit)")
                model, name = TorchViT(cfg), describe(cfg)
            else:
                model, name = models.create_timm(d["name"], False, **d.get("kwargs", {})), f"timm {d['name']}"
    else:
        raise UsageError(f"{option}: kind {kind!r} is not loaded here; {models.CHECKPOINT_KINDS}")
    attns = models.attention_modules(model)            # refuses a model with nothing to probe
    if not checkpoint:
        return model.eval(), f"{name} (random init, seed {seed})", ""
    if kind == "timm":
        check = models.load_checkpoint(model, checkpoint)
    else:
        sd, _ = models.read_checkpoint(checkpoint)
        if kind == "torch-vit" and any(models.TIMM_QKV.search(k) for k in sd):
            raise UsageError(f"--checkpoint: {Path(checkpoint).name} holds a timm ViT (blocks.N.attn.qkv), not a "
                             "torch-vit: give --arch SPEC, or a description of kind arch or timm")
        models.load_weights(model, sd)
        check = (f"every tensor's name and shape matched the {kind} model (strict load); {len(attns)} attention "
                 f"layers with {attns[0].num_heads} heads, as the {'description' if kind == 'torch-vit' else 'factory'} "
                 "builds them (shapes cannot tell the head count)")
    return model.eval(), f"{name} from {Path(checkpoint).name}", check
