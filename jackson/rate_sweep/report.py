"""The lab report's entry for a jackson-sweep folder (report.json): `report_hook`, `write_report_json`."""
from __future__ import annotations

import math
from pathlib import Path


from .config import CONSTRUCTIONS
from .summary_text import PREDICTED_EXPLICIT, PREDICTED_KERNEL, explicit_text, kernel_text, not_power_law
from ..config import read_json
from ..hparams import recorded


# ---- the lab report's entry (report.json) ---------------------------------------------------------

def seeds_text(seeds) -> str:
    """'3 (0, 1, 2)' for a list of seeds; the value itself otherwise."""
    if isinstance(seeds, (list, tuple)):
        return f"{len(seeds)} ({', '.join(map(str, seeds))})"
    return str(seeds)


def seeds_drawn(n_seeds) -> str:
    """What error_vs_mh.png draws of the trained model, in the caption's words, given each target's number
    of seeds: `plot` draws a target's median over its seeds (one seed: its values) and, with more than one,
    the min-max band over them."""
    ns = sorted(set(int(n) for n in n_seeds))
    if ns == [1]:
        return "one seed, no band"
    which = f"the {ns[0]} seeds" if len(ns) == 1 else f"each target's seeds ({ns[0]}-{ns[-1]})"
    return f"median over {which}, shaded band: min-max over them" + ("" if ns[0] > 1 else " where there are several")


def measured_exponent(e: dict) -> dict:
    """A headline row's measured exponent, with its 95% bootstrap interval (lo, hi) where the fit gave one."""
    out = {"measured": e["slope"]}
    if all(isinstance(e.get(k), (int, float)) and math.isfinite(e[k]) for k in ("lo", "hi")):
        out.update(lo=e["lo"], hi=e["hi"])
    return out


def report_hook(folder: Path) -> dict:
    """The lab report's entry for a jackson-sweep folder (jackson/lab_report/page.py reads it as report.json), built
    from what the run wrote: summary.json, config.json, command.txt and the figures."""
    s = read_json(folder / "summary.json")
    cfg = read_json(folder / "config.json")
    command = (folder / "command.txt").read_text().strip()
    seeds = cfg.get("seeds", [])
    alphas = sorted({t["alpha"] for t in s["targets"]})
    ranks = list(dict.fromkeys(t["rank"] for t in s["targets"]))
    mh = cfg.get("m_h", [])
    t0 = s["targets"][0] if s["targets"] else {}
    # the cells' own bases; a summary that does not record them: the config's --construction, else its --phi/--psi
    fam = CONSTRUCTIONS.get(cfg.get("construction") or "", (cfg.get("phi", "sin"), cfg.get("psi", "sin")))
    bases = f"{t0.get('phi', fam[0])}/{t0.get('psi', fam[1])} bases"
    data = (f"synthetic POD targets of Eq. (8) (F = {cfg.get('F', 'identity')}, f = {cfg.get('f', 'identity')}, "
            f"{bases}), x ~ U[0,1], tau = {cfg.get('tau', '?')}; "
            f"{cfg.get('n_train', '?')} training / {cfg.get('n_test', '?')} held-out sequences per target and seed; "
            f"m_h = {min(mh) if mh else '?'}..{max(mh) if mh else '?'}")
    explicit = [t for t in s["targets"] if t.get("explicit")]
    kernels = [t for t in s["targets"] if t.get("kernel")]
    if kernels:
        k = kernels[0]["kernel"]
        data = data.replace(bases,
                            f"coupling the {kernel_text(kernels[0])}: its numerical POD on {k['nodes']} nodes, "
                            f"Nystrom-extended, alpha_hat = {k['alpha_hat']:g} fitted to its sigma")
    elif explicit:
        e = explicit[0]["explicit"]
        data += (f"; spectrum: {explicit_text(explicit[0])}, sigma = ({', '.join(f'{v:.4g}' for v in e['sigma'][:16])}"
                 f"{', ...' if e['K'] > 16 else ''}), alpha_hat = {e['alpha_hat']:g} fitted to it")
    elif cfg.get("c", 1.0) != 1.0:
        data += f"; scale c = {cfg['c']:g} (sigma_i = c i^-alpha)"
    if recorded(t0, "activation") != "gelu":
        data += f"; FFN class: {t0['activation']} activations, first-layer init scale {recorded(t0, 'in_scale'):g}"
    if t0.get("term", "full") == "ff":
        data += "; each member fitted to the rank-m_h truncation of its target (the feed-forward term alone)"
    tail = f" Data: {data}. Seeds: {seeds_text(seeds)}. Command: `{command}`."
    widths = s.get("m_ff", [])
    drawn = seeds_drawn(t.get("n_seeds") or len(seeds) for t in s["targets"])   # older summaries: the config's seeds
    refs = sorted({t["reference"]["attention"] for t in s["targets"] if "reference" in t})
    figs = [("error_vs_mh.png",
             f"Held-out MSE of the trained Eq. (5) model (dots; {drawn}) "
             f"and of the rank-m_h POD oracle (dashed; dotted: s = t logits kept exact) against m_h, one panel per alpha "
             f"({', '.join(f'{a:g}' for a in alphas)}), a colour per rank ({', '.join(ranks)})"
             + (f" and m_FF ({', '.join(map(str, widths))})" if len(widths) > 1 else "")
             + (f"; hollow squares: the {', '.join(refs)} attention model of the run compared with (--compare-to), "
                f"mean over its seeds" if refs else "")
             + "; grey: the slope m_h^-(2 alpha - 1) of Theorem 4.1."),
            ("learned_spectrum.png", "Singular values of the learned coupling rho_hat (one line per m_h) against the "
                                     "target's sigma_i, one panel per target."),
            ("loss_curves.png", "Training-subset MSE against optimiser step, one line per m_h, one panel per target.")]
    lo, hi = s.get("fit_range", [1, 8])
    kind = s.get("attention", "softmax")
    if kind != "softmax":   # the model is Eq. (5) with another attention: say so in every caption
        figs = [(f, c.replace("the trained Eq. (5) model", f"the trained Eq. (5) model with {kind} attention"))
                for f, c in figs]
    paper = []
    feats = s.get("features", "learned")
    for t in s["targets"]:
        e = t.get("exponents", {})
        if kind != "softmax" or t.get("term", "full") == "ff":
            continue        # Theorem 4.1 is about softmax attention and the target itself: no paper value beside these
        flag = t.get("degenerate", {})
        if t.get("explicit") and "test" in e:
            paper.append({"quantity": f"{explicit_text(t)}: exponent of held-out MSE in m_h (fit over m_h "
                                      f"{t['fit_m_h'][0]}..{t['fit_m_h'][-1]}; {PREDICTED_EXPLICIT}, alpha_hat = {t['alpha']:g})"
                                      + (f" -- {flag['why']}: not agreement" if flag.get("flag") else ""),
                          "paper": t["predicted_exponent"], **measured_exponent(e["test"])})
        if t.get("explicit") and "oracle" in e:
            paper.append({"quantity": f"{explicit_text(t)}: exponent of the rank-m_h oracle ({PREDICTED_EXPLICIT})",
                          "paper": t["predicted_exponent"], **measured_exponent(e["oracle"])})
        name = f"{kernel_text(t)} (alpha_hat = {t['alpha']:g})" if t.get("kernel") else f"alpha = {t['alpha']:g}"
        pred = PREDICTED_KERNEL if t.get("kernel") else "Theorem 4.1 predicts -(2 alpha - 1)"
        if t["rank"] == "inf" and "test" in e:
            paper.append({"quantity": f"{name}, rank inf: exponent of held-out MSE in m_h "
                                      f"(fit over m_h {lo}..{hi}; {pred})"
                                      + (f" -- {flag['why']}: not agreement" if flag.get("flag") else ""),
                          "paper": t["predicted_exponent"], **measured_exponent(e["test"])})
        if t["rank"] == "inf" and "oracle_self_exact" in e:
            paper.append({"quantity": f"{name}, rank inf: exponent of the rank-m_h oracle, s != t part",
                          "paper": t["predicted_exponent"], **measured_exponent(e["oracle_self_exact"])})
    for row in paper:
        if "lo" in row:
            row["quantity"] += "; in brackets its 95% bootstrap interval"
    nopl = {explicit_text(t) if t.get("explicit") else f"{kernel_text(t)} (alpha_hat = {t['alpha']:g})"
            for t in s["targets"] if not_power_law(t)}
    for row in paper:          # sigma fails the power-law test: -(2 alpha_hat - 1) is no prediction
        if any(row["quantity"].startswith(n) for n in nopl):
            row["paper"] = None
            row["quantity"] += " -- sigma is not a power law (jackson.rates.spectrum_law): no predicted exponent"
    notes = []
    for t in s["targets"]:
        ch = t.get("checks", {})
        if "knee_drop" in ch:
            notes.append(f"alpha {t['alpha']:g}, rank {t['rank']}: held-out MSE drops {ch['knee_drop']:.3g}x from "
                         f"m_h = {int(t['rank']) - 1} to {t['rank']}"
                         + (f" and {ch['drop_r_to_r_plus_1']:.3g}x from {t['rank']} to {int(t['rank']) + 1}"
                            if "drop_r_to_r_plus_1" in ch else ""))
        if "max_trained_over_oracle_mh_le_8" in ch:
            notes.append(f"alpha {t['alpha']:g}, rank inf: held-out / oracle <= "
                         f"{ch['max_trained_over_oracle_mh_le_8']:.3g} for m_h <= 8")
    outl = sorted({m for t in s["targets"] for m in t.get("checks", {}).get("optimisation_outliers", [])})
    text = ("Measured: " + "; ".join(notes) + "." if notes else "")
    if kind != "softmax":
        text = (f"Attention: {kind} (not the softmax of Theorem 4.1, so no predicted exponent is set beside it; "
                f"the comparison with softmax on the same targets is in summary.md). " + text)
    if outl:
        text += f" Members flagged as optimisation outliers (stuck far above smaller m_h): m_h = {', '.join(map(str, outl))}."
    if feats == "given":
        text = ("Given features: f_hat replaced by the target's own basis, only W_Q, W_K and an affine value map trained "
                "(the attention term of Eq. (17) alone). " + text)
    head = (f"jackson-sweep: {kernel_text(kernels[0])}; rank {', '.join(ranks)}" if kernels else
            f"jackson-sweep: {explicit_text(explicit[0])}" if explicit else
            f"jackson-sweep: alpha {', '.join(f'{a:g}' for a in alphas)}; rank {', '.join(ranks)}"
            + (f"; c = {cfg['c']:g}" if cfg.get("c", 1.0) != 1.0 else ""))
    return {"section": "jackson",
            "title": head
                     + (f"; {kind} attention" if kind != "softmax" else "")
                     + ("; given features" if feats == "given" else "")
                     + (f"; {t0['activation']} FFN" if recorded(t0, "activation") != "gelu" else "")
                     + ("; feed-forward term alone" if t0.get("term", "full") == "ff" else "") + f" ({folder.name})",
            "data": data, "command": command, "seeds": seeds, "paper": paper, "text": text.strip(),
            "figures": [{"file": f, "caption": c + tail} for f, c in figs]}


def write_report_json(folder: Path) -> Path:
    """report.json beside the summary: the one interface jackson-report reads."""
    from ..runfolder import write_report
    return write_report(folder, report_hook(Path(folder)))
