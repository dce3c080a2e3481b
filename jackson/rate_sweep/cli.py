"""The thin `jackson-sweep` entry point: parse, call a library function, print where the results went."""
from __future__ import annotations

import sys

from ..command import cli_run
from ..config import guarded, install_signals


def sweep_main(argv: list[str] | None = None) -> int:
    install_signals()     # before the heavy imports: Ctrl-C during start-up is one line too
    cfg, result = guarded("jackson-sweep", lambda: _sweep(sys.argv[1:] if argv is None else argv))
    summary = result.summary
    for line in result_block(summary, cfg.resolved_out()):
        headline = not line.startswith((" ", "results: ", "figures: "))
        print(f"[quick run] {line}" if cfg.quick and headline else line)
    return 0


WIDTH = 96    # a printed result line's most characters (quoted in the README with a 4-space indent: 100)


def result_block(summary: dict, folder) -> list[str]:
    """What jackson-sweep prints, target by target, headline first: a target judged by the rate rule gets its exponent
    against Theorem 4.1, one line per promised range (against the exact tail), the limiting term at its largest m_h
    and what its members are; any other target its one line (exponent_lines); then the files it wrote.
    Lines of at most WIDTH characters (a long --out aside); summary.md holds the rest."""
    out = []
    for t, line in zip(summary["targets"], exponent_lines(summary)):
        if t.get("rate", {}).get("ranges") and t["exponents"].get("test") and not t.get("kernel") and not t.get("explicit"):
            out += _rate_block(t, len(summary.get("m_ff", [])) > 1, summary.get("cycle_stops"))
        else:
            out.append(line)
    t0 = summary["targets"][0] if summary["targets"] else {}
    model = f"{t0.get('attention', 'softmax')}, {t0.get('features', 'learned')} features" if t0 else "all of it"
    out.append(f"results: {folder}/results.csv, summary.md ({model})")
    out.append(f"figures: {folder}/error_vs_mh.png, learned_spectrum.png, loss_curves.png")
    return out


def _rate_block(t: dict, by_mff: bool, cap: dict | None) -> list[str]:
    import textwrap
    from .summary_text import format_exponent, members_text
    from .terms import LIMIT_NAME
    rate, w = t["rate"], f" m_FF={t['m_ff']}" if by_mff else ""
    lines = [f"alpha={t['alpha']:g} rank={t['rank']}{w}: exponent {format_exponent(t['exponents']['test'])}, "
             f"Theorem 4.1 {t['predicted_exponent']:+.2f}; rate {rate['verdict']}"]
    for r in rate["ranges"]:
        if r.get("d") is None:
            lines.append(f"  m_h {r['range']}: {r['verdict']} ({r['why']})")
            continue
        lines.append(f"  m_h {r['range']}: {r['measured']:+.2f} vs exact tail {r['reference']:+.2f}, d {r['d']:+.2f} "
                     f"[{r['d_lo']:+.2f}, {r['d_hi']:+.2f}]: {r['verdict']}" + (", budget members" if r.get("budget") else ""))
    rows = (t.get("terms") or {}).get("rows") or []
    if rows:
        top = rows[-1]
        nums = ", ".join(f"{k.replace('e_ff', 'e_FF')} {top[k]:.2g}" for k in ("e_full", "e_attn", "e_ff")
                         if top.get(k) is not None)
        lines.append(f"  Eq. (17) terms at m_h {top['m_h']}: limited by {LIMIT_NAME.get(top['limiting'], top['limiting'])} "
                     f"({nums})")
    else:
        lines.append("  which term limits it: not measured (a --term ff and a --features given run measure them)")
    labels = members_text(t)        # "doubling check: 10 converged, ..." or the not-checked note
    notes = [f"{labels.removeprefix('doubling check: ')} (doubling check)" if labels.startswith("doubling check: ")
             else labels]
    st = t.get("statuses", {})
    if st.get("budget"):
        notes.append(f"{st['budget']} of {sum(st.values())} " + (f"members still falling at the cap of {cap['cycles']} cycles"
                                                               if cap else "still improving"))
    if st.get("diverged"):
        notes.append(f"{st['diverged']} diverged")
    if t.get("degenerate", {}).get("flag"):
        notes.append(t["degenerate"]["why"])
    lines += textwrap.wrap("members: " + "; ".join(notes), WIDTH, initial_indent="  ", subsequent_indent="    ",
                           break_on_hyphens=False)
    return lines


def _sweep(argv: list[str]):
    from .config import SweepConfig, presets
    from .experiment import run_sweep, sweep_grid
    return cli_run("jackson-sweep", SweepConfig,
                   "Fit the Eq. (5) Transformer to POD targets for each m_h and measure the rate "
                   "(Jiang & Li, Theorem 4.1 / Fig. 1).", presets, run_sweep, argv, sweep_grid)


def exponent_lines(summary: dict) -> list[str]:
    """One line per target: its fitted exponent, and on the same line what would make it untrustworthy
    (members still improving at the schedule's end or diverged, the doubling check's labels, a degenerate target,
    the finite-rank knee verdict)."""
    from .summary_text import format_exponent as _fmt_exp, knee_short, members_text, not_power_law, rate_short, target_law   # here: --help loads no pandas
    out = []
    for t in summary["targets"]:
        e = t["exponents"].get("test")
        w = f" m_FF={t['m_ff']}" if len(summary.get("m_ff", [])) > 1 else ""
        head = f"alpha={t['alpha']:g} rank={t['rank']}{w} ({t['attention']} attention, {t.get('features', 'learned')} features): "
        pred = (f"predicted {t['predicted_exponent']:+.2f}" if t["rank"] == "inf"
                else "no power law predicted below the rank (exact once m_h >= r)")
        if t.get("kernel"):
            head = (f"kernel rho(u, v) = {t['kernel']['expression']} (rank {t['rank']}, K = {t['K']}, "
                    f"alpha_hat={t['alpha']:g}){w} ({t['attention']} attention, {t.get('features', 'learned')} features): ")
            if t["rank"] == "inf":
                pred = f"predicted -(2 alpha_hat - 1) = {t['predicted_exponent']:+.2f} from the fitted decay of its POD sigma"
        elif t.get("explicit"):
            ex = t["explicit"]
            src = f", {ex['source']}" if ex.get("source", "--sigma") != "--sigma" else ""
            head = (f"explicit spectrum ({ex['K']} values{src}, rank {ex['rank']}, alpha_hat={t['alpha']:g}){w} "
                    f"({t['attention']} attention, {t.get('features', 'learned')} features): ")
            pred = f"predicted -(2 alpha_hat - 1) = {t['predicted_exponent']:+.2f} from the fitted decay of the given sigma"
        if not_power_law(t):
            law = target_law(t)
            pred = (f"no predicted exponent: sigma is not a power law (an exponential decay fits log sigma_i better, "
                    f"cross-validated squared error {law['cv_mse_exponential']:.2g} vs {law['cv_mse_power']:.2g})")
        if t.get("term", "full") == "ff":     # the feed-forward term alone: no rate of Theorem 4.1 to judge
            curve = ", ".join(f"{int(c['m_h'])}: {c['test_median']:.2g}" for c in t["curve"])
            out.append(head + f"feed-forward term alone (each m_h fitted to its rank-m_h truncation): e_FF median by "
                              f"m_h {curve}; no rate is judged (the attention term is zero by construction)")
            continue
        head += (f"fitted exponent {_fmt_exp(e)}, {pred}" if e else "no exponent (fewer than 2 m_h in the fit range)")
        l1 = t["exponents"].get("test_l1")
        if l1:
            head += f"; L1 error of Theorem 4.1: exponent {_fmt_exp(l1)}"
        tr = t.get("checks", {}).get("tracking") or {}
        if t.get("rate"):
            head += "; " + rate_short(t["rate"])
        elif tr:
            head += "; tracks " + (", ".join(tr["tracks"]) if tr["tracks"] else "no reference")
        if tr.get("floor"):
            head += f"; floor ~{tr['floor_value']:.2g} over m_h {tr['upper_m_h'][0]}..{tr['upper_m_h'][1]}"
        if t.get("terms"):
            head += "; " + t["terms"]["line"]
        notes = []
        st = t.get("statuses", {})
        n = sum(st.values())
        if st.get("budget"):
            cap = summary.get("cycle_stops")
            notes.append(f"{st['budget']} of {n} members "
                         + (f"still falling at the cap of {cap['cycles']} cycles" if cap else "still improving at the schedule's end"))
        notes.append(members_text(t))
        if st.get("diverged"):
            notes.append(f"{st['diverged']} diverged, excluded: " + ", ".join(f"m_h={d['m_h']} seed {d['seed']}" for d in t["diverged"]))
        if t.get("degenerate", {}).get("flag"):
            notes.append(t["degenerate"]["why"])
        ch = t.get("checks", {})
        if t.get("knee"):
            notes.append(knee_short(t["knee"]))
        elif "knee_drop" in ch:
            r = int(t["rank"])
            notes.append(f"knee e({r - 1})/e({r}) {ch['knee_drop']:.3g}x, median of {len(ch['knee_per_seed'])} seed(s) "
                         f"({'shown' if ch['knee_ok'] else 'NOT shown'} by the >= 10x rule)")
        out.append(head + ("; " + "; ".join(notes) if notes else ""))
    return out


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(sweep_main())
