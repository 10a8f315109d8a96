"""Subnormal softmax probabilities on this CPU: what an assist costs, and that the counted assists explain it
(issue 30, item 4: Swin's shifted-window blocks, -28% and -37% in benchmarks/results/accuracy.md).

    python benchmarks/subnormal.py [--out benchmarks/results/subnormal.md]     # ~1 min

What is measured, each through onnxruntime's profiler (``run_session``, its kernel times, medians over the
timed runs), on ``softmax(x + M) @ v`` with x of shape [16, 12, 49, 49] (uniform in [-1, 1], as validate's
inputs), M a constant above the diagonal, v [16, 12, 49, N]:

- per mask value (0, -95, -1e4, the float32 minimum) and head width N (16, 32, 64, 128): the Softmax's and
  the MatMul's kernel times and the assists :func:`onnxperf.cost.subnormal.underflows` counts; the extra
  time over the mask-0 twin divided by the count is the cost of one assist, which is one figure only if
  the count is right (linear in N for the MatMul; per vector for the Softmax);
- the same at one thread and at onnxruntime's default (one per core);
- ``session.set_denormal_as_zero`` (flush-to-zero on the intra-op pool): the mask -95, N 32, end-to-end
  latency with the option off and on (profiler off, the median of 30 runs).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort

import onnxperf
from onnxperf.hardware.probe import detect_cpu
from onnxperf.cost.subnormal import underflows
from onnxperf.products.calibration.suite import subnormal_case
from onnxperf.products.validate.inputs import make_inputs
from onnxperf.products.validate.runner import run_session

MASKS = (0.0, -95.0, -1e4, float(np.finfo(np.float32).min))
WIDTHS = (16, 32, 64, 128)
SHAPE = (16, 12, 49)


def _kernel(timings, op: str) -> float:
    return sum(t.typical_s_per_run for t in timings if t.op_type == op)


def measure(workdir: Path, threads: int | None, runs: int = 15) -> list[dict]:
    rows = []
    for n in WIDTHS:
        clean = None
        for mask in MASKS:
            case = subnormal_case(mask, (*SHAPE, n))
            path = workdir / f"m{n}_{mask:g}.onnx"
            onnx.save(case.model, str(path))
            a = onnxperf.analyze(path)
            found = underflows(a).found
            own = sum(u.assists for u in found)
            reads = sum(u.reader_assists for u in found)
            rr = run_session(path, make_inputs(a, seed=0), runs=runs, warmup=3, threads=threads, opt="all",
                             profile=True, keep_optimized=False)
            sm, mm = _kernel(rr.node_timings, "Softmax"), _kernel(rr.node_timings, "MatMul")
            if mask == 0.0:
                clean = (sm, mm)
            rows.append({"n": n, "mask": mask, "softmax_s": sm, "matmul_s": mm, "softmax_assists": own,
                         "matmul_assists": reads,
                         "softmax_per_assist_s": (sm - clean[0]) / own if own else None,
                         "matmul_per_assist_s": (mm - clean[1]) / reads if reads else None})
    return rows


def daz_contrast(workdir: Path, threads: int | None) -> tuple[float, float]:
    """(latency with flush-to-zero off, on) of the mask -95 model, N 32."""
    case = subnormal_case(-95.0, (*SHAPE, 32))
    path = workdir / "daz.onnx"
    onnx.save(case.model, str(path))
    feeds = make_inputs(onnxperf.analyze(path), seed=0)
    out = []
    for daz in ("0", "1"):
        so = ort.SessionOptions()
        if threads:
            so.intra_op_num_threads = threads
        so.add_session_config_entry("session.set_denormal_as_zero", daz)
        s = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
        for _ in range(3):
            s.run(None, feeds)
        ts = []
        for _ in range(30):
            t = time.perf_counter()
            s.run(None, feeds)
            ts.append(time.perf_counter() - t)
        out.append(statistics.median(ts))
    return out[0], out[1]


def _us(x):
    return "-" if x is None else f"{x * 1e6:,.1f} µs"


def _ns(x):
    return "-" if x is None else f"{x * 1e9:.1f} ns"


def report(results: dict) -> str:
    lines = ["# Subnormal softmax probabilities on this CPU", "",
             f"Machine: {results['cpu']}, onnxruntime {ort.__version__}. `python benchmarks/subnormal.py` "
             "(the module docstring says what is measured). x: [16, 12, 49, 49] uniform in [-1, 1]; the mask M "
             "above the diagonal of each 49 x 49 matrix; v: [16, 12, 49, N]. Assists: as "
             "`onnxperf.cost.subnormal` counts them (the Softmax's vectors, the MatMul's reads).", ""]
    for label, rows in results["runs"]:
        lines += [f"## {label}", "",
                  "| N | mask | Softmax | its assists | per assist | MatMul | its assists | per assist |",
                  "|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for r in rows:
            lines.append(f"| {r['n']} | {r['mask']:g} | {_us(r['softmax_s'])} | {r['softmax_assists']:,} | "
                         f"{_ns(r['softmax_per_assist_s'])} | {_us(r['matmul_s'])} | {r['matmul_assists']:,} | "
                         f"{_ns(r['matmul_per_assist_s'])} |")
        per = [r["matmul_per_assist_s"] for r in rows if r["matmul_per_assist_s"]]
        if per:
            lines += ["", f"MatMul per assist over N = {', '.join(str(n) for n in WIDTHS)}: "
                      f"{_ns(min(per))} to {_ns(max(per))} (one figure if the count, linear in N, is right)."]
        lines.append("")
    off, on = results["daz"]
    lines += ["## Flush-to-zero", "",
              f"The mask -95 model (N 32) at onnxruntime's default threads, end to end: {off * 1e3:.2f} ms with "
              f"`session.set_denormal_as_zero` off, {on * 1e3:.2f} ms with it on ({off / on:.1f}x).", ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, help="write the Markdown report here")
    args = ap.parse_args(argv)
    cpu = detect_cpu().model
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        results = {"cpu": cpu, "runs": [("One thread", measure(work, 1)),
                                        ("onnxruntime's default threads", measure(work, None))],
                   "daz": daz_contrast(work, None)}
    text = report(results)
    if args.out:
        args.out.write_text(text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
