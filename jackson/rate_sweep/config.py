"""The rate sweep's config (Fig. 1, `jackson-sweep`): `SweepConfig` (its fields are the command's options, its
methods give the targets and cells), the presets (`QUICK`, `GIVEN`, `GPU`, `GPU_GIVEN`, applied by `presets`),
`sweep_config` (a config built the way the command line builds one) and `validate` (one-line usage errors,
nothing written).  The run itself is `experiment.run_sweep`."""
from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from synthetic.pod_target import TargetError
from ..config import UsageError, need
from ..hparams import (ACTIVATIONS, ATTENTIONS, FEATURES, MAX_LR, MAX_SEED, FitConfig, ModelConfig, schedule_problem,
                       with_features_k)
from ..runfolder import check_run_folder, check_scheduler
from ..sweep import function_id
from .axes import CLASSLESS_MODEL, CONSTRUCTIONS, SINE_IN_SCALE, TERMS, rank_str   # noqa: F401
from .inputs import check_device, check_same_config, check_sigma, read_sigma_file   # noqa: F401 (re-exported)

if TYPE_CHECKING:
    from .cell import RateCell
from .tables import reference_run


@dataclass(frozen=True)
class SweepConfig:
    DERIVED_KEYS = ("sigma_source", "spectrum")   # written beside the fields by as_dict: where an explicit spectrum
                                                  # came from, and what it is
    FILE_BASES = {"model": CLASSLESS_MODEL}       # --config FILE: a model key the file lacks has ModelConfig's value
                                                  # (files written before --activation existed held GELU models)

    alpha: tuple[float, ...] = (1.5,)          # spectral decay exponents: sigma_i = i^-alpha
    rank: tuple[float, ...] = (math.inf,)      # target ranks r (integers >= 1, or inf)
    m_h: tuple[int, ...] = tuple(range(1, 17))  # attention sizes m_h of the bank's members
    seeds: tuple[int, ...] = (0,)              # one cell (data + inits) per seed
    construction: str = ""                     # named (phi, psi) pair: paper = (sin, sin) as in App. C; trace-free = (sin, cos), whose rho(x, x) does not grow with K; empty: --phi/--psi
    phi: str = "sin"                           # query-side POD family: sin | cos | legendre
    psi: str = "sin"                           # key-side POD family (may differ from phi)
    F: str = "identity"                        # outer map F: identity | tanh | square
    f: str = "identity"                        # value map f: identity | sin | square
    tau: int = 16                              # sequence length
    tail_tol: float = 1e-6                     # rank inf: truncate once sum_{i>K} sigma_i^2 <= this
    k_max: int = 4096                          # rank inf: at most this many POD terms
    n_train: int = 16384                       # training sequences per cell
    n_test: int = 4096                         # held-out sequences per cell
    fit_range: tuple[int, ...] = (1, 8)        # m_h range (lo,hi) of the log-log exponent fit
    m_ff: tuple[int, ...] = ()                 # the m_FF axis: hidden widths of f_hat and F_hat, one cell per width (empty: --width alone)
    restarts: int = 1                          # independent initialisations per (target, seed, m_h); the best by training MSE is reported
    device: str = "cpu"                        # torch device: cpu | cuda | cuda:N (agreement with the CPU: jackson-device-check, tolerance 1e-4)
    model: ModelConfig = field(default_factory=ModelConfig)   # the Eq. (5) Transformer: its sizes, FFN class, attention and features
    fit: FitConfig = field(default_factory=FitConfig)        # the optimiser: its budget and schedule
    out: str = ""                              # output folder (default: reports/jackson/sweep-a<alphas>-r<ranks>; with --quick runs/jackson/...-quick)
    scheduler: str = ""                        # Dask scheduler address; empty runs in-process
    quick: bool = False                        # seconds-long run: tiny data, model and budget
    gpu: bool = False                          # GPU preset: --device cuda, 4x the steps, 3 restarts (given features: 4)
    c: float = 1.0                             # spectrum scale: sigma_i = c i^-alpha (sigma_1 = c)
    sigma: tuple[float, ...] = ()              # an explicit non-increasing spectrum sigma_1,sigma_2,... (one target; --alpha/--rank do not apply); empty: alpha, rank and c
    sigma_file: str = ""                       # a file of sigma values (one a line or comma-separated, '#' comments), as --sigma; empty: none
    kernel: str = ""                           # the coupling rho(u, v) as an expression in u, v, e.g. "exp(-(u-v)**2/0.1)" (from Python also a callable kernel(u, v)): its numerical POD, one target per --rank, alpha = its fitted decay alpha_hat; empty: the sin/cos/legendre POD of --alpha, --rank
    pod_nodes: int = 256                       # Gauss-Legendre nodes of the numerical POD of --kernel
    term: str = "full"                         # what each member fits: full (the target H) | ff (H with rho cut to its rank-m_h POD truncation, which a rank-m_h attention represents exactly: the feed-forward term of Eq. (17) alone)
    ff_from: str = ""                          # a --term ff run of the same targets: its e_FF beside this run's curve, and the summary says which term of Eq. (17) limits it; empty: none
    terms: bool = False                        # also measure the attention term alone (--features given) and the FFN term alone (--term ff) where no committed run of these settings holds them: two more runs, <out>-given and <out>-ff
    compare_to: str = ""                       # another jackson-sweep folder (e.g. the softmax run of the same targets): its held-out curve beside this one in summary.md and error_vs_mh.png

    def resolved_model(self) -> ModelConfig:
        """The model as the cells run it and config.json records it: an unset --features-k derived -- given features
        take hparams.given_features_k of the largest m_h and rank; learned features do not use it and keep its
        recorded value, 16 (so their cells keep their keys)."""
        if not self.m_h:                   # refused by validate
            return self.model
        return with_features_k(self.model, max(self.m_h), len(self.sigma) if self.sigma else max(self.rank or (math.inf,)))

    def __repr__(self) -> str:
        """The dataclass's repr; an explicit spectrum's without the alpha, rank and c it does not use."""
        skip = {"alpha", "rank", "c"} if (self.sigma or self.sigma_file) else set()
        return f"SweepConfig({', '.join(f'{f.name}={getattr(self, f.name)!r}' for f in dataclasses.fields(self) if f.name not in skip)})"

    def explicit(self) -> tuple[float, ...]:
        """The explicit spectrum: --sigma, or the values of --sigma-file; () for the alpha/rank grid."""
        if self.sigma or not self.sigma_file:
            return tuple(float(v) for v in self.sigma)
        return read_sigma_file(self.sigma_file)

    def spectrum_source(self) -> str:
        """Where the explicit spectrum came from, for summaries: 'file NAME' or '--sigma'."""
        return f"file {Path(self.sigma_file).name}" if self.sigma_file else "--sigma"

    def resolved_out(self) -> Path:
        if self.out:
            return Path(self.out)
        a = "_".join(f"{x:g}" for x in self.alpha)
        r = "_".join(rank_str(x) for x in self.rank)
        att = "" if self.model.attention == "softmax" else f"-{self.model.attention}"   # never mixed into a softmax folder
        if self.model.features == "given":           # the attention term alone: no FFN class, its own folder
            att += "-given"
        elif self.model.activation != ModelConfig().activation:   # nor another FFN class into the default class's folder
            att += f"-{self.model.activation}"
        if self.term != "full":
            att += f"-{self.term}"
        if self.sigma or self.sigma_file:     # one explicit target: named by its file, or by a hash of its values
            import hashlib
            tag = (Path(self.sigma_file).stem if self.sigma_file and not self.sigma
                   else hashlib.sha1(json.dumps(list(self.sigma)).encode()).hexdigest()[:8])
            name = f"sweep-sigma-{tag}{att}"
            return Path("runs/jackson") / f"{name}-quick" if self.quick else Path("reports/jackson") / name
        if self.kernel:     # named by a hash of the expression (or of the Python function's id)
            import hashlib
            tag = hashlib.sha1(kernel_text(self.kernel).encode()).hexdigest()[:8]
            name = f"sweep-kernel-{tag}-r{r}{att}"
            return Path("runs/jackson") / f"{name}-quick" if self.quick else Path("reports/jackson") / name
        if self.c != 1.0:
            att = f"-c{self.c:g}{att}"
        if self.quick:    # smoke runs never default into reports/, which holds committed results
            return Path("runs/jackson") / f"sweep-a{a}-r{r}{att}-quick"
        return Path("reports/jackson") / f"sweep-a{a}-r{r}{att}"

    def families(self) -> tuple[str, str]:
        """(phi, psi) after --construction."""
        return CONSTRUCTIONS[self.construction] if self.construction else (self.phi, self.psi)

    def widths(self) -> tuple[int, ...]:
        return tuple(self.m_ff) or (self.model.width,)

    def targets(self) -> list[tuple[float, float, dict]]:
        """(alpha, rank, spectrum fields of the cell) of every target: the alpha x rank grid (scale c), or the
        one explicit spectrum as (alpha_hat rounded to 1e-4, its nonzero count, its values)."""
        if self.kernel:
            extra = {"kernel": self.kernel, "pod_nodes": self.pod_nodes}
            return [(self.kernel_target().alpha_hat, r, extra) for r in self.rank]
        sig = self.explicit()
        if sig:
            return [(explicit_alpha(sig), float(sum(v > 0 for v in sig)), {"sigma": tuple(float(v) for v in sig)})]
        extra = {"c": self.c} if self.c != 1.0 else {}
        return [(a, r, extra) for a in self.alpha for r in self.rank]

    def kernel_target(self):
        """--kernel's rank-inf target (its alpha_hat, rounded to 1e-4 like an explicit spectrum's, is every rank's alpha)."""
        from synthetic.kernel_target import KernelTarget
        t = KernelTarget(kernel=self.kernel, rank=math.inf, tail_tol=self.tail_tol, k_max=self.k_max,
                         nodes=self.pod_nodes, F=self.F, f=self.f, tau=self.tau)
        a = t.alpha_hat
        object.__setattr__(t, "alpha_hat", round(a, 4) if math.isfinite(a) else a)
        return t

    def cells(self) -> list["RateCell"]:
        from .cell import RateCell       # torch: only once cells are built, so --help and bad options never load it
        phi, psi = self.families()
        return [RateCell(alpha=a, rank=r, seed=s, m_hs=tuple(self.m_h), phi=phi, psi=psi,
                         F=self.F, f=self.f, tau=self.tau, tail_tol=self.tail_tol, k_max=self.k_max,
                         n_train=self.n_train, n_test=self.n_test,
                         model=self.resolved_model() if w == self.model.width else
                         dataclasses.replace(self.resolved_model(), width=w),
                         fit=self.fit, restarts=self.restarts, device=self.device,
                         **({"term": self.term} if self.term != "full" else {}), **sp)
                for w in self.widths() for a, r, sp in self.targets() for s in self.seeds]

    def as_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["model"] = dataclasses.asdict(self.resolved_model())
        d["rank"] = [rank_str(r) for r in self.rank]
        d["out"] = str(self.resolved_out())
        if self.sigma or self.sigma_file:    # the values themselves, so `--config` reruns without the file
            sig = self.explicit()
            d["sigma"] = list(sig)
            d["sigma_file"] = ""
            d["sigma_source"] = self.spectrum_source()
            for k in ("alpha", "rank", "c"):   # the grid's fields do not apply: recorded as what it is instead
                del d[k]
            d["spectrum"] = {"kind": "explicit", "values": len(sig), "nonzero": int(sum(v > 0 for v in sig)),
                             "alpha_hat": explicit_alpha(sig)}
        for k in ("phi", "psi", "F", "f", "kernel"):   # a Python callable by its name: config.json records it, `--config` cannot rerun it
            if callable(d[k]):
                d[k] = function_id(d[k])
        return d


def kernel_text(kernel) -> str:
    """A kernel as text: the expression itself, or a Python callable's jackson.sweep.function_id."""
    return function_id(kernel) if callable(kernel) else str(kernel)


def explicit_alpha(sigma) -> float:
    """alpha_hat of an explicit spectrum (synthetic.pod_target.decay_exponent), rounded to 1e-4: the cell's
    alpha, a key of the tables (a short decimal reads back from the CSVs as the same float)."""
    from synthetic.pod_target import decay_exponent
    a = decay_exponent(sigma)
    return round(a, 4) if math.isfinite(a) else a


# Named constructions of rho (Eq. 10).  With phi = psi the operator is positive and its trace
# sum_i sigma_i <phi_i, psi_i> = sum_i sigma_i is the mean of rho(x, x): for alpha <= 1 and rank inf it
# diverges with K (alpha = 0.55, K = 4096: mean diagonal logit 92 against an off-diagonal sd of 2.6),
# so each token attends to itself and H_t(x) ~ x_t -- a copy task, not a coupling across positions.
# With psi_i = sqrt2 cos(2 pi i x) (orthonormal, and orthogonal to every phi_j) the sigma_i are still
# exactly the singular values, the trace is 0, rho(x, x) = sum_i sigma_i sin(4 pi i x) has variance
# sum sigma_i^2 / 2 < inf for alpha > 1/2, and the self-attention weight stays near 1/tau at every alpha.

# --quick: every size shrunk so the whole pipeline runs in seconds (smoke tests, first tries)
QUICK = {"m_h": (1, 2, 3), "n_train": 256, "n_test": 128, "k_max": 128, "fit_range": (1, 3),
         "model": ModelConfig(n=8, d_v=8, width=16),
         "fit": FitConfig(steps=40, batch_size=32, warmup=5, eval_every=10, eval_size=128)}


def _finite_floats(cfg) -> None:
    """Every float option is a finite number (rank may be inf; it is checked on its own)."""
    for f in dataclasses.fields(cfg):
        v = getattr(cfg, f.name)
        if dataclasses.is_dataclass(v):
            _finite_floats(v)
        elif f.name != "rank":
            vals = v if isinstance(v, tuple) else (v,)
            for x in vals:
                if isinstance(x, float) and not math.isfinite(x):
                    raise UsageError(f"--{f.name.replace('_', '-')}: must be a finite number, got {x}")


MAX_ALPHA = 50.0     # sigma_2 = 2^-alpha is below float64 resolution (1e-15) past this


# --features given: the given-features model trains only W_Q, W_K and (a, b), and needs a faster, larger-batch
# schedule than the MLPs (measured on alpha = 1.5, rank 6, 3000 steps, batch 256: lr 1e-2 left m_h >= 6 at
# 2e-9 - 4e-7, lr 3e-2 at 7e-15 - 7e-9; README and reports/jackson/FITTING.md).  Options given still win.
GIVEN = {"restarts": 2,
         "fit": FitConfig(steps=3000, batch_size=256, lr=3e-2, warmup=100, eval_every=100)}
# ... and it is the better estimate of the attention term (an infimum): on the card's target the same model under the
# full model's recipe (6,000 steps, lr 3e-3, batch 64, 1 restart) ended 1.0-1.35x higher at every m_h
# (reports/jackson/given-recipe-a1.5-rinf/).  So a sweep names a folder of this recipe first as its e_attn.
GIVEN_RECIPE = (GIVEN["fit"], GIVEN["restarts"])   # (fit, restarts): references.recipe_of reads a folder's


# --gpu: the larger budget a GPU affords (defined, not yet run here: no GPU in the sessions so far).
GPU = {"device": "cuda", "restarts": 3, "fit": FitConfig(steps=24000, warmup=800, eval_every=500)}
GPU_GIVEN = {"device": "cuda", "restarts": 4, "fit": FitConfig(steps=12000, batch_size=256, lr=3e-2, warmup=200, eval_every=200)}


def sweep_config(**options) -> SweepConfig:
    """A SweepConfig built the way `jackson-sweep` builds one: the presets the options call for first
    (quick=True, gpu=True, model=ModelConfig(features="given") -- see `presets`), then the options
    themselves.  Options are SweepConfig's fields; a nested config may be given whole
    (`fit=FitConfig(steps=50)`) or as a dict of the fields to change (`fit={"steps": 50}`).

        >>> from jackson import sweep_config
        >>> cfg = sweep_config(quick=True, alpha=(1.0,), fit={"steps": 20})
        >>> cfg.n_train, cfg.fit.steps, cfg.alpha          # QUICK's sizes, the given steps
        (256, 20, (1.0,))
    """
    names = {f.name for f in dataclasses.fields(SweepConfig)}
    unknown = sorted(set(options) - names)
    need(not unknown, f"sweep_config: unknown option(s) {', '.join(unknown)}; SweepConfig has {', '.join(sorted(names))}")
    given: dict = {}                     # the dotted form cli_run hands to `presets` and `from_args`
    for k, v in options.items():
        if isinstance(v, dict):
            given.update({f"{k}.{kk}": vv for kk, vv in v.items()})
        elif dataclasses.is_dataclass(v) and not isinstance(v, type):
            base_v = getattr(SweepConfig(), k)
            given.update({f"{k}.{f.name}": getattr(v, f.name) for f in dataclasses.fields(v)
                          if getattr(v, f.name) != getattr(base_v, f.name)})
        elif hasattr(v, "tolist") and not isinstance(v, (str, bytes)):     # a numpy array (or scalar)
            v = v.tolist()
            given[k] = tuple(v) if isinstance(v, list) else v
        else:
            given[k] = tuple(v) if isinstance(v, (list, range)) else v
    for axis in ("alpha", "rank", "m_h", "seeds", "m_ff", "sigma"):       # one value where a sequence belongs
        if axis in given and isinstance(given[axis], (int, float)) and not isinstance(given[axis], bool):
            given[axis] = (given[axis],)
    if "rank" in given:
        given["rank"] = tuple(float(r) for r in given["rank"])
    from ..config import from_args
    preset = presets(given)
    base = dataclasses.replace(SweepConfig(), **preset) if preset else SweepConfig()
    cfg = from_args(SweepConfig, given, base)
    if cfg.sigma:                                  # as the command line checks --sigma, before anything runs
        check_sigma(cfg.sigma, cfg.m_h)
    return cfg


def presets(given: dict) -> dict:
    """The preset behind a command line: --features given takes GIVEN's fit, --gpu the GPU budget, --quick
    shrinks everything (with given features: QUICK's sizes, GIVEN's learning rate).  The options given on
    the command line are applied on top, and a preset never overrides them: --quick with the caller's --m-h fits
    over all of those m_h (QUICK's fit range belongs to QUICK's own m_h)."""
    explicit = [o for o in ("sigma", "sigma_file") if given.get(o)]
    for o in explicit:
        for axis in ("alpha", "rank", "c"):
            need(axis not in given, f"--{o.replace('_', '-')}: an explicit spectrum is one target; --alpha, --rank and --c "
                                    f"do not apply (its decay alpha_hat is fitted from the values), got --{axis} too")
    need(len(explicit) < 2, "--sigma, --sigma-file: give the values or a file, not both")
    if given.get("kernel"):
        for o in ("alpha", "c", "sigma", "sigma_file", "phi", "psi", "construction"):
            need(o not in given, f"--kernel: the kernel is the coupling (its POD gives sigma, phi and psi, its decay "
                                   f"alpha_hat is fitted); --{o.replace('_', '-')} does not apply")
    out = {}
    if given.get("model.features") == "given":
        out.update(GIVEN)
    if given.get("gpu"):
        out.update(GPU_GIVEN if given.get("model.features") == "given" else GPU)
    if given.get("quick"):
        out.update(QUICK)
        if given.get("model.features") == "given":
            out["fit"] = dataclasses.replace(QUICK["fit"], lr=GIVEN["fit"].lr)
        ms = sorted(set(given.get("m_h") or ()))
        if len(ms) >= 2 and "fit_range" not in given:   # QUICK's fit range is that of its own m_h (1, 2, 3): with
            out["fit_range"] = (ms[0], ms[-1])          # the caller's m_h it spans theirs, so no size is left out
    act = given.get("model.activation")
    if act is None and given.get("model.features") == "given":    # no FFN class: ModelConfig's own (its cells' keys)
        act = CLASSLESS_MODEL.activation
    if act is not None and "model.in_scale" not in given:       # each class with its own first-layer scale
        out["model"] = dataclasses.replace(out.get("model", ModelConfig()), activation=act, in_scale=None)
    return out


def validate(cfg: SweepConfig) -> None:
    """Raise UsageError naming the option and the valid range; writes nothing."""
    _finite_floats(cfg)
    need(all(a <= MAX_ALPHA for a in cfg.alpha),
         f"--alpha: values must be <= {MAX_ALPHA:g} (sigma_2 = 2^-alpha would vanish in float64), got {cfg.alpha}")
    need(all(0 <= s <= MAX_SEED for s in cfg.seeds), f"--seeds: need integers in 0..2^63-1, got {cfg.seeds}")
    need(cfg.construction in ("", *CONSTRUCTIONS),
         f"--construction: choose {', '.join(CONSTRUCTIONS)} (or leave empty for --phi/--psi), got {cfg.construction}")
    need(not cfg.construction or (cfg.phi, cfg.psi) == ("sin", "sin"),
         "--construction: sets phi and psi itself; give it or --phi/--psi, not both")
    need(cfg.restarts >= 1, f"--restarts: must be >= 1, got {cfg.restarts}")
    need(all(w >= 1 for w in cfg.m_ff) and len(set(cfg.m_ff)) == len(cfg.m_ff),
         f"--m-ff: give distinct widths >= 1, got {cfg.m_ff}")
    need(cfg.model.features in FEATURES, f"--features: choose {', '.join(FEATURES)}, got {cfg.model.features}")
    need(not cfg.terms or (cfg.term == "full" and cfg.model.features == "learned"),
         "--terms: measures the two terms of a learned-features --term full run; this run is itself one term "
         f"(--term {cfg.term}, --features {cfg.model.features})")
    if cfg.model.features == "given":
        k = cfg.resolved_model().features_k
        need(k >= max(cfg.m_h), f"--features-k: must be >= the largest m_h ({max(cfg.m_h)}), got {k}")
        need(cfg.model.attention == "softmax", f"--features given: softmax attention only, got {cfg.model.attention}")
        need(not cfg.m_ff, "--m-ff: the given-features model has no f_hat/F_hat to widen")
        from .given import TORCH_F
        need(isinstance(cfg.F, str) and cfg.F in TORCH_F,
             f"--F: the given-features model applies F in torch and knows {', '.join(TORCH_F)}; "
             f"an expression or Python callable F ({kernel_text(cfg.F)!r}) needs --features learned")
    need(cfg.model.activation in ACTIVATIONS,
         f"--activation: choose {', '.join(ACTIVATIONS)} (the FFN class of f_hat and F_hat), got {cfg.model.activation!r}")
    need(cfg.term in TERMS, f"--term: choose {', '.join(TERMS)}, got {cfg.term!r}")
    need(not (cfg.term == "ff" and cfg.model.features == "given"),
         "--term ff: the feed-forward term needs learned features (the given-features model has no f_hat; "
         "--features given is the attention term alone)")
    need(not (cfg.term == "ff" and cfg.model.attention != "softmax"),
         f"--term ff: a rank-m_h softmax attention represents the truncated target exactly; {cfg.model.attention} "
         f"attention does not")
    need(cfg.model.given_qk_sd > 0, f"--given-qk-sd: must be > 0, got {cfg.model.given_qk_sd}")
    full = SweepConfig()
    need(not (cfg.quick and (cfg.n_train, cfg.n_test, cfg.model.n, cfg.fit.steps)
              == (full.n_train, full.n_test, full.model.n, full.fit.steps)),
         "quick=True alone shrinks nothing from Python (the preset is applied by the command line); "
         "build the config with jackson.sweep_config(quick=True, ...) to get what --quick runs")
    check_device(cfg.device)
    if cfg.sigma or cfg.sigma_file:
        need(not (cfg.sigma and cfg.sigma_file),
             "--sigma, --sigma-file: give the values or a file, not both (a --config file already holds sigma)")
        need(cfg.alpha == full.alpha and cfg.rank == full.rank and cfg.c == full.c,
             f"--sigma: an explicit spectrum is one target; --alpha, --rank and --c do not apply (its decay alpha_hat is "
             f"fitted from the values), got alpha {cfg.alpha}, rank {tuple(rank_str(r) for r in cfg.rank)}, c {cfg.c:g}")
        check_sigma(cfg.explicit(), cfg.m_h)
    if cfg.kernel:
        check_kernel(cfg)
    need(cfg.c > 0, f"--c: the scale must be > 0, got {cfg.c:g}")
    need(len(cfg.alpha) > 0 and all(a > 0 for a in cfg.alpha), f"--alpha: values must be > 0, got {cfg.alpha}")
    need(len(cfg.rank) > 0, "--rank: give at least one rank")
    for r in cfg.rank:
        need(r >= 1 and (math.isinf(r) or r == int(r)), f"--rank: must be integers >= 1 or inf, got {r:g}")
        if math.isinf(r):
            for a in cfg.alpha:
                need(a > 0.5, f"--alpha: rank inf needs alpha > 0.5 (sum of sigma_i^2 = sum i^-2alpha diverges), got {a:g}")
    need(len(cfg.m_h) > 0 and len(set(cfg.m_h)) == len(cfg.m_h), f"--m-h: give distinct values, got {cfg.m_h}")
    limit, what = ((cfg.resolved_model().features_k, "--features-k, the given features") if cfg.model.features == "given"
                   else (cfg.model.n, "--n, the embedding width"))
    for m in cfg.m_h:
        need(1 <= m <= limit, f"--m-h: each m_h must be in 1..{limit} ({what}), got {m}")
    need(all(s >= 0 for s in cfg.seeds) and len(cfg.seeds) > 0, f"--seeds: need integers >= 0, got {cfg.seeds}")
    need(cfg.tau >= 1, f"--tau: must be >= 1, got {cfg.tau}")
    need(cfg.tail_tol > 0, f"--tail-tol: must be > 0, got {cfg.tail_tol}")
    need(cfg.k_max >= max(cfg.m_h), f"--k-max: must be >= the largest m_h, got {cfg.k_max}")
    need(cfg.n_test >= 64, f"--n-test: must be >= 64 (bootstrap blocks), got {cfg.n_test}")
    need(cfg.n_train >= cfg.fit.batch_size, f"--n-train: must be >= --batch-size ({cfg.fit.batch_size}), got {cfg.n_train}")
    need(len(cfg.fit_range) == 2 and 1 <= cfg.fit_range[0] < cfg.fit_range[1],
         f"--fit-range: give lo,hi with 1 <= lo < hi, got {cfg.fit_range}")
    m, ft = cfg.model, cfg.fit
    need(m.d_in == 1, f"--d-in: POD targets have scalar inputs, so it must be 1, got {m.d_in}")
    need(m.pos == "none", "--pos: Eq. (8) targets carry no position and rho_hat(u, v) needs none; use none")
    need(m.n >= 1 and m.d_v >= 1 and m.width >= 1 and m.depth >= 2 and m.d_pos >= 1 and m.tau_max >= 1,
         "--n, --d-v, --width: must be >= 1 and --depth >= 2 (at least one hidden layer)")
    need(m.qk_init > 0, f"--qk-init: must be > 0, got {m.qk_init:g}")
    need(m.in_scale > 0, f"--in-scale: the first layer's init scale must be > 0, got {m.in_scale:g}")
    need(m.attention in ATTENTIONS, f"--attention: choose {', '.join(ATTENTIONS)}, got {m.attention}")
    need(ft.steps >= 1 and ft.batch_size >= 1 and ft.eval_every >= 1 and ft.eval_size >= 1,
         "--steps, --batch-size, --eval-every, --eval-size: must be >= 1")
    need(0 < ft.lr <= MAX_LR, f"--lr: Adam's peak learning rate must be in 0 < lr <= {MAX_LR:g} (each step moves "
                              f"a weight by up to lr; larger ones diverge), got {ft.lr:g}")
    need(0 < ft.min_lr <= ft.lr, f"--lr, --min-lr: need 0 < min-lr <= lr, got {ft.lr}, {ft.min_lr}")
    need(ft.schedule in ("plateau", "cosine"), f"--schedule: choose plateau or cosine, got {ft.schedule}")
    why = schedule_problem(ft)
    need(not why, why)
    need(0 < ft.lr_decay < 1, f"--lr-decay: must be in (0, 1), got {ft.lr_decay}")
    need(ft.warmup >= 0, f"--warmup: must be >= 0, got {ft.warmup}")
    need(ft.patience >= 1, f"--patience: must be >= 1, got {ft.patience}")
    need(0 <= ft.min_improve < 1, f"--min-improve: must be in [0, 1), got {ft.min_improve:g}")
    need(0 <= ft.converged_lr_frac <= 1, f"--converged-lr-frac: must be in [0, 1], got {ft.converged_lr_frac:g}")
    need(ft.explode > 1, f"--explode: must be > 1 (a multiple of E[y^2], the zero predictor's MSE: at or below it "
                         f"every fit counts as diverged), got {ft.explode:g}")
    from .cost import check as check_cost
    check_cost(cfg)                       # priced before a target is built or the run folder opened
    try:
        for c in cfg.cells():
            if c.seed == cfg.seeds[0]:
                c.target()
    except TargetError as e:
        raise UsageError(str(e)) from None
    check_run_folder(cfg.resolved_out(), "jackson-sweep")
    check_same_config(cfg)
    check_scheduler(cfg.scheduler)
    if cfg.ff_from:
        from .references import check_ff_from
        check_ff_from(cfg)
    if cfg.compare_to:
        ref = Path(cfg.compare_to)
        need((ref / "summary.json").is_file(), f"--compare-to: {ref} holds no summary.json (not a finished jackson-sweep folder)")
        need(ref.resolve() != cfg.resolved_out().resolve(), "--compare-to: give another run's folder, not this run's --out")
        try:
            targets = reference_run(ref)["targets"]
        except (OSError, KeyError, TypeError, ValueError) as e:
            raise UsageError(f"--compare-to: cannot read {ref / 'summary.json'} as a jackson-sweep summary ({e})") from None
        mine = {(float(a), rank_str(r)) for a, r, _ in cfg.targets()}
        need(bool(mine & set(targets)), f"--compare-to: {ref} has none of this run's targets (alpha, rank) {sorted(mine)}")


def check_kernel(cfg: SweepConfig) -> None:
    """--kernel: the other ways of giving a coupling left at their defaults, a kernel that parses, is finite on
    [0, 1]^2 and has at least two POD terms (alpha_hat is fitted to them); one line otherwise."""
    full = SweepConfig()
    for opt, same in (("alpha", cfg.alpha == full.alpha), ("c", cfg.c == full.c),
                      ("sigma", not cfg.sigma and not cfg.sigma_file),
                      ("phi", (cfg.phi, cfg.psi, cfg.construction) == (full.phi, full.psi, full.construction))):
        need(same, f"--kernel: the kernel is the coupling (its POD gives sigma, phi and psi, its decay alpha_hat is "
                   f"fitted); --{opt} does not apply")
    need(cfg.model.features != "given", "--kernel: the given-features model needs a named basis (--phi/--psi); "
                                        "use --features learned")
    need(isinstance(cfg.pod_nodes, int) and 2 <= cfg.pod_nodes <= 4096, f"--pod-nodes: must be in 2..4096, got {cfg.pod_nodes}")
    try:
        t = cfg.kernel_target()
    except TargetError as e:
        raise UsageError(str(e)) from None
    need(t.numerical_rank >= 2, f"--kernel: {kernel_text(cfg.kernel)!r} has numerical rank {t.numerical_rank} on "
                                f"[0, 1]^2; at least 2 POD terms are needed to fit its decay alpha_hat")
