"""Which of validate's probes sees the contended host, block by block, and which models slow with it?

    python benchmarks/slow_state_blocks.py [--models A,B,...] [--processes 8] [--blocks 6]
                                           [--out benchmarks/results/slow_state_blocks.md] [--json FILE]

On the 2-core VM a model sometimes runs 1.4-1.5x slower for seconds to a minute while steal time stays at
zero (benchmarks/results/slow_state.md, repeat.md). Here each of ``--processes`` fresh processes loads every
model (random weights: ``onnxperf.products.validate.weights``) into a session of its own with validate's
settings (onnxruntime's default threads), and ``--blocks`` times:

* validate's own probe (``onnxperf.products.validate._child._Probe``, as its child runs it between blocks: a
  rest, the triad, the matrix-product chain, the hand-off chain, the dispatch chain);
* numpy's OpenBLAS 256³ product at its default threads (2 here): the probe benchmarks/slow_state.py found to
  follow the state, kept as a cross-check;
* then each model in turn, after a rest of the probe's length (a model session's pool spins for tens of ms
  after its runs and would slow the next model's): one untimed run, then the median of 5 timed runs.

A block is **contended** when its hand-off share (the hand-off chain's rate over the matrix product's:
``Probe.handoff_share``) is below ``onnxperf.products.validate.state.CONTENDED`` of the usual share (the
median of the upper half of all blocks' shares), as validate judges a window without a calibrated reference.
The page gives, per probe and per model, the median in calm and in contended blocks, their ratio (as a rate:
below 1 is slower) and the Pearson correlation of log(model latency) with log(hand-off share) and with
log(OpenBLAS rate); then every block.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from onnxperf.products.validate.runner import save_probes  # noqa: E402
from onnxperf.products.validate.state import CONTENDED  # noqa: E402
from onnxperf.products.validate.weights import with_random_weights  # noqa: E402
from slow_state import pearson  # noqa: E402  (benchmarks/slow_state.py: the same correlation)

#: a model this much slower than its calm median ran slow in that block
SLOW = 1.25
#: a matrix product under this share of its calm rate: the probe itself saw the moment
HALVED = 0.75
MODELS = ("mobilenetv2_torch.onnx", "corpus/resnet18_torch.onnx", "corpus/efficientnet_b0_torch.onnx",
          "corpus/swin_t_torch.onnx")

CHILD = r'''
import json, sys, time
from pathlib import Path
import numpy as np, onnxruntime as ort
from onnxperf.products.validate._child import _Probe
probe_path, blocks, models = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]

def med(fn, k):
    ts = []
    for _ in range(k):
        t = time.perf_counter(); fn(); ts.append(time.perf_counter() - t)
    return sorted(ts)[k // 2]

sessions = []
for path in models:
    s = ort.InferenceSession(path, ort.SessionOptions(), providers=["CPUExecutionProvider"])
    feed = {}
    for i in s.get_inputs():
        shape = [d if isinstance(d, int) else 1 for d in i.shape]
        feed[i.name] = np.zeros(shape, np.int64) if "int64" in i.type else np.random.rand(*shape).astype(np.float32)
    s.run(None, feed)
    sessions.append((s, feed))
probe = _Probe(np, ort, 64 << 20, None, probe_path)
g = np.random.rand(256, 256).astype(np.float32)
g @ g
out = []
for _ in range(blocks):
    row = {"probe": probe()}
    row["blas_mm"] = 2 * 256 ** 3 / med(lambda: g @ g, 9)
    lat = []
    for s, feed in sessions:
        time.sleep(_Probe.REST_S)
        s.run(None, feed)
        lat.append(med(lambda: s.run(None, feed), 5))
    row["latency_s"] = lat
    out.append(row)
print(json.dumps(out))
'''


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=",".join(MODELS), help="files under models/, comma-separated")
    ap.add_argument("--processes", type=int, default=8)
    ap.add_argument("--blocks", type=int, default=6)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "slow_state_blocks.md"))
    ap.add_argument("--json", default=str(ROOT / "benchmarks" / "measured" / "slow_state_blocks.json"),
                    help="every block's figures ('' for none)")
    args = ap.parse_args(argv)
    names = [m.strip() for m in args.models.split(",") if m.strip()]
    t0 = time.time()
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    rows: list[tuple[int, int, dict]] = []
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for k, name in enumerate(names):
            dst = Path(tmp) / f"m{k}.onnx"
            with_random_weights(ROOT / "models" / name, dst)
            paths.append(str(dst))
        probe_path = save_probes(Path(tmp))
        for p in range(args.processes):
            out = subprocess.run([sys.executable, "-c", CHILD, str(probe_path), str(args.blocks), *paths],
                                 capture_output=True, text=True, check=True, env=env).stdout
            for b, r in enumerate(json.loads(out.strip().splitlines()[-1])):
                r["share"] = r["probe"]["handoff_flops_per_s"] / r["probe"]["matmul_flops_per_s"]
                rows.append((p + 1, b + 1, r))
    shares = sorted(r["share"] for _, _, r in rows)
    usual = statistics.median(shares[len(shares) // 2:])
    line = CONTENDED * usual
    busy = [r for _, _, r in rows if r["share"] < line]
    calm = [r for _, _, r in rows if r["share"] >= line]
    cmd = (f"python benchmarks/slow_state_blocks.py --models {','.join(names)} --processes {args.processes} "
           f"--blocks {args.blocks}")
    L = ["# Which of validate's probes sees the contended host, and which models slow with it?", "",
         f"Made by `{cmd}` ({started}, {time.time() - t0:.0f} s; the script's docstring says how). Each block: "
         "validate's probe (a rest, triad, matrix-product chain, hand-off chain, dispatch chain), numpy's OpenBLAS "
         "256³ product, then each model (median of 5 runs, onnxruntime's default threads), in one process.", "",
         f"Usual hand-off share (median of the upper half of {len(rows)} blocks): {usual:.3f}; contended below "
         f"{CONTENDED:.0%} of it ({line:.3f}): **{len(busy)} of {len(rows)} blocks**, in "
         f"{len({p for p, _, r in rows if r in busy})} of {args.processes} processes.", ""]

    def ratio(vals_busy, vals_calm, rate=True):
        if not vals_busy or not vals_calm:
            return float("nan")
        b, c = statistics.median(vals_busy), statistics.median(vals_calm)
        return b / c if rate else c / b

    L += ["| probe | calm median | contended median | contended / calm (rate) |", "|---|---:|---:|---:|"]
    probes = [("triad GB/s", lambda r: r["probe"]["triad_bytes_per_s"] / 1e9),
              ("matrix product GFLOP/s", lambda r: r["probe"]["matmul_flops_per_s"] / 1e9),
              ("hand-off chain GFLOP/s", lambda r: r["probe"]["handoff_flops_per_s"] / 1e9),
              ("hand-off share", lambda r: r["share"]),
              ("dispatch ns per node", lambda r: r["probe"]["dispatch_s_per_node"] * 1e9),
              ("OpenBLAS 256³ GFLOP/s", lambda r: r["blas_mm"] / 1e9)]
    for label, f in probes:
        is_time = label.startswith("dispatch")
        cm = statistics.median(f(r) for r in calm) if calm else float("nan")
        bm = statistics.median(f(r) for r in busy) if busy else float("nan")
        L.append(f"| {label} | {cm:.3g} | {bm:.3g} | {ratio([f(r) for r in busy], [f(r) for r in calm], not is_time):.2f} |")
    L += ["", "| model | calm median ms | contended median ms | contended / calm (rate) | correlation with log "
          "hand-off share | correlation with log OpenBLAS rate |", "|---|---:|---:|---:|---:|---:|"]
    for k, name in enumerate(names):
        lat = [math.log(r["latency_s"][k]) for _, _, r in rows]
        cm = statistics.median(r["latency_s"][k] for r in calm) * 1e3 if calm else float("nan")
        bm = statistics.median(r["latency_s"][k] for r in busy) * 1e3 if busy else float("nan")
        L.append(f"| {name} | {cm:.2f} | {bm:.2f} | "
                 f"{ratio([r['latency_s'][k] for r in busy], [r['latency_s'][k] for r in calm], False):.2f} | "
                 f"{pearson(lat, [math.log(r['share']) for _, _, r in rows]):+.2f} | "
                 f"{pearson(lat, [math.log(r['blas_mm']) for _, _, r in rows]):+.2f} |")
    # the blocks where a model ran slow: what the probes said of them
    calm_med = [statistics.median(r["latency_s"][k] for r in calm) for k in range(len(names))] if calm else None
    mm_calm = statistics.median(r["probe"]["matmul_flops_per_s"] for r in calm) if calm else None
    if calm_med:
        slow = [r for _, _, r in rows if any(x > SLOW * m for x, m in zip(r["latency_s"], calm_med))]
        flagged = [r for r in slow if r in busy]
        halved = [r for r in slow if r not in busy and r["probe"]["matmul_flops_per_s"] < HALVED * mm_calm]
        other = len(slow) - len(flagged) - len(halved)
        false = [r for r in busy if r not in slow]
        L += ["", f"Blocks where a model ran more than {SLOW}x slower than its calm median: {len(slow)}. Of them "
              f"{len(flagged)} are flagged contended; in {len(halved)} more the matrix product itself read under "
              f"{HALVED:.0%} of its calm rate (a vCPU away at that moment, both chains halved, the share unmoved: "
              f"the normalization scales the peaks by it); the probe before the other {other} did not see it (the state "
              f"began after it, or another one: validate judges a block by the probes before and after it). "
              f"Flagged with no model slow: "
              f"{len(false)}."]
    L += ["", "Every block (latencies in ms, in the order of the models above):", "",
          "| process | block | hand-off share | matrix product GFLOP/s | OpenBLAS GFLOP/s | contended | latencies |",
          "|---:|---:|---:|---:|---:|---|---|"]
    L += [f"| {p} | {b} | {r['share']:.3f} | {r['probe']['matmul_flops_per_s'] / 1e9:.0f} | {r['blas_mm'] / 1e9:.0f} | "
          f"{'yes' if r in busy else ''} | {' / '.join(f'{x * 1e3:.1f}' for x in r['latency_s'])} |"
          for p, b, r in rows]
    Path(args.out).write_text("\n".join(L) + "\n")
    if args.json:
        Path(args.json).write_text(json.dumps({"command": cmd, "started": started, "models": names,
                                               "blocks": [dict(r, process=p, block=b) for p, b, r in rows]}) + "\n")
    print("\n".join(L[:24]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
