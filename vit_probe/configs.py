"""The settings of vit-probe's three commands and their checks, without torch: `vit-probe COMMAND --help`
and a bad option end before torch and timm (seconds to import) are loaded (`vit_probe.cli`).

- `TrainConfig`: how a ViT is trained (`vit_probe.train.train`; sweep-mh's cells and permute's two trainings);
- `SpectraConfig`, `SPECTRA_QUICK`, `validate_spectra`: `spectra` (Figs 2, 3a; run by `vit_probe.run_spectra`);
- `SweepMhConfig`, `SWEEP_QUICK`, `validate_sweep`: `sweep-mh` (Fig. 3; `vit_probe.run_sweep_mh`);
- `PermuteConfig`, `PERMUTE_QUICK`, `validate_permute`: `permute` (Table 1, ViT column; `vit_probe.run_permute`);
- `check_device`: cpu, cuda or cuda:N (torch is imported only to ask whether a CUDA device is there).

Each validate_* checks what the command line alone can: ranges, the architecture spec, --normalize, the
output folder, the device; what needs the model (layers and heads, a checkpoint's shapes) is checked by the
run once the model is loaded.  Field names and defaults are config.json keys and feed sweep-mh's cell keys
(`MhCell.key`: the fields of `TrainConfig` that differ from their defaults): they are never renamed.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from jackson.config import Option, UsageError, need
from jackson.runfolder import check_run_folder, check_scheduler

from . import normalize
from .arch import check_memory, parse_arch


def check_device(dev: str) -> str:
    """cpu, cuda or cuda:N; a CUDA device must be there (torch is imported only then)."""
    need(dev == "cpu" or dev.startswith("cuda"), f"--device: '{dev}' is not cpu, cuda or cuda:N")
    if dev.startswith("cuda"):
        import torch
        if not torch.cuda.is_available():
            raise UsageError(f"--device {dev}: CUDA is not available on this machine")
    return dev


@dataclass(frozen=True)
class TrainConfig:
    epochs: float = 3.0          # passes over the training subset (fractions allowed)
    n_train: int = 50000         # training images used: all, or a class-stratified draw seeded by the training seed
    batch_size: int = 128        # images per step
    lr: float = 1e-3             # AdamW peak learning rate
    weight_decay: float = 0.05   # AdamW weight decay
    warmup_frac: float = 0.05    # fraction of the steps spent in linear warm-up, then cosine to 0
    augment: bool = True         # random crop (pad 4) + horizontal flip
    ckpt_every_s: float = 120.0  # seconds between resumable checkpoints


# ---------------------------------------------------------------- spectra

def check_model_choice(model: str, pretrained: bool, arch: str, model_json: str, model_factory: str) -> None:
    """One of --model, --arch, --model-json, --model-factory names the model; --pretrained only with --model;
    an --arch spec that can be read."""
    given = [o for o, v in (("--model", model), ("--arch", arch), ("--model-json", model_json),
                            ("--model-factory", model_factory)) if v]
    need(len(given) <= 1, f"give one of --model, --arch, --model-json or --model-factory, not {' and '.join(given)}")
    if pretrained and given and not model:
        raise UsageError(f"--pretrained goes with --model (timm's own weights), not with {given[0]}")
    need(bool(given), "give --checkpoint PATH --arch SPEC, or --model TIMM_NAME [--pretrained], or --model-json FILE "
                      "or --model-factory module:function (each with an optional --checkpoint)")
    if arch:
        parse_arch(arch)


def check_spectra_memory(cfg) -> None:
    """An --arch model probed in batches of --batch-size images (and its random-init controls): priced first."""
    if cfg.arch:
        check_memory(parse_arch(cfg.arch), min(cfg.batch, cfg.n_images))


@dataclass(frozen=True)
class SpectraConfig:
    model: str = ""               # timm model name (e.g. vit_base_patch16_224); empty = use --arch
    pretrained: bool = False      # load timm's own weights for --model (needs internet or timm's cache)
    checkpoint: str = ""          # local weights (safetensors or torch file, read weights-only)
    arch: str = ""                # small CIFAR ViT spec for --checkpoint, e.g. vit_p4_d128_l4_h4
    model_json: str = ""          # JSON describing any other model, e.g. {"kind": "torch-vit", "dim": 32, ...} (vit_probe/model_source.py); empty = none
    model_factory: str = ""       # module:function that returns the model (an nn.Module with timm or torch attention); empty = none
    normalize: str = ""           # input normalisation: cifar10 | imagenet | none | auto | MEAN/STD per channel (e.g. 0.5,0.5,0.5/0.25,0.25,0.25); empty = the --model-json description's "normalize", else auto (a timm model at its own image size gets its own mean/std, every other model cifar10)
    data: str = ""                # CIFAR-10: batches folder, train/ test/ image tree, or a .tar.gz
    download: bool = False        # fetch the official CIFAR-10 through torchvision (needs internet)
    cache: str = ""               # where decoded images (and an archive's member index) are cached (default ~/.cache/jackson-lab)
    split: str = "test"           # which split the images come from: test | train
    n_images: int = 1000          # images whose logit matrices are decomposed (stratified by class)
    subset_seed: int = 0          # seed of the class-stratified draw of those images
    layers: str = "all"           # blocks to probe: 'all' or indices like 0,3 or -1 (last)
    heads: str = "all"            # heads to probe in each block: 'all' or indices
    tokens: str = "all"           # tokens in rho_hat(x): all (class token included) | patches
    violin_layer: int = -1        # block of the Figure-2 violin plot (-1 = last)
    violin_head: int = 0          # head of the Figure-2 violin plot (the paper uses the first)
    k_show: int = 16              # singular values shown in the violin plot
    fit_range: tuple[int, ...] = (2, 16)   # indices i (1-based) of the decay-exponent fit (capped at m_h)
    batch: int = 100              # images per forward
    check_accuracy: bool = False  # also measure top-1 accuracy on the whole split (local models)
    seed: int = 0                 # init seed when --arch has no --checkpoint
    inits: int = 3                # the control: a trained model's architecture is probed again at this many random inits (seeds 0..inits-1), on the same images; 0 = none
    device: str = "cpu"           # cpu | cuda | cuda:N
    out: str = "reports/vit_probe/spectra"   # output folder
    quick: bool = False           # seconds-long smoke run (50 images)

    CLI = {"batch": Option("--batch-size", old=("--batch",))}   # ARCHITECTURE.md, "CLI vocabulary"


MAX_INITS = 20
SPECTRA_QUICK = dict(n_images=50, batch=25, out="runs/vit_probe-spectra-quick")   # scratch, never reports/


def validate_spectra(cfg: SpectraConfig) -> None:
    need(cfg.split in ("test", "train"), f"--split: '{cfg.split}' is not test or train")
    need(cfg.tokens in ("all", "patches"), f"--tokens: '{cfg.tokens}' is not all or patches")
    need(cfg.n_images >= 1, f"--n-images must be >= 1, got {cfg.n_images}")
    need(cfg.subset_seed >= 0, f"--subset-seed must be >= 0, got {cfg.subset_seed}")
    need(cfg.batch >= 1, f"--batch-size must be >= 1, got {cfg.batch}")
    need(0 <= cfg.inits <= MAX_INITS, f"--inits must be between 0 and {MAX_INITS}, got {cfg.inits}")
    need(cfg.k_show >= 1, f"--k-show must be >= 1, got {cfg.k_show}")
    need(len(cfg.fit_range) == 2 and 1 <= cfg.fit_range[0] < cfg.fit_range[1],
         f"--fit-range: give two indices lo,hi with 1 <= lo < hi, got {cfg.fit_range}")
    check_model_choice(cfg.model, cfg.pretrained, cfg.arch, cfg.model_json, cfg.model_factory)
    normalize.choose(cfg.normalize)          # --normalize (the description's "normalize" is read with the model)
    check_spectra_memory(cfg)
    check_run_folder(cfg.out, "vit-probe spectra")
    check_device(cfg.device)


# ---------------------------------------------------------------- sweep-mh

@dataclass(frozen=True)
class SweepMhConfig:
    arch: str = "vit_p4_d128_l4_h4"   # base architecture; m_h replaces the per-head query/key size
    mh: tuple[int, ...] = (1, 2, 4, 8, 16, 32)   # per-head query/key sizes (value size stays dim/heads)
    seeds: tuple[int, ...] = (0,)     # training seeds (init, shuffling, augmentation)
    train: TrainConfig = TrainConfig()
    n_eval_train: int = 10000         # training images on which the final training loss is measured (eval mode; stratified by class)
    n_spectra: int = 500              # test images whose logit spectra are recorded per model (stratified by class)
    subset_seed: int = 0              # seed of those two class-stratified draws (the same images for every cell)
    spectra_layer: int = -1           # block shown in the spectra-vs-m_h figure (-1 = last, as in Fig. 3a)
    spectra_head: int = 0             # head shown in that figure
    fit_range: tuple[int, ...] = (2, 16)   # indices of the spectrum decay fit (capped at m_h)
    data: str = ""                    # CIFAR-10 (see vit-probe spectra --help)
    download: bool = False            # fetch the official CIFAR-10 (needs internet)
    cache: str = ""                   # where decoded images (and an archive's member index) are cached (default ~/.cache/jackson-lab)
    device: str = "cpu"               # cpu | cuda | cuda:N
    rebuild: bool = False             # only rebuild tables, figures and summary from finished cells (trains nothing)
    keep_weights: bool = False        # keep each model's final weights in <out>/checkpoints/ (not in reports)
    scheduler: str = ""               # Dask scheduler address; empty = in-process
    out: str = "reports/vit_probe/sweep_mh"   # output folder
    quick: bool = False               # seconds-long smoke run (tiny model, 256 images, 2 m_h)

    CLI = {"mh": Option("--m-h", old=("--mh",))}   # the paper's m_h, as jackson-sweep spells it


SWEEP_QUICK = dict(arch="vit_p8_d32_l2_h2", mh=(1, 4), n_eval_train=128, n_spectra=16,
                   train=TrainConfig(epochs=1, n_train=256, batch_size=64),
                   out="runs/vit_probe-sweep-mh-quick")   # scratch, never the committed reports/ folder


def validate_sweep(cfg: SweepMhConfig) -> None:
    a = parse_arch(cfg.arch)
    need(a.m_h is None, "--arch: give the base architecture without _q (the sweep sets m_h from --m-h)")
    need(len(cfg.mh) > 0 and all(m >= 1 for m in cfg.mh), f"--m-h: every m_h must be >= 1, got {cfg.mh}")
    need(len(set(cfg.mh)) == len(cfg.mh), "--m-h: values repeat")
    need(len(cfg.seeds) > 0, "--seeds: give at least one seed")
    need(all(s >= 0 for s in cfg.seeds) and cfg.subset_seed >= 0, "--seeds and --subset-seed must be >= 0")
    need(cfg.train.epochs > 0, f"--epochs must be > 0, got {cfg.train.epochs}")
    need(cfg.train.batch_size >= 1 and cfg.train.n_train >= 1, "--batch-size and --n-train must be >= 1")
    need(cfg.train.lr > 0, f"--lr must be > 0, got {cfg.train.lr}")
    need(cfg.n_spectra >= 1 and cfg.n_eval_train >= 1, "--n-spectra and --n-eval-train must be >= 1")
    need(-a.depth <= cfg.spectra_layer < a.depth, f"--spectra-layer {cfg.spectra_layer} is out of range (0..{a.depth - 1})")
    need(0 <= cfg.spectra_head < a.heads, f"--spectra-head {cfg.spectra_head} is out of range (0..{a.heads - 1})")
    for m in cfg.mh:                         # the widest m_h's model, trained in batches of --batch-size
        check_memory(dataclasses.replace(a, m_h=m), min(cfg.train.batch_size, cfg.train.n_train), train=True,
                     what=f"--arch {cfg.arch} with m_h {m}")
    if not cfg.rebuild:
        check_device(cfg.device)
    check_run_folder(cfg.out, "vit-probe sweep-mh")
    check_scheduler(cfg.scheduler)


# ---------------------------------------------------------------- permute

@dataclass(frozen=True)
class PermuteConfig:
    checkpoint: str = ""          # weights trained on the original data; empty = train them first (--original-*)
    arch: str = "vit_p4_d128_l4_h4"   # architecture of the model (spec as in vit-probe spectra)
    n_first: int = 10             # the permutation moves the first n_first patch tokens to the end
    original: TrainConfig = TrainConfig(epochs=4.0)   # training on the original data when no --checkpoint
    finetune: TrainConfig = TrainConfig(epochs=1.0, lr=3e-4)   # continued training on the permuted data
    control: bool = True          # also continue training on the original data for the same budget
    seed: int = 0                 # init / shuffling seed
    device: str = "cpu"           # cpu | cuda | cuda:N (both trainings)
    data: str = ""                # CIFAR-10 (see vit-probe spectra --help)
    download: bool = False        # fetch the official CIFAR-10 (needs internet)
    cache: str = ""               # where decoded images (and an archive's member index) are cached (default ~/.cache/jackson-lab)
    out: str = "reports/vit_probe/permute"   # output folder
    quick: bool = False           # seconds-long smoke run (tiny model, 256 images)


PERMUTE_QUICK = dict(arch="vit_p8_d32_l2_h2", n_first=3, original=TrainConfig(epochs=1, n_train=256, batch_size=64),
                     finetune=TrainConfig(epochs=1, n_train=256, batch_size=64),
                     out="runs/vit_probe-permute-quick")   # scratch, never reports/


def validate_permute(cfg: PermuteConfig) -> None:
    a = parse_arch(cfg.arch)
    n_patches = a.tokens - 1
    need(1 <= cfg.n_first < n_patches, f"--n-first must be in 1..{n_patches - 1} ({cfg.arch} has {n_patches} patches)")
    for name, t in (("original", cfg.original), ("finetune", cfg.finetune)):
        need(t.epochs > 0 and t.lr > 0 and t.batch_size >= 1 and t.n_train >= 1,
             f"--{name}-*: epochs, lr, batch size and n_train must be positive")
    need(cfg.seed >= 0, f"--seed must be >= 0, got {cfg.seed}")
    check_memory(a, max(min(t.batch_size, t.n_train) for t in (cfg.original, cfg.finetune)), train=True)
    check_device(cfg.device)
    check_run_folder(cfg.out, "vit-probe permute")

