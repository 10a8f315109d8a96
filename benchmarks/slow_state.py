"""Which probe sees the slow state? (issue 30: "slowdowns no probe sees")

    python benchmarks/slow_state.py [--model corpus/swin_t_torch.onnx] [--processes 24]
                                    [--out benchmarks/results/slow_state.md]

On the 2-core VM a whole onnxruntime process sometimes runs a model 1.4-1.5x slower (Swin-T: 57-75 ms or
84-112 ms, one process in three to six) while validate's probes read the machine as usual, so the
state-normalized error moves with the raw one (benchmarks/results/repeat.md). This runs ``--processes``
fresh processes; each loads the model (random weights: ``onnxperf.products.validate.weights``) into a
session at 2 intra-op threads, times it (median of 15 runs after 5 warm-ups) and, in the same process and
moment, five probes:

* ``triad``: numpy a = b + 1.5·c over 3 x 85 MB (main memory's bandwidth, one thread);
* ``l3copy``: numpy copy of 8 MiB (a quarter of the L3), one thread;
* ``ort_mm_fresh``: validate's matrix-product probe as it runs today: 4 MatMuls of 256³ in a session made for
  the probe beside the model's (its own thread pool; ``onnxperf.products.validate.runner.probe_matmul_model``);
* ``ort_mm_shared``: the same MatMuls in a session that shares the model session's thread pool
  (onnxruntime's global pool, which every session of a process must then use: so a second process, started
  right after the first, with its own latency ``shared_latency_s``), so it runs on the model's own threads;
* ``blas_mm``: numpy's 256³ matrix product (OpenBLAS, its own persistent threads), after the others;
* timed just before the model's runs: ``fma_2threads``, a register-only multiply-add loop split in two
  halves over 2 numba threads (what a slowed or stolen vCPU would show), and ``blas_mm_before``, the same
  OpenBLAS product as ``blas_mm``.

The page gives every process's figures and, per probe, the Pearson correlation of log(model latency)
with log(probe rate) over the processes, and the median rate in the fast and the slow processes (slow:
latency above 1.25x the fastest process's). A probe that sees the state has a strong negative correlation
and a ratio near the model's.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import onnx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from onnxperf.products.validate.runner import probe_matmul_model  # noqa: E402
from onnxperf.products.validate.weights import with_random_weights  # noqa: E402

PROBES = ("fma_2threads", "blas_mm_before", "triad", "l3copy", "ort_mm_fresh", "ort_mm_shared", "blas_mm")

CHILD = r'''
import json, sys, time
import numpy as np, onnxruntime as ort
import numba
from numba import njit, prange
from onnxruntime.capi import _pybind_state as C
numba.set_num_threads(2)

@njit(parallel=True, cache=True)
def fma_loop(n):
    out = np.zeros(2)
    for t in prange(2):  # one half to each thread, no memory traffic
        x = 1.0 + t
        for i in range(n):
            x = x * 0.9999999 + 1e-7
        out[t] = x
    return out
model, mm_path, shared = sys.argv[1], sys.argv[2], sys.argv[3] == "shared"
if shared:  # every session of this process on one global pool of 2 intra-op threads
    C.set_global_thread_pool_sizes(2, 1)

def med(fn, k):
    ts = []
    for _ in range(k):
        t = time.perf_counter(); fn(); ts.append(time.perf_counter() - t)
    return sorted(ts)[k // 2]

def options(shared, opt):
    so = ort.SessionOptions()
    if shared:
        so.use_per_session_threads = False
    else:
        so.intra_op_num_threads = 2
    so.graph_optimization_level = opt
    return so

ALL, NONE = ort.GraphOptimizationLevel.ORT_ENABLE_ALL, ort.GraphOptimizationLevel.ORT_DISABLE_ALL
s = ort.InferenceSession(model, options(shared, ALL), providers=["CPUExecutionProvider"])
feed = {}
for i in s.get_inputs():
    shape = [d if isinstance(d, int) else 1 for d in i.shape]
    feed[i.name] = (np.zeros(shape, np.int64) if "int64" in i.type else np.random.rand(*shape).astype(np.float32))
for _ in range(5):
    s.run(None, feed)
fma_loop(1000)
g = np.random.rand(256, 256).astype(np.float32)
g @ g
fma = 2 * 2 * 3_000_000 / med(lambda: fma_loop(3_000_000), 5)
blas_before = 2 * 256 ** 3 / med(lambda: g @ g, 15)
lat = med(lambda: s.run(None, feed), 15)
out = {"latency_s": lat, "fma_2threads": fma, "blas_mm_before": blas_before}
f = {"x0": np.ones((256, 256), np.float32)}
flops = 4 * 2 * 256 ** 3
m = ort.InferenceSession(mm_path, options(shared, NONE), providers=["CPUExecutionProvider"])
m.run(None, f)
out["ort_mm"] = flops / med(lambda: m.run(None, f), 9)
del m
n = (256 << 20) // 24
b, c, a = np.ones(n), np.full(n, 2.0), np.empty(n)
out["triad"] = 3 * 8 * n / med(lambda: np.add(b, np.multiply(c, 1.5, out=a), out=a), 5)
x = np.ones((8 << 20) // 8); y = np.empty_like(x)
out["l3copy"] = 2 * x.nbytes / med(lambda: np.copyto(y, x), 30)
out["blas_mm"] = 2 * 256 ** 3 / med(lambda: g @ g, 15)
print(json.dumps(out))
'''


def pearson(xs: list[float], ys: list[float]) -> float:
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sx = math.sqrt(sum((x - mx) ** 2 for x in xs))
    sy = math.sqrt(sum((y - my) ** 2 for y in ys))
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / (sx * sy) if sx and sy else float("nan")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="corpus/swin_t_torch.onnx", help="a file under models/")
    ap.add_argument("--processes", type=int, default=24)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "slow_state.md"))
    args = ap.parse_args(argv)
    started = time.time()
    rows = []
    with tempfile.TemporaryDirectory(prefix="onnxperf-slow-state-") as tmp:
        model = with_random_weights(ROOT / "models" / args.model, Path(tmp) / "model.onnx")
        mm = Path(tmp) / "probe_matmul.onnx"
        onnx.save(probe_matmul_model(), str(mm))
        child = Path(tmp) / "child.py"
        child.write_text(CHILD)
        for i in range(args.processes):
            row = {}
            for mode in ("own", "shared"):
                res = subprocess.run([sys.executable, str(child), str(model), str(mm), mode], capture_output=True,
                                     text=True, check=True)
                got = json.loads(res.stdout.strip().splitlines()[-1])
                row.update(got if mode == "own" else {"shared_latency_s": got["latency_s"],
                                                      "ort_mm_shared": got["ort_mm"]})
            rows.append({**row, "ort_mm_fresh": row.pop("ort_mm")})
            print(f"process {i + 1}/{args.processes}: {rows[-1]['latency_s'] * 1e3:.1f} ms", file=sys.stderr)
    def halves(key: str) -> tuple[list[dict], list[dict], float]:
        """(fast, slow, fastest) processes by the latency ``key``: slow above 1.25x the fastest."""
        least = min(r[key] for r in rows)
        return [r for r in rows if r[key] <= 1.25 * least], [r for r in rows if r[key] > 1.25 * least], least

    fast, slow, fastest = halves("latency_s")
    fast_s, slow_s, fastest_s = halves("shared_latency_s")
    L = [f"# Which probe sees the slow state? ({args.model})", "",
         f"Made by `python benchmarks/slow_state.py --model {args.model} --processes {args.processes}` "
         f"({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(started))}, {time.time() - started:.0f} s; the "
         "script's docstring says what each probe is). Each row is two fresh processes, one after the other: the "
         "model's median latency at 2 intra-op threads and the probes beside it, with per-session thread pools "
         "(as validate runs) and then with one global pool (`ort_mm_shared`, set beside that process's own "
         "latency).", "",
         f"Slow (latency above 1.25x the fastest): {len(slow)} of {len(rows)} processes with per-session pools "
         f"(fastest {fastest * 1e3:.1f} ms), {len(slow_s)} of {len(rows)} with the global pool (fastest "
         f"{fastest_s * 1e3:.1f} ms).", "",
         "| probe | unit | median, fast processes | median, slow processes | slow / fast | correlation of log latency "
         "with log rate |", "|---|---|---:|---:|---:|---:|"]
    units = {"fma_2threads": ("GFLOP/s", 1e9), "blas_mm_before": ("GFLOP/s", 1e9), "triad": ("GB/s", 1e9), "l3copy": ("GB/s", 1e9), "ort_mm_fresh": ("GFLOP/s", 1e9),
             "ort_mm_shared": ("GFLOP/s", 1e9), "blas_mm": ("GFLOP/s", 1e9)}
    for p in PROBES:
        u, k = units[p]
        key, fa, sl = ("shared_latency_s", fast_s, slow_s) if p == "ort_mm_shared" else ("latency_s", fast, slow)
        f = statistics.median(r[p] for r in fa) / k if fa else float("nan")
        sv = statistics.median(r[p] for r in sl) / k if sl else float("nan")
        corr = pearson([math.log(r[key]) for r in rows], [math.log(r[p]) for r in rows])
        L.append(f"| {p} | {u} | {f:.1f} | {sv:.1f} | {sv / f:.2f} | {corr:+.2f} |")
    if fast and slow:
        ratio = statistics.median(r["latency_s"] for r in slow) / statistics.median(r["latency_s"] for r in fast)
        L += ["", f"The model itself (per-session pools), slow / fast: {1 / ratio:.2f} (as a rate)."]
    L += ["", "| process | latency ms | latency, shared pool, ms | " + " | ".join(PROBES) + " |",
          "|---|---:|---:|" + "---:|" * len(PROBES)]
    for i, r in enumerate(rows, 1):
        L.append(f"| {i} | {r['latency_s'] * 1e3:.1f} | {r['shared_latency_s'] * 1e3:.1f} | "
                 + " | ".join(f"{r[p] / units[p][1]:.1f}" for p in PROBES) + " |")
    Path(args.out).write_text("\n".join(L) + "\n")
    print("\n".join(L[:16]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
