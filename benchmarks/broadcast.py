"""Broadcast spans on this CPU: what a span of onnxruntime's elementwise loop costs, and that the spans
:func:`onnxperf.predict.broadcast.node_spans` counts explain the time (issue 30, item 4: the Keras exports'
NHWC normalization and squeeze-excite scales).

    python benchmarks/broadcast.py [--out benchmarks/results/broadcast.md]     # ~30 s

Each case is one Add (then one Mul) of two float32 inputs, run through ``run_session`` with the profiler on
(its kernel time, the median over 30 runs) at one thread and at onnxruntime's default; beside each
broadcast case, the same output without broadcasting (both inputs full). The extra time of the broadcast
case over its traffic at the unbroadcast case's rate (t_S - t_1·Q_S/Q_1), divided by the spans, is the cost
of one span: one figure if the count is right.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

import onnxperf
from onnxperf.hardware.probe import detect_cpu
from onnxperf.predict.broadcast import node_spans
from onnxperf.products.validate.inputs import make_inputs
from onnxperf.products.validate.runner import run_session

#: (input A, input B): the NHWC input normalization, squeeze-excite scales in NHWC and NCHW, a bias per row
CASES = [((1, 224, 224, 3), (3,)), ((1, 112, 112, 32), (1, 1, 1, 32)), ((1, 14, 14, 672), (1, 1, 1, 672)),
         ((1, 672, 14, 14), (1, 672, 1, 1)), ((1, 1152, 7, 7), (1, 1152, 1, 1)), ((65536, 16), (1, 16)),
         ((4096, 64), (1, 64))]


def _model(op, a, b):
    g = helper.make_graph([helper.make_node(op, ["a", "b"], ["y"])], "g",
                          [helper.make_tensor_value_info("a", TensorProto.FLOAT, list(a)),
                           helper.make_tensor_value_info("b", TensorProto.FLOAT, list(b))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(a))])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def _time(path: Path, threads):
    a = onnxperf.analyze(path)
    (n,) = a.main_nodes
    rr = run_session(path, make_inputs(a, seed=0), runs=30, warmup=5, threads=threads, profile=True,
                     keep_optimized=False)
    return sum(t.typical_s_per_run for t in rr.node_timings), n.bytes_read + n.bytes_written, node_spans(n)


def measure(work: Path, threads) -> list[dict]:
    rows = []
    for op in ("Add", "Mul"):
        for a, b in CASES:
            pa, p1 = work / "a.onnx", work / "one.onnx"
            onnx.save(_model(op, a, b), str(pa))
            onnx.save(_model(op, a, a), str(p1))
            t_s, q_s, s = _time(pa, threads)
            t_1, q_1, _ = _time(p1, threads)
            rows.append({"op": op, "a": a, "b": b, "spans": s, "t_s": t_s, "t_1": t_1,
                         "per_span_s": (t_s - t_1 * q_s / q_1) / s if s > 1 else None})
    return rows


def report(cpu: str, runs: list) -> str:
    lines = ["# Broadcast spans on this CPU", "",
             f"Machine: {cpu}, onnxruntime {ort.__version__}. `python benchmarks/broadcast.py` (the module docstring "
             "says what is measured). Spans: as `onnxperf.predict.broadcast.node_spans` counts them.", ""]
    for label, rows in runs:
        lines += [f"## {label}", "", "| op | A | B | spans | broadcast | unbroadcast | per span |",
                  "|---|---|---|---:|---:|---:|---:|"]
        for r in rows:
            per = "-" if r["per_span_s"] is None else f"{r['per_span_s'] * 1e9:.1f} ns"
            lines.append(f"| {r['op']} | {list(r['a'])} | {list(r['b'])} | {r['spans']:,} | {r['t_s'] * 1e6:,.0f} µs | "
                         f"{r['t_1'] * 1e6:,.0f} µs | {per} |")
        lines.append("")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    cpu = detect_cpu().model
    with tempfile.TemporaryDirectory() as tmp:
        runs = [("One thread", measure(Path(tmp), 1)), ("onnxruntime's default threads", measure(Path(tmp), None))]
    text = report(cpu, runs)
    if args.out:
        args.out.write_text(text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
