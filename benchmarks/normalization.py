"""Which state normalization makes validate's verdict repeat? (issue 30, items 2 and 5)

validate scales the calibrated spec to each block's probes (onnxperf.products.validate.state.scaled_spec): main
memory's bandwidth by the triad's ratio to the calibration's reference, peaks, cache levels and the core's
times by the matrix product's, overheads by the dispatch probe's. Whether each of the three follows the model's
own time is a question of data: this script keeps every block of a validation (its measured median, its probes,
the prediction validate made for it), then re-evaluates each block's prediction with the spec scaled by only
some of the three ratios, or by their square roots, and asks of each variant what the issue asks:

* do two runs of the same model at least 50 minutes apart give errors within 5 points (``repeat``)?
* how far is the error from 0 (median |error| over models and runs)?
* how much do a run's blocks disagree (the standard deviation of a run's block errors: a ratio that follows
  the machine takes the machine's moves out of them)?

    python benchmarks/normalization.py run --label t0 [--models A,B,...] [--spec FILE.toml]
    # ... again every 20 minutes or so, the same code and spec ...
    python benchmarks/normalization.py analyze benchmarks/measured/normalization_*.json \
        [--out benchmarks/results/normalization.md] [--validate-only]

``run`` validates each model once (validate's default: 5 blocks of 20 timed runs between probes, random
weights, at the dims benchmarks/accuracy.py gives it) and writes its blocks; ``analyze`` needs no onnxruntime
run (about a minute: one roofline per block and variant) and checks that its "validate" variant gives every
block the prediction validate gave it.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import onnxperf  # noqa: E402
from onnxperf.hardware import load_spec  # noqa: E402
from onnxperf.predict.roofline import roofline  # noqa: E402
from onnxperf.products.validate.runner import Probe  # noqa: E402
from onnxperf.products.validate.state import (CONTROLS, PROBE_LABELS, UNSTABLE, probe_moves,  # noqa: E402
                                              reference_of, scaled_spec, shrunk, typical_state)

_spec = importlib.util.spec_from_file_location("onnxperf_bench_accuracy", ROOT / "benchmarks" / "accuracy.py")
accuracy = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(accuracy)

#: the repeat benchmark's six models and four more of the accuracy page's families (ResNet-50, ConvNeXt, ViT,
#: GPT-2 as onnxruntime fused it)
DEFAULT_MODELS = ("mobilenetv2_torch", "resnet18_torch", "efficientnet_b0_torch", "bert_torch_legacy",
                  "swin_t_torch", "lstm_classifier_legacy", "resnet50_torch", "convnext_tiny_torch",
                  "vit_b_16_torch", "gpt2_ort_fused")
DEFAULT_SPEC = ROOT / "benchmarks" / "measured" / "calibrated-zen3-20261207-gru.toml"
#: each variant: the powers the (triad, matrix product, dispatch) ratios are raised to (1: the ratio itself; 0: not
#: scaled), and the state each block is scaled to: its own probes (False), the run's median state (each probe's
#: median over the kept blocks: True), or that with the block's move from it halved ("mixed": validate's since
#: state.ELASTICITY)
VALIDATE = "run's median state, each block's move from it halved"
VARIANTS = {"the ratios themselves": ((1, 1, 1), False), "each ratio's square root": ((0.5, 0.5, 0.5), False),
            "none (raw)": ((0, 0, 0), False),
            "no dispatch": ((1, 1, 0), False), "half dispatch": ((1, 1, 0.5), False), "no triad": ((0, 1, 1), False),
            "arithmetic only": ((0, 1, 0), False), "no arithmetic": ((1, 0, 1), False),
            "dispatch only": ((0, 0, 1), False), "half arithmetic": ((1, 0.5, 1), False),
            "run's median state (all three)": ((1, 1, 1), True),
            "run's median state, no dispatch": ((1, 1, 0), True),
            "run's median state, arithmetic only": ((0, 1, 0), True),
            VALIDATE: ((1, 1, 1), "mixed")}
#: runs at least this far apart (minutes) make a pair for the repeat figure (the issue's "an hour apart")
PAIR_MINUTES = 50
TOLERANCE = 0.05


def run(args) -> int:
    spec = load_spec(str(args.spec))
    names = args.models or ",".join(DEFAULT_MODELS)
    out = {"label": args.label, "started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
           "normalization": "mixed",
           "spec_file": str(Path(args.spec).resolve().relative_to(ROOT)), "spec": spec.id, "models": []}
    for m in accuracy.select(accuracy.suite(), names):
        v = accuracy.validate_model(m, spec, runs=args.runs, threads=None)
        st = v.state
        out["models"].append({"model": m.name, "at": time.strftime("%H:%M:%S", time.gmtime()),
                              "raw_error": None if st is None else st.raw_error,
                              "normalized_error": None if st is None else st.normalized_error,
                              "windows": [] if st is None else [w.to_dict() for w in st.windows]})
        print(f"{m.name}: raw {_pct(out['models'][-1]['raw_error'])}, "
              f"normalized {_pct(out['models'][-1]['normalized_error'])}", flush=True)
    path = Path(args.out or ROOT / "benchmarks" / "measured" / f"normalization_{args.label}.json")
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {path}")
    return 0


def _pct(x) -> str:
    return "-" if x is None else f"{x:+.1%}"


def _probe(d: dict) -> Probe:
    return Probe(d["triad_bytes_per_s"], d["matmul_flops_per_s"], d["dispatch_s_per_node"],
                 d.get("handoff_flops_per_s"))


def variant_spec(spec, state: Probe, reference: Probe, powers: tuple[float, float, float]):
    """``spec`` scaled as validate scales it to a state (``scaled_spec``), each probe's ratio to the reference
    raised to its power first."""
    bw, mm, disp = powers
    st = Probe(reference.triad_bytes_per_s * (state.triad_bytes_per_s / reference.triad_bytes_per_s) ** bw,
               reference.matmul_flops_per_s * (state.matmul_flops_per_s / reference.matmul_flops_per_s) ** mm,
               reference.dispatch_s_per_node * (state.dispatch_s_per_node / reference.dispatch_s_per_node) ** disp,
               state.handoff_flops_per_s)
    return scaled_spec(spec, st, reference)


def _minutes(started: str) -> float:
    day, clock = started.split()[:2]
    h, m, s = map(int, clock.split(":"))
    return int(day.replace("-", "")) * 24 * 60 + h * 60 + m + s / 60


def analyze(args) -> int:
    runs = [json.loads(Path(p).read_text()) for p in args.runs_json]
    if len({r["spec_file"] for r in runs}) != 1:
        raise SystemExit("normalization.py: the runs used different specs")
    spec = load_spec(str(ROOT / runs[0]["spec_file"]))
    ref = reference_of(spec)
    if ref is None:
        raise SystemExit("normalization.py: the spec has no calibrated reference state")
    suite = {m.name: m for m in accuracy.suite()}
    analyses: dict[str, object] = {}
    err: dict[tuple[str, str, str], float] = {}  # (variant, run, model) -> median block error
    moves: dict[tuple[str, str], dict[str, float]] = {}  # (run, model) -> each probe's move over the kept blocks
    variants = {VALIDATE: VARIANTS[VALIDATE]} if args.validate_only else VARIANTS
    spread: dict[str, list[float]] = {v: [] for v in variants}
    for r in runs:
        for row in r["models"]:
            name = row["model"]
            kept = [w for w in row["windows"] if w["dropped"] is None]
            if not kept:
                continue
            if name not in analyses:
                m = suite[name]
                analyses[name] = onnxperf.analyze(m.path, dims=dict(m.dims), input_shapes=dict(m.input_shapes or {}))
            typical = typical_state([_probe(w["state"]) for w in kept])  # as validate takes it
            moves[(r["label"], name)] = probe_moves([_probe(w["state"]) for w in kept])
            # how the run's validate scaled its blocks: the ratios themselves before the elasticity, their square
            # roots while it scaled every block so (21:36-22:58 on 2026-12-07), else as VALIDATE
            ran = VARIANTS[VALIDATE] if r.get("normalization") == "mixed" else ((r.get("elasticity", 1.0),) * 3, False)
            for v, (powers, per_run) in variants.items():
                errors = []
                for w in kept:
                    at = typical if per_run is True else _probe(w["state"])
                    if per_run == "mixed":  # the run's drift whole, each block's move from the run's median halved
                        at = shrunk(at, typical)
                    p = roofline(analyses[name], variant_spec(spec, at, ref, powers)).latency_s
                    if (powers, per_run) == ran and abs(p / w["predicted_s"] - 1) > 1e-9:
                        raise SystemExit(f"normalization.py: {name} in {r['label']}: validate predicted "
                                         f"{w['predicted_s']}, this code {p}: not the code that ran")
                    errors.append(p / w["measured_s"] - 1)
                err[(v, r["label"], name)] = statistics.median(errors)
                if len(errors) > 1:
                    spread[v].append(statistics.pstdev(errors))
    labels = [r["label"] for r in runs]
    start = {r["label"]: _minutes(r["started"]) for r in runs}
    names = sorted({n for (_, _, n) in err})
    rows = []
    for v in variants:
        near, far = [], []
        for a, b in itertools.combinations(labels, 2):
            for n in names:
                x, y = err.get((v, a, n)), err.get((v, b, n))
                if x is None or y is None:
                    continue
                (far if abs(start[b] - start[a]) >= PAIR_MINUTES else near).append(abs(y - x))
        errs = [abs(e) for (vv, _, _), e in err.items() if vv == v]
        rows.append((v, far, near + far, errs, spread[v]))
    when = ", ".join(f"{r['label']} at {r['started'][11:16]}" for r in runs)
    lines = ["# Which state normalization makes the verdict repeat", "",
             f"`python benchmarks/normalization.py analyze` over {len(runs)} runs of `normalization.py run` "
             f"({when}), spec `{runs[0]['spec_file']}` "
             f"({runs[0]['spec']}); {len(names)} models, each validated once per run (5 blocks of 20 timed runs "
             "between probes). Each block's prediction re-evaluated with the spec scaled by the probes' ratios to the "
             "calibration's reference raised to a power (1: the ratio itself; 0: not scaled): triad (main "
             "memory), matrix product (peaks, cache levels, the core's times), dispatch (overheads). Repeat: two runs "
             f"of a model at least {PAIR_MINUTES} minutes apart within {TOLERANCE * 100:.0f} points; spread: the "
             "standard deviation of a run's block errors (median over models and runs).", "",
             "| variant | powers (triad, arithmetic, dispatch) | repeat, ≥ 50 min apart | repeat, every pair | "
             "median pair difference | median \\|error\\| | median spread of the blocks |",
             "|---|---|---:|---:|---:|---:|---:|"]
    def within(ds: list[float]) -> str:
        return f"{sum(d <= TOLERANCE for d in ds)} of {len(ds)}" if ds else "-"

    def med(xs: list[float], unit: str = "") -> str:
        return f"{statistics.median(xs) * 100:.1f}{unit}" if xs else "-"

    for v, far, every, errs, sp in rows:
        lines.append(f"| {v} | {', '.join(f'{x:g}' for x in VARIANTS[v][0])} | {within(far)} | {within(every)} | "
                     f"{med(every)} | {med(errs, '%')} | {med(sp)} |")
    lines += ["", "Per model, each run's error (median of its blocks), as validate scales the spec and raw:", "",
              "| model | " + " | ".join(labels) + " |", "|---|" + "---:|" * len(labels)]
    for n in names:
        cells = []
        for lab in labels:
            a_, b_ = err.get((VALIDATE, lab, n)), err.get(("none (raw)", lab, n))
            cells.append("-" if a_ is None else f"{a_ * 100:+.1f}" + ("" if b_ is None else f" ({b_ * 100:+.1f})"))
        lines.append(f"| {n} | " + " | ".join(cells) + " |")
    lines += unstable_section(err, moves, labels, names)
    text = "\n".join(lines) + "\n"
    if args.out:
        Path(args.out).write_text(text)
    sys.stdout.write(text)
    return 0


#: the controls whose move marks a run "machine unstable", as sets of probes, and the thresholds tried
FLAGS = {"dispatch": ("dispatch_s_per_node",), "bandwidth": ("triad_bytes_per_s",),
         "arithmetic": ("matmul_flops_per_s",), "bandwidth or arithmetic (validate)": CONTROLS,
         "any of the three (validate before)": tuple(PROBE_LABELS)}
THRESHOLDS = (0.10, UNSTABLE)


def stray(err: dict, labels: list[str], names: list[str]) -> dict[tuple[str, str], float]:
    """How far each run's error (as validate normalizes) is from the median of the same model's other runs."""
    out = {}
    for n in names:
        own = {lab: err[(VALIDATE, lab, n)] for lab in labels if (VALIDATE, lab, n) in err}
        for lab, e in own.items():
            others = [x for k, x in own.items() if k != lab]
            if others:
                out[(lab, n)] = abs(e - statistics.median(others))
    return out


def auc(flagged_by: list[float], strayed: list[bool]) -> float | None:
    """The chance that a strayed run's figure is above a kept run's (ties count half): 0.5 tells nothing."""
    a = [x for x, b in zip(flagged_by, strayed) if b]
    b = [x for x, s_ in zip(flagged_by, strayed) if not s_]
    if not a or not b:
        return None
    return sum((x > y) + 0.5 * (x == y) for x in a for y in b) / (len(a) * len(b))


def unstable_section(err: dict, moves: dict, labels: list[str], names: list[str]) -> list[str]:
    """Which probe's move between a run's blocks tells a run whose verdict strays from the model's others."""
    dev = stray(err, labels, names)
    keys = sorted(k for k in dev if k in moves)
    if not keys:
        return []
    strayed = [dev[k] > TOLERANCE for k in keys]
    lines = ["", "## Which probe's move tells a run that will not repeat", "",
             f"A run strays when its error (as validate normalizes) is more than {TOLERANCE * 100:.0f} points from the "
             "median of the same model's other runs: "
             f"{sum(strayed)} of {len(keys)} runs here. A probe's move: its max / min - 1 over the run's kept blocks; "
             "a run is flagged when one of the probes named moves more than the threshold. AUC: the chance that a "
             "strayed run moved the probes more than a run that did not stray (0.5: the move tells nothing).", "",
             "| controls | median move | AUC | " + " | ".join(f"flagged over {t:.0%} (of them strayed) | others "
                                                          "(of them strayed)" for t in THRESHOLDS) + " |",
             "|---|---:|---:|" + "---:|---:|" * len(THRESHOLDS)]
    for label, fields in FLAGS.items():
        by = [max(moves[k][f] for f in fields) for k in keys]
        a = auc(by, strayed)
        cells = []
        for t in THRESHOLDS:
            fl = [x > t for x in by]
            cells.append(f"{sum(fl)} ({sum(f and s_ for f, s_ in zip(fl, strayed))})")
            cells.append(f"{len(fl) - sum(fl)} ({sum(not f and s_ for f, s_ in zip(fl, strayed))})")
        lines.append(f"| {label} | {statistics.median(by) * 100:.0f}% | {'-' if a is None else f'{a:.2f}'} | "
                     + " | ".join(cells) + " |")
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--label", required=True)
    r.add_argument("--models", default=None)
    r.add_argument("--spec", type=Path, default=DEFAULT_SPEC)
    r.add_argument("--runs", type=int, default=20)
    r.add_argument("--out", default=None)
    a = sub.add_parser("analyze")
    a.add_argument("runs_json", nargs="+")
    a.add_argument("--out", default=None)
    a.add_argument("--validate-only", action="store_true",
                   help="only validate's own normalization (a fourteenth of the time): its rows and the unstable table")
    args = ap.parse_args(argv)
    return run(args) if args.cmd == "run" else analyze(args)


if __name__ == "__main__":
    raise SystemExit(main())
