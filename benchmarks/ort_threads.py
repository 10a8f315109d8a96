"""Does onnxruntime split the QLinear kernels and Gather where ``onnxperf.predict.ort_threads`` says it does?

    python benchmarks/ort_threads.py [--out benchmarks/results/ort_threads.md]
                                     [--json benchmarks/measured/ort_threads.json]

For each kernel whose threads the prediction takes from onnxruntime's own cost model (QLinearSigmoid,
QLinearMul and QLinearAdd of one span, a squeeze-excite QLinearMul [1, C, H, W] · [1, C, 1, 1], a
QLinearGlobalAveragePool channels-first and channels-last; a float Gather of one of 3 rows, one unit, and one on
axis 1 of [n / 256, 4, 256], n / 256 units of 1 KiB) at element counts on both sides of the 156,280 where Eigen's cost model splits a
loop of cost (1, 1, 1) per element, a model of 4 independent copies runs through ``run_session`` (validate's
child process, profiler on) at onnxruntime's default threads and at one thread, each in several sessions of which
the fastest is kept (5; on the 2-core VM a contended host makes a split kernel run as slowly as an unsplit one
for seconds at a time, benchmarks/results/slow_state_blocks.md: the fastest session is the kernel's own
choice). A kernel that splits runs faster at the default; one that does not takes about the same (the
default is 1-2 µs slower: the pool's threads are woken for the profiler's bookkeeping). The page lists, per
case, the predicted threads at the pool's P, the median profiled time per copy at P and at 1, and whether
the measured ratio (1 thread over P) agrees: at least 1.25 where the prediction splits, below it where it
does not. Where one thread takes under 15 µs a split cannot pay for the pool's dispatch and the ratio cannot
tell: such a case is listed, not judged. Run it alone: other work on the machine moves the times. About a
minute on the 2-core VM.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import onnxperf  # noqa: E402
from onnxperf.predict.ort_threads import gather_axes, kernel_threads  # noqa: E402
from onnxperf.products.validate.machine import pool_threads  # noqa: E402
from onnxperf.products.validate.inputs import make_inputs  # noqa: E402
from onnxperf.products.validate.runner import run_session  # noqa: E402

MS = "com.microsoft"
U8 = TensorProto.UINT8
COPIES = 4
C = 64
SIZES = (65_536, 131_072, 150_016, 163_840, 196_608, 1_048_576)
KINDS = ("QLinearSigmoid", "QLinearMul", "QLinearMul (SE scale)", "QLinearAdd", "QLinearGlobalAveragePool",
         "QLinearGlobalAveragePool (channels last)", "Gather (one of 3 rows)", "Gather (axis 1, rows of 1 KiB)")
#: a ratio (one thread over the pool's) at least this says the kernel split
SPLIT = 1.25
#: below this at one thread a split cannot pay for the pool's dispatch: the ratio cannot tell
DECIDABLE_S = 15e-6
SESSIONS = 5


def build(kind: str, n: int) -> onnx.ModelProto:
    """``COPIES`` copies of one kernel on [1, C, n / C] (the pool: [1, C, n / C, 1])."""
    op = kind.split()[0]
    shape = [1, C, n // C]
    nodes, ins, outs, inits = [], [], [], []
    for i in range(COPIES):
        s = f"_{i}"
        inits += [numpy_helper.from_array(np.array(0.02, np.float32), "sc" + s),
                  numpy_helper.from_array(np.array(128, np.uint8), "zp" + s)]
        q = ["sc" + s, "zp" + s]
        if op == "Gather":  # float data, a constant scalar index: n elements gathered
            one = "one of 3" in kind
            x = [3, n] if one else [n // 256, 4, 256]
            inits.append(numpy_helper.from_array(np.array(1, np.int64), "i" + s))
            nodes.append(helper.make_node("Gather", ["a" + s, "i" + s], ["y" + s], axis=0 if one else 1))
            ins.append(helper.make_tensor_value_info("a" + s, TensorProto.FLOAT, x))
            outs.append(helper.make_tensor_value_info("y" + s, TensorProto.FLOAT, [n] if one else [n // 256, 256]))
            continue
        if op in ("QLinearMul", "QLinearAdd"):
            b = [1, C, 1] if "SE" in kind else shape
            nodes.append(helper.make_node(op, ["a" + s, *q, "b" + s, *q, *q], ["y" + s], domain=MS))
            ins += [helper.make_tensor_value_info("a" + s, U8, shape), helper.make_tensor_value_info("b" + s, U8, b)]
            out = shape
        elif op == "QLinearGlobalAveragePool":
            last = "channels last" in kind
            x = [1, n // C, 1, C] if last else shape + [1]
            nodes.append(helper.make_node(op, ["a" + s, *q, *q], ["y" + s], domain=MS, channels_last=int(last)))
            ins.append(helper.make_tensor_value_info("a" + s, U8, x))
            out = [1, 1, 1, C] if last else [1, C, 1, 1]
        else:
            nodes.append(helper.make_node(op, ["a" + s, *q, *q], ["y" + s], domain=MS))
            ins.append(helper.make_tensor_value_info("a" + s, U8, shape))
            out = shape
        outs.append(helper.make_tensor_value_info("y" + s, U8, out))
    g = helper.make_graph(nodes, "threads", ins, outs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)])
    m.ir_version = 8
    return m


def per_copy_s(path: Path, threads: int | None) -> float:
    """The fastest of :data:`SESSIONS` sessions' median profiled time per copy."""
    a = onnxperf.analyze(path)
    best = []
    for _ in range(SESSIONS):
        rr = run_session(path, make_inputs(a, seed=0), runs=40, warmup=5, threads=threads, profile=True,
                         keep_optimized=False)
        best.append(sum(t.typical_s_per_run for t in rr.node_timings) / COPIES)
    return min(best)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "benchmarks/results/ort_threads.md"))
    ap.add_argument("--json", default=str(ROOT / "benchmarks/measured/ort_threads.json"))
    args = ap.parse_args(argv)
    pool = pool_threads(None)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for kind in KINDS:
            for n in SIZES:
                path = Path(tmp) / "m.onnx"
                onnx.save(build(kind, n), str(path))
                a = onnxperf.analyze(path)
                node = a.main_nodes[0]
                k = kernel_threads(node, pool, channels_last="channels last" in kind, axis=gather_axes(a).get(node.key))
                at_pool, at_one = per_copy_s(path, None), per_copy_s(path, 1)
                ratio = at_one / at_pool
                rows.append({"kernel": kind, "elements": n, "predicted_threads": k, "pool": pool,
                             "pool_s": at_pool, "one_thread_s": at_one, "ratio": ratio,
                             "agrees": (ratio >= SPLIT) == (k is not None and k > 1)
                             if at_one >= DECIDABLE_S else None})
                print(f"{kind:26s} {n:>9,} k={k} {at_pool * 1e6:7.1f} µs {at_one * 1e6:7.1f} µs {ratio:5.2f}",
                      flush=True)
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    judged = [r for r in rows if r["agrees"] is not None]
    agree = sum(r["agrees"] for r in judged)
    lines = [
        "# Threads onnxruntime's QLinear kernels and Gather choose (onnxperf.predict.ort_threads)", "",
        f"Measured {when} on this machine (pool of {pool} threads, onnxruntime's default), onnxruntime "
        f"{__import__('onnxruntime').__version__}: {COPIES} copies per model, median profiled time per copy over 40 "
        f"runs, the fastest of {SESSIONS} sessions, at the default threads and at one. Re-run: "
        "`python benchmarks/ort_threads.py` (alone on the machine).",
        "", f"**{agree} of {len(judged)} judged cases agree** with the prediction (split: 1-thread time at least "
        f"{SPLIT}x the pool's); {len(rows) - len(judged)} take under {DECIDABLE_S * 1e6:.0f} µs on one thread, where "
        "a split cannot pay for the pool's dispatch and the ratio cannot tell (listed, not judged).", "",
        "| kernel | elements | predicted threads | at the pool | at one thread | one / pool | agrees |",
        "|---|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        lines.append(f"| {r['kernel']} | {r['elements']:,} | {r['predicted_threads']} | {r['pool_s'] * 1e6:.1f} µs | "
                     f"{r['one_thread_s'] * 1e6:.1f} µs | {r['ratio']:.2f} | "
                     f"{'-' if r['agrees'] is None else 'yes' if r['agrees'] else 'no'} |")
    Path(args.out).write_text("\n".join(lines) + "\n")
    Path(args.json).write_text(json.dumps({"measured": when, "rows": rows}, indent=1) + "\n")
    print(f"{agree} of {len(judged)} judged cases agree; wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
