"""What an LSTM step costs in onnxruntime, and what it scales with (issue 30, item 4: the LSTM's error).

    python benchmarks/lstm_steps.py [--out benchmarks/results/lstm_steps.md]
    python benchmarks/lstm_steps.py --spec SPEC.toml [--out benchmarks/results/lstm_predicted.md]

onnxruntime's CPU LSTM (``UniDirectionalLstm::Compute``) runs the input projection of every step as one GEMM,
then, step by step, one GEMM of the hidden state [batch, H] by the recurrent weights R [H, 4H] through the
thread pool, and the gates. So each step streams R (16·H² bytes per direction) from the cache level that
holds it, where the node's bytes count R once. One bidirectional LSTM node (batch 1) runs here at several
sequence lengths and hidden sizes, profiled, at onnxruntime's default threads and at one: the page gives the
kernel time per step (2·seq steps, the input projection included), R's bytes per step over it (a lower bound
on the rate at which the steps stream R), and the speed-up of the pool. Run it alone; under a minute.

With ``--spec`` (a spec ``hw calibrate`` wrote on this machine), a grid of LSTMs and GRUs (N 1-64, H 64-512;
seq 48, so no point is one of the calibration's step cases, which run seq 32) is timed at default
threads and set beside two predictions of the kernel time from that spec: step by step
(:mod:`onnxperf.predict.recurrence`, the spec as written) and as the ``rnn`` family's arithmetic (the same spec
without the step constants, the prediction before them). The page counts the points within 1.25x of the
measurement and the worst ratio of each. About three minutes.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import math
import os
import statistics
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from onnxperf.api import analyze
from onnxperf.hardware import load_spec
from onnxperf.predict.recurrence import KEYS
from onnxperf.products.calibration.suite import GRU_CELL_SHAPE, STEP_SHAPES
from onnxperf.products.validate.runner import Probe, measure_state
from onnxperf.products.validate.state import reference_of, scaled_spec

ROOT = Path(__file__).resolve().parent.parent
CASES = ((64, 128, 256), (128, 128, 256), (256, 128, 256), (128, 128, 64), (128, 128, 128), (128, 512, 256),
         (128, 128, 512))
RUNS, WARMUP = 30, 5
#: the grid of --spec: each op at (H, N), seq 48, input 128 (a GRU takes the LSTMs' β and s, its c from one GRU)
OPS, GRID_H, GRID_N, GRID_SEQ, GRID_INPUT = ("LSTM", "GRU"), (64, 128, 256, 512), (1, 2, 4, 8, 16, 64), 48, 128
#: a prediction within this ratio of the measurement counts as a hit
WITHIN = 1.25


def lstm(seq: int, inp: int, hidden: int, batch: int = 1, op: str = "LSTM") -> onnx.ModelProto:
    """One bidirectional ``op`` (LSTM, or GRU) over [seq, batch, inp], random weights."""
    g = 4 if op == "LSTM" else 3
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array((rng.random((2, g * hidden, inp)) * 0.1).astype(np.float32), "W"),
             numpy_helper.from_array((rng.random((2, g * hidden, hidden)) * 0.1).astype(np.float32), "R"),
             numpy_helper.from_array(np.zeros((2, 2 * g * hidden), np.float32), "B")]
    node = helper.make_node(op, ["x", "W", "R", "B"], ["y"], hidden_size=hidden, direction="bidirectional",
                            name="lstm")
    g = helper.make_graph([node], "lstm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [seq, batch, inp])],
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


def predicted_kernel_s(m: onnx.ModelProto, spec) -> float:
    """The plan's time of the model's one LSTM as the profiler shows a kernel: its row's time plus the profiled
    floor beyond the dispatch (``overhead_profiled_s`` − ``overhead_s``, as validate sets them side by side)."""
    eff = spec.efficiency
    (row,) = [r for r in analyze(m, hw=spec).roofline.nodes if r.op_type in ("LSTM", "GRU")]
    return row.time_s + max(0.0, eff.get("overhead_profiled_s", 0.0) - eff.get("overhead_s", 0.0))


def ratio_line(name: str, ratios: list[float]) -> str:
    hits = sum(1 for r in ratios if 1 / WITHIN <= r <= WITHIN)
    worst = max(ratios, key=lambda r: abs(math.log(r)))
    med = math.exp(statistics.median(abs(math.log(r)) for r in ratios)) - 1
    return (f"| {name} | {hits} of {len(ratios)} | {med:.1%} | {worst:.2f} | {min(ratios):.2f}-{max(ratios):.2f} |")


def predicted_page(spec_path: Path) -> list[str]:
    """The --spec page: the grid measured, and both predictions beside it, each from the spec as written (raw) and
    from the spec scaled to the machine's state around that hidden size's block of batches (normalized: the median
    of a state probe before and after it, as validate scales its windows)."""
    import onnxruntime as ort

    spec = load_spec(str(spec_path))
    if KEYS[0] not in spec.efficiency:
        raise SystemExit(f"{spec_path}: no {KEYS[0]} (calibrate with this version: onnxperf hw calibrate)")
    plain = dataclasses.replace(spec, efficiency={k: v for k, v in spec.efficiency.items() if k not in KEYS})
    ref = reference_of(spec)
    fitted = {("LSTM", h, n) for h, n in STEP_SHAPES} | {("GRU", *GRU_CELL_SHAPE)}
    kinds = ("step by step, normalized", "step by step, raw", "rnn arithmetic (before), normalized",
             "rnn arithmetic (before), raw")
    rows, ratios = [], {(op, k): [] for op in OPS for k in kinds}
    drifts = []
    with tempfile.TemporaryDirectory() as tmp:
        for op, hidden in ((op, h) for op in OPS for h in GRID_H):
            before = measure_state(Path(tmp))
            block = []
            for batch in GRID_N:
                m = lstm(GRID_SEQ, GRID_INPUT, hidden, batch, op)
                block.append((batch, m, kernel_us(m, None) * 1e-6))
            state = Probe.median(before, measure_state(Path(tmp)))
            scaled = (spec, plain) if ref is None else (scaled_spec(spec, state, ref), scaled_spec(plain, state, ref))
            if ref is not None:
                drifts.append(f"{op} H {hidden}: bandwidth {state.triad_bytes_per_s / ref.triad_bytes_per_s - 1:+.0%}, "
                              f"arithmetic {state.matmul_flops_per_s / ref.matmul_flops_per_s - 1:+.0%}, dispatch "
                              f"{state.dispatch_s_per_node / ref.dispatch_s_per_node - 1:+.0%}")
            for batch, m, t in block:
                p_new, p_old = predicted_kernel_s(m, scaled[0]), predicted_kernel_s(m, scaled[1])
                r_new, r_old = predicted_kernel_s(m, spec) / t, predicted_kernel_s(m, plain) / t
                for kind, v in zip(kinds, (p_new / t, r_new, p_old / t, r_old)):
                    ratios[op, kind].append(v)
                rows.append(f"| {op} | {hidden} | {batch} | {'yes' if (op, hidden, batch) in fitted else ''} | "
                            f"{t * 1e6:.0f} | {t / (2 * GRID_SEQ) * 1e6:.2f} | {p_new * 1e6:.0f} | {p_new / t:.2f} | "
                            f"{r_new:.2f} | {p_old * 1e6:.0f} | {p_old / t:.2f} | {r_old:.2f} |")
                print(rows[-1], flush=True)
    eff = spec.efficiency
    drift = "; ".join(drifts) if drifts else "no reference in the spec"
    return [f"# An LSTM's and a GRU's kernel time, predicted and measured ({datetime.date.today().isoformat()})", "",
            f"`python benchmarks/lstm_steps.py --spec {spec_path}`, onnxruntime {ort.__version__}, spec `{spec.id}` "
            f"(runtime.threads {eff.get('runtime.threads', 0):g}; β {eff[KEYS[0]] / 1e9:.1f} GB/s, "
            f"c {eff.get(KEYS[1], 0) * 1e9:.2f} ns, s {eff.get(KEYS[2], 0) * 1e6:.2f} µs, a GRU's c "
            f"{eff.get(KEYS[3], 0) * 1e9:.2f} ns). One bidirectional LSTM or "
            f"GRU, seq {GRID_SEQ}, input {GRID_INPUT}, the profiler's kernel time at default threads (median of "
            f"{RUNS} runs) against the plan's (the GRUs take the LSTMs' β and s, and their own c from one GRU): "
            "step by step "
            "(onnxperf.predict.recurrence) and as the rnn family's arithmetic (the same spec without the step "
            "constants). Normalized: the spec scaled to the machine's state around each hidden size's block (the "
            "median of a state probe before and after it), as validate scales its windows; raw: the spec as "
            "written. \"fitted\": the calibration times an LSTM or GRU of that H and N (at seq 32).", "",
            f"| prediction | within {WITHIN}x | median error | worst ratio | range |", "|---|---:|---:|---:|---:|",
            *(ratio_line(f"{op}: {k}", v) for (op, k), v in ratios.items()), "",
            f"State against the calibration's reference: {drift}.", "",
            "| op | H | N | fitted | measured µs | per step µs | step by step µs | ratio | raw ratio | "
            "rnn arithmetic µs | ratio | raw ratio |", "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
            *rows, ""]


def main(argv: list[str] | None = None) -> int:
    import onnxruntime as ort

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--spec", type=Path, default=None, help="a calibrated spec: the predicted page")
    args = ap.parse_args(argv)
    if args.spec is not None:
        lines = predicted_page(args.spec)
        out = args.out or ROOT / "benchmarks" / "results" / "lstm_predicted.md"
        out.write_text("\n".join(lines), encoding="utf-8")
        print("\n".join(lines[:17]))
        return 0
    args.out = args.out or ROOT / "benchmarks" / "results" / "lstm_steps.md"
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
