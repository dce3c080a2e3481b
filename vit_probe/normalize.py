"""The input normalisation a probed model gets (standard library only: `--normalize` is checked before
torch is imported).  A model is probed as it was trained: images are scaled to [0, 1] (and resized to
the model's image size), then standardised per channel, x -> (x - mean) / std, with

- `cifar10`: CIFAR-10's channel statistics (the shared ViT and every model the lab trains use them);
- `imagenet`: ImageNet's (0.485, 0.456, 0.406) / (0.229, 0.224, 0.225), what most pretrained models use;
- `none`: mean 0, std 1 (only the scaling to [0, 1]);
- `MEAN/STD`: one number, or three comma-separated (R, G, B), on each side: `0.5/0.5`,
  `0.5,0.5,0.5/0.25,0.25,0.25`;
- `auto`: the rule every run before the option used: a model that takes other than 32x32 images and
  states its own mean/std (timm's `pretrained_cfg`) gets those, every other model `cifar10`.

Which one applies: `--normalize` when given, else the `"normalize"` of the model's description
(`--model-json`: the same text, or {"mean": [...], "std": [...]}), else `auto`, so runs without either
are probed exactly as before.  The summary and the headline name the one applied (`Norm.text`).
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from jackson.config import UsageError, need

CIFAR10 = ((0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616))   # CIFAR-10 channel means and stds
IMAGENET = ((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))
PRESETS = {"cifar10": CIFAR10, "imagenet": IMAGENET, "none": ((0.0, 0.0, 0.0), (1.0, 1.0, 1.0))}
AUTO = "auto"
WORDS = "cifar10, imagenet, none, auto or MEAN/STD per channel (e.g. 0.5,0.5,0.5/0.25,0.25,0.25)"


@dataclass(frozen=True)
class Norm:
    """A normalisation: its name (a preset's, 'custom', or the model's own), the channel means and stds,
    and where the choice came from (--normalize, the description, the default)."""
    name: str
    mean: tuple[float, ...]
    std: tuple[float, ...]
    source: str = "default"

    def text(self) -> str:
        """'cifar10, mean (0.4914, 0.4822, 0.4465), std (0.247, 0.2435, 0.2616); set by the default (auto)'."""
        return (f"{self.name}, mean ({', '.join(f'{v:g}' for v in self.mean)}), std "
                f"({', '.join(f'{v:g}' for v in self.std)}); set by {self.source}")

    def as_dict(self) -> dict:
        return {"name": self.name, "mean": list(self.mean), "std": list(self.std), "source": self.source}


MIN_STD = 1e-6       # a channel std below this turns a pixel step of 1/255 into more than 4e3 (a subnormal std: inf)
MAX_SCALE = 1e6      # a mean or std beyond this makes the normalised input (and its logits) overflow float32


def _channels(values, side: str, where: str, given) -> tuple[float, ...]:
    """Three finite floats (one value stands for all three channels); stds > 0."""
    try:
        vals = tuple(float(v) for v in values)
    except (TypeError, ValueError):
        raise UsageError(f"{where}: cannot read {given!r}; give {WORDS}") from None
    need(len(vals) in (1, 3), f"{where}: {side} needs 1 or 3 values (R, G, B), got {len(vals)} in {given!r}")
    need(all(math.isfinite(v) for v in vals), f"{where}: {side} must be finite numbers, got {given!r}")
    need(all(abs(v) <= MAX_SCALE for v in vals), f"{where}: {side} values must be within +-{MAX_SCALE:g}, got {given!r}")
    if side == "std":
        need(all(v > 0 for v in vals), f"{where}: every std must be > 0, got {given!r}")
        need(all(v >= MIN_STD for v in vals), f"{where}: every std must be >= {MIN_STD:g} (a smaller one, a subnormal "
                                              f"included, blows a pixel up past what the logits' SVD can take), got {given!r}")
    return vals * 3 if len(vals) == 1 else vals


def parse(text: str, where: str = "--normalize") -> Norm | str:
    """AUTO, or the Norm a preset name or 'MEAN/STD' names.  UsageError (one line naming `where`) otherwise."""
    t = str(text).strip().lower()
    if t == AUTO:
        return AUTO
    if t in PRESETS:
        return Norm(t, *PRESETS[t], source=where)
    mean, sep, std = t.partition("/")
    need(bool(sep) and mean and std, f"{where}: cannot read {text!r}; give {WORDS}")
    return Norm("custom", _channels(mean.split(","), "mean", where, text),
                _channels(std.split(","), "std", where, text), source=where)


def parse_described(value, where: str) -> Norm | str:
    """A description's "normalize": the option's text, or {"mean": [...], "std": [...]} (a number for all
    three channels allowed on either side)."""
    if isinstance(value, str):
        return parse(value, where)
    need(isinstance(value, dict), f"{where}: give a string ({WORDS}) or an object "
                                  f'{{"mean": [r, g, b], "std": [r, g, b]}}, got {value!r}')
    extra = sorted(set(value) - {"mean", "std"})
    need(not extra and {"mean", "std"} <= set(value),
         f'{where}: the object needs exactly "mean" and "std", got {", ".join(sorted(value)) or "no key"}')
    side = {}
    for k in ("mean", "std"):
        v = value[k]
        v = [v] if isinstance(v, (int, float)) and not isinstance(v, bool) else v
        need(isinstance(v, list) and not any(isinstance(x, bool) for x in v),
             f"{where}: '{k}' should be a number or a list of 1 or 3 numbers, got {value[k]!r}")
        side[k] = _channels(v, k, where, value)
    return Norm("custom", side["mean"], side["std"], source=where)


def choose(option: str, described=None, described_where: str = "--model-json") -> tuple[Norm | str, str]:
    """(what to apply, who said so): --normalize when given (non-empty), else the description's "normalize"
    when it has one, else AUTO."""
    if option:
        return parse(option, "--normalize"), "--normalize"
    if described is not None:
        return parse_described(described, f"{described_where}: 'normalize'"), f"{described_where} (its \"normalize\")"
    return AUTO, "the default (auto)"


def auto(size, pretrained_cfg=None, source: str = "the default (auto)") -> Norm:
    """The rule of every run before --normalize: a model that takes other than 32x32 images and states its
    own mean/std (timm's pretrained_cfg) gets those; every other model CIFAR-10's statistics."""
    cfg = pretrained_cfg or {}
    if tuple(size) != (32, 32) and cfg.get("mean"):
        return Norm("the model's own (timm pretrained_cfg)", tuple(cfg["mean"]), tuple(cfg["std"]), source)
    return Norm("cifar10", *CIFAR10, source=source)


def resolve(choice: Norm | str, source: str, size, pretrained_cfg=None) -> Norm:
    """The Norm a model of this input size (and timm pretrained_cfg) gets for a choice of `choose`."""
    if choice == AUTO:
        return auto(size, pretrained_cfg, source)
    return dataclasses.replace(choice, source=source)
