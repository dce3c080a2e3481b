"""Speed of vit-probe spectra (issue 4, part 8): 1,000 CIFAR-10 images through the shared small ViT,
logits of every layer and head, singular values of every 65x65 matrix.  Goal: <= 60 s on 2 cores.

    python benchmarks/bench_vit_probe.py [--data ../shared/data/cifar10-jpeg/cifar10-jpeg-q75.tar.gz]
                                         [--checkpoint ../shared/data/vit-cifar10-small/...pth]

Times (a) the first load of the test split (decode + cache; skipped when the cache is warm) and
(b) the spectra themselves (forward passes + probe + batched SVD), best of --repeats, and prints
a markdown row with the machine and thread count.
"""
from __future__ import annotations

import argparse
import os
import platform
import time

import torch

from vit_probe import data as cdata
from vit_probe import models, spectra
from vit_probe.common import SHARED_CKPT, SHARED_DATA


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=SHARED_DATA)
    ap.add_argument("--checkpoint", default=SHARED_CKPT)
    ap.add_argument("--arch", default="vit_p4_d128_l4_h4")
    ap.add_argument("--n-images", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    t = time.time()
    te = cdata.load(a.data, "test")
    t_load = time.time() - t
    model = models.build(models.parse_arch(a.arch))
    models.load_weights(model, models.read_state_dict(a.checkpoint))
    imgs = te.images[cdata.subset(te.labels, a.n_images, 0)]   # stratified: the test split is sorted by class
    L, H = len(model.blocks), model.blocks[0].attn.num_heads
    times = []
    for _ in range(a.repeats):
        t = time.time()
        sv = spectra.collect(model, imgs, list(range(L)), list(range(H)), batch=100, progress=False)
        times.append(time.time() - t)
    n_svd = sum(v.shape[0] for v in sv.values())
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch threads {a.threads}")
    print("| what | images | SVDs | best s | all s | goal | met |")
    print("|---|---|---|---|---|---|---|")
    print(f"| spectra, {a.arch}, all {L} layers x {H} heads | {len(imgs)} | {n_svd} | {min(times):.1f} | "
          f"{', '.join(f'{x:.1f}' for x in times)} | <= 60 s | {'yes' if min(times) <= 60 else 'no'} |")
    print(f"(loading the test split took {t_load:.1f} s: {'cache warm' if t_load < 5 else 'decode + cache'}; "
          f"data: {te.source})")


if __name__ == "__main__":
    main()
