"""What an LSTM step costs in onnxruntime, and what it scales with (issue 30, item 4: the LSTM's error).

    python benchmarks/lstm_steps.py [--out benchmarks/results/lstm_steps.md]

onnxruntime's CPU LSTM (``UniDirectionalLstm::Compute``) runs the input projection of every step as one GEMM,
then, step by step, one GEMM of the hidden state [batch, H] by the recurrent weights R [H, 4H] through the
thread pool, and the gates. So each step streams R (16·H² bytes per direction) from the cache level that
holds it, where the node's bytes count R once. One bidirectional LSTM node (batch 1) runs here at several
sequence lengths and hidden sizes, profiled, at onnxruntime's default threads and at one: the page gives the
kernel time per step (2·seq steps, the input projection included), R's bytes per step over it (a lower bound
on the rate at which the steps stream R), and the speed-up of the pool. Run it alone; under a minute.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = Path(__file__).resolve().parent.parent
CASES = ((64, 128, 256), (128, 128, 256), (256, 128, 256), (128, 128, 64), (128, 128, 128), (128, 512, 256),
         (128, 128, 512))
RUNS, WARMUP = 30, 5


def lstm(seq: int, inp: int, hidden: int) -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array((rng.random((2, 4 * hidden, inp)) * 0.1).astype(np.float32), "W"),
             numpy_helper.from_array((rng.random((2, 4 * hidden, hidden)) * 0.1).astype(np.float32), "R"),
             numpy_helper.from_array(np.zeros((2, 8 * hidden), np.float32), "B")]
    node = helper.make_node("LSTM", ["x", "W", "R", "B"], ["y"], hidden_size=hidden, direction="bidirectional",
                            name="lstm")
    g = helper.make_graph([node], "lstm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [seq, 1, inp])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])
    m.ir_version = 8
    return m


def kernel_us(m: onnx.ModelProto, threads: int | None) -> float:
    """Median profiled kernel time of the model's one node."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.enable_profiling = True
    so.log_severity_level = 3
    so.profile_file_prefix = tempfile.mktemp(dir=tempfile.gettempdir())
    if threads:
        so.intra_op_num_threads = threads
    s = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    shape = [d.dim_value for d in m.graph.input[0].type.tensor_type.shape.dim]
    x = np.random.default_rng(1).random(shape, np.float32)
    for _ in range(WARMUP + RUNS):
        s.run(None, {"x": x})
    p = s.end_profiling()
    times = [e["dur"] for e in json.load(open(p, encoding="utf-8"))
             if e.get("cat") == "Node" and e["name"].endswith("_kernel_time")][WARMUP:]
    os.remove(p)
    return float(np.median(times))


def main(argv: list[str] | None = None) -> int:
    import onnxruntime as ort

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "lstm_steps.md")
    args = ap.parse_args(argv)
    lines = [f"# An LSTM step in onnxruntime ({datetime.date.today().isoformat()})", "",
             f"`python benchmarks/lstm_steps.py`, onnxruntime {ort.__version__}, one bidirectional LSTM, batch 1, "
             "the profiler's kernel time (median of 30 runs). Steps: 2·seq; R per step: 16·H² bytes (one "
             "direction's recurrent weights, float32); R / step time: over the whole step, the input projection "
             "included (a lower bound on the rate the steps stream R at).", "",
             "| seq | input | H | R per step | default threads: µs | per step | R / step time | one thread: µs | "
             "per step | pool speed-up |", "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for seq, inp, hidden in CASES:
        m = lstm(seq, inp, hidden)
        t_pool, t_one = kernel_us(m, None), kernel_us(m, 1)
        steps, r_bytes = 2 * seq, 16 * hidden * hidden
        lines.append(f"| {seq} | {inp} | {hidden} | {r_bytes / 1024:.0f} KiB | {t_pool:.0f} | {t_pool / steps:.2f} | "
                     f"{r_bytes / (t_pool / steps) / 1e3:.1f} GB/s | {t_one:.0f} | {t_one / steps:.2f} | "
                     f"{t_one / t_pool:.2f} |")
    lines.append("")
    args.out.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
