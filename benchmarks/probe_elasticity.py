"""How much does a model's speed move when a state probe moves? (issue 30, item 2)

validate scales the spec to each block's probes (onnxperf.products.validate.state.scaled_spec) and a calibration
brings each suite time to its reference state by the inverse (``time_at``). Both assume that a kernel's speed
moves as the probe that stands for it: a conv's with the matrix product's rate, a main-memory stream's with the
triad's, a tiny node's with the dispatch probe's. This script measures it. It runs one calibration-suite case
over and over, each run between two probes of the machine (``run_session(probe_state=True)``, as a calibration
does), for ``--seconds`` each, and regresses the case's speed (1 / its kernel time; end to end for the dispatch
case) on each probe, in logs: the slope is the elasticity (1: the case moves as the probe). A probe reads the
state with an error of its own, so the slope of a noisy probe is below the case's true one; what matters for
the normalization is which power of the probe's ratio best takes the state out of the case's times: the standard
deviation of log(case speed) − e·log(probe) for e = 0 (raw), 1 (validate's), 1/2 and the fitted slope, over
single runs and over medians of 6 consecutive runs (a validate run's 6 probes).

    python benchmarks/probe_elasticity.py [--seconds 150] [--cases conv3x3_64,gemm_1024,mul_4m,dispatch_64]
        [--out benchmarks/results/probe_elasticity.md]

About 2.5 minutes per case; run alone (another process's load is what it measures).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from onnxperf.api import analyze  # noqa: E402
from onnxperf.products.calibration.suite import suite, tiny_case  # noqa: E402
from onnxperf.products.validate.inputs import make_inputs  # noqa: E402
from onnxperf.products.validate.runner import run_session  # noqa: E402

#: each case, and the probe its time is scaled by (validate's scaled_spec: a conv or matrix product by the matrix
#: product's rate, a main-memory stream by the triad, the runtime's per-node work by the dispatch probe)
CASES = {"conv3x3_64": "matmul", "gemm_1024": "matmul", "mul_4m": "triad", "dispatch_64": "dispatch"}
PROBES = {"matmul": 1, "triad": 2, "dispatch": 3}
CHUNKS = (1, 6)


def measure(name: str, seconds: float) -> np.ndarray:
    """Rows of (case time s, matrix product FLOP/s, triad B/s, 1 / dispatch s per node) for ``seconds``."""
    case = tiny_case(64) if name == "dispatch_64" else next(c for c in suite() if c.name == name)
    profiled = name != "dispatch_64"  # the dispatch case end to end, profiler off (as the calibration times it)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / f"{name}.onnx"
        onnx.save(case.model, str(path))
        feeds = make_inputs(analyze(path), seed=0)
        rows = []
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            rr = run_session(path, feeds, runs=20 if profiled else 200, warmup=5 if profiled else 20, profile=profiled,
                             keep_optimized=False, probe_state=True)
            t = sum(k.typical_s_per_run for k in rr.node_timings) if profiled else float(np.median(rr.latencies_s))
            s = rr.state
            rows.append((t, s.matmul_flops_per_s, s.triad_bytes_per_s, 1 / s.dispatch_s_per_node))
    return np.array(rows)


def figures(rows: np.ndarray, probe: int, chunk: int) -> dict[str, float]:
    """Slope and residual spreads of log(case speed) on log(probe) over medians of ``chunk`` consecutive runs."""
    n = len(rows) // chunk
    t = np.array([np.median(rows[i * chunk:(i + 1) * chunk, 0]) for i in range(n)])
    p = np.array([np.median(rows[i * chunk:(i + 1) * chunk, probe]) for i in range(n)])
    x, y = np.log(p), np.log(1 / t)
    slope = float(np.polyfit(x, y, 1)[0])
    x, y = x - x.mean(), y - y.mean()
    return {"n": n, "slope": slope, "raw": float(np.std(y)), "full": float(np.std(y - x)),
            "half": float(np.std(y - 0.5 * x)), "fitted": float(np.std(y - slope * x))}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=150)
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--json", type=Path, default=None, help="also write the measured rows")
    args = ap.parse_args(argv)
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    measured = {}
    for name in args.cases.split(","):
        measured[name] = measure(name, args.seconds)
        print(f"{name}: {len(measured[name])} runs", file=sys.stderr, flush=True)
    lines = ["# How much a kernel's speed moves with the probe that stands for it", "",
             f"`python benchmarks/probe_elasticity.py --seconds {args.seconds:g}` ({started}): each calibration-suite "
             "case run over and over, each run between two probes of the machine (as a calibration runs it). "
             "Slope: of log(case speed) on log(probe), over single runs and over medians of 6 consecutive runs (a "
             "validate run's probes); spread: the standard deviation of log(case speed) − e·log(probe), raw "
             "(e = 0), the ratio itself (e = 1), its square root (e = 1/2) and the slope's. The smallest spread "
             "marks the power that takes the most of the machine's state out of the case's times.", "",
             "| case | median time | probe | runs per point | points | slope | spread raw | e = 1 | e = 1/2 | "
             "e = slope |", "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, rows in measured.items():
        probe = CASES[name]
        for chunk in CHUNKS:
            f = figures(rows, PROBES[probe], chunk)
            lines.append(f"| {name} | {np.median(rows[:, 0]) * 1e6:,.0f} µs | {probe} | {chunk} | {f['n']} | "
                         f"{f['slope']:.2f} | {f['raw']:.3f} | {f['full']:.3f} | {f['half']:.3f} | {f['fitted']:.3f} |")
    text = "\n".join(lines) + "\n"
    if args.out:
        args.out.write_text(text)
    if args.json:
        args.json.write_text(json.dumps({k: v.tolist() for k, v in measured.items()}) + "\n")
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
