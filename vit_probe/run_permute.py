"""vit-probe permute (Table 1, ViT column): accuracy before and after a fixed permutation of the
patch tokens (after the patch embedding, before the position encoding), with continued training
on the permuted data and, as a control, on the original data."""
from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pandas as pd
import torch

from jackson.runfolder import open_run

from . import models
from .common import PAPER, data_split, report_json, say_quick, take_together, train_draw
from .configs import PermuteConfig, validate_permute
from .train import train


def move_first_to_end(n_tokens: int, n_first: int) -> torch.Tensor:
    """The permutation p with (x o p)[j] = x[p[j]]: tokens n_first.. first, then tokens 0..n_first-1."""
    return torch.cat([torch.arange(n_first, n_tokens), torch.arange(n_first)])


class PermuteTokens:
    """Forward hook on `model.patch_embed`: permutes the patch tokens after the embedding and
    before the class token and position encoding are added (App. C)."""

    def __init__(self, model, perm: torch.Tensor):
        self.perm = perm
        self.handle = model.patch_embed.register_forward_hook(self._hook)

    def _hook(self, _mod, _inp, out):
        return out[:, self.perm.to(out.device)]          # (B, N_patches, C)

    def remove(self):
        self.handle.remove()


def run_permute(cfg: PermuteConfig, command: str, progress: bool = True) -> dict:
    validate_permute(cfg)
    arch = models.parse_arch(cfg.arch)

    def fresh():
        torch.manual_seed(cfg.seed)
        return models.build(arch)

    model = fresh()
    if cfg.checkpoint:   # checked (head count included) before any data is read or file written
        models.load_checkpoint(model, cfg.checkpoint, cfg.arch)
        origin = f"weights {Path(cfg.checkpoint).name} (trained on the original data elsewhere)"
    tr = data_split(cfg.data, "train", cfg.cache, cfg.download, progress)
    te = data_split(cfg.data, "test", cfg.cache, cfg.download, progress)
    say_quick(cfg, progress)
    out = Path(cfg.out)
    with open_run(out, "vit-probe permute", command, dataclasses.asdict(cfg), device=cfg.device) as out:
        work = out / "checkpoints"
        work.mkdir(parents=True, exist_ok=True)
        dev = cfg.device
        perm = move_first_to_end(arch.tokens - 1, cfg.n_first)
        # only the training images used are read from an archive (one pass): train()'s draws
        ft_idx = train_draw(tr.labels, cfg.finetune.n_train, cfg.seed + 1)
        if cfg.checkpoint:
            (ft_x,) = take_together(tr, ft_idx)
        else:
            orig_idx = train_draw(tr.labels, cfg.original.n_train, cfg.seed)
            orig_x, ft_x = take_together(tr, orig_idx, ft_idx)
            train(model, orig_x, tr.labels[orig_idx], cfg.original, cfg.seed, work / "original.pt", progress,
                  "original", device=dev, arch=cfg.arch)
            origin = f"trained here on the original data ({cfg.original.epochs:g} epochs)"
        start = {k: v.clone() for k, v in model.state_dict().items()}
        model.to(dev)
        rows = [{"phase": "original model", "test_data": "original", "accuracy": models.accuracy(model, te.images, te.labels, device=dev)}]
        hook = PermuteTokens(model, perm)
        rows.append({"phase": "original model, no further training", "test_data": "permuted",
                     "accuracy": models.accuracy(model, te.images, te.labels, device=dev)})
        hook.remove()
        arms = [("permuted", True)] + ([("original", False)] if cfg.control else [])
        for name, permuted in arms:
            m = fresh()
            m.load_state_dict(start)
            h = PermuteTokens(m, perm) if permuted else None
            hist = train(m, ft_x, tr.labels[ft_idx], cfg.finetune, cfg.seed + 1, work / f"finetune_{name}.pt", progress,
                         f"continue on {name}", device=dev, arch=cfg.arch)
            rows.append({"phase": f"continued training on {name} data ({cfg.finetune.epochs:g} epochs)",
                         "test_data": name, "accuracy": models.accuracy(m, te.images, te.labels, device=dev),
                         "train_loss_last_epoch": hist[-1]["train_loss"] if hist else float("nan")})
            if h:
                h.remove()
        shutil.rmtree(work, ignore_errors=True)
        tab = pd.DataFrame(rows)
        tab.to_csv(out / "permute.csv", index=False)
        before, after = rows[0]["accuracy"], rows[2]["accuracy"]
        summary = {"data": tr.source, "origin": origin, "before": before, "after": after,
                   "zero_shot_permuted": rows[1]["accuracy"], "control": rows[3]["accuracy"] if cfg.control else None,
                   "n_test": len(te),
                   "paper": {"before": PAPER["acc_original"], "after": PAPER["acc_altered"]}}
        (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
        ft = cfg.finetune
        lines = [f"# Permutation test (Table 1, ViT column) on {tr.source}", "",
                 f"Model: {cfg.arch}, {origin}. Permutation: the first {cfg.n_first} of {arch.tokens - 1} patch tokens "
                 "moved to the end, after the patch embedding and before the class token and position encoding. "
                 f"Continued training: {ft.epochs:g} epochs on {min(ft.n_train, len(tr))} images, batch {ft.batch_size}, "
                 f"AdamW lr {ft.lr:g}, cosine, device {cfg.device}, seed {cfg.seed}. Accuracy on the {len(te)} test images.", "",
                 "| model | test data | accuracy |", "|---|---|---|"]
        lines += [f"| {r['phase']} | {r['test_data']} | {r['accuracy']:.4f} |" for r in rows]
        lines += ["", f"Before -> after: {before:.4f} -> {after:.4f} (ratio {after / before:.3f}). "
                  f"Paper (ViT-B/16): {PAPER['acc_original']} -> {PAPER['acc_altered']} "
                  f"(ratio {PAPER['acc_altered'] / PAPER['acc_original']:.3f})."]
        if cfg.control:
            lines.append(f"Control, the same continued training on the original data: {rows[3]['accuracy']:.4f}.")
        (out / "summary.md").write_text("\n".join(lines) + "\n")
        report_json(out, title="Permutation test (Table 1, ViT)", section="vit_probe", data=tr.source, command=command,
                     seeds=1, figures=[],
                     paper=[{"quantity": "accuracy, original", "paper": PAPER["acc_original"], "measured": before},
                            {"quantity": "accuracy, altered (permuted, continued training)", "paper": PAPER["acc_altered"],
                             "measured": after},
                            {"quantity": "accuracy ratio altered / original (model-size free)",
                             "paper": PAPER["acc_altered"] / PAPER["acc_original"], "measured": after / before}],
                     text="\n".join(lines[2:]))
        if progress:
            print(f"accuracy {before:.4f} -> {after:.4f} after moving the first {cfg.n_first} patch tokens to the end "
                  f"and continued training (ratio {after / before:.3f}; paper {PAPER['acc_original']} -> "
                  f"{PAPER['acc_altered']}, ratio {PAPER['acc_altered'] / PAPER['acc_original']:.3f})"
                  + (f"; control, continued on the original data: {rows[3]['accuracy']:.4f}" if cfg.control else ""))
            print(f"results: {out}/permute.csv")
            print(f"summary: {out}/summary.md")
    return summary
