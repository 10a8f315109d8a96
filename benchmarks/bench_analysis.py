"""Analysis speed and memory, as ratios against a floor measured in the same run.

Floor: ``onnx.load(path, load_external_data=False)`` + ``onnx.shape_inference.infer_shapes`` (what any
tool must do at least). Each measurement runs in a fresh process (peak RSS is a high-water mark),
repeated, floor and onnxperf runs interleaved; the median time and the peak RSS are reported, and
the ratio onnxperf / floor.

    python benchmarks/bench_analysis.py [--repeats 7] [--out benchmarks/results/analysis.md]

Also:
* where the time goes: each phase timed warm (in one process, after a first analysis, so the
  one-time start-up of ONNX's C++ schema registry that the floor also pays is left out): load,
  shapes, cost walk, params and tables, against ``infer_shapes`` alone, per node;
* the 7B-class LLM graph from make_llm.py (32 layers, hidden 4096, symbolic batch/sequence, 12.6 GiB
  of fp16 weights referenced, never written): target under 10 s and under 1 GiB peak;
* peak memory vs weight size: the same LLM structure at hidden 512 and 4096 (64× the weight bytes),
  with the weight file present on disk (a sparse file of the full size): peak memory must not grow
  with the weights.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import json, resource, sys, time
mode, path, dims = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
import onnx, onnx.shape_inference
if mode == "onnxperf":
    import onnxperf
    onnxperf.analyze  # imports done before the baseline
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.perf_counter()
if mode == "floor":
    m = onnx.load(path, load_external_data=False)
    onnx.shape_inference.infer_shapes(m)
else:
    a = onnxperf.analyze(path, dims=dims)
    assert a.coverage.nodes > 0
dt = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"seconds": dt, "peak_rss_kib": peak, "baseline_rss_kib": base}))
"""

PHASES = r"""
import json, statistics, sys, time
import onnx, onnx.shape_inference
import onnxperf
from onnxperf.analysis import _by_op_type, _params
from onnxperf.cost import CostWalker
from onnxperf.loader import load
from onnxperf.shapes import infer
path, dims, repeats = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3])
onnxperf.analyze(path, dims=dims)  # warm: C++ schema registry, lazy caches
out = {}
for _ in range(repeats):
    t0 = time.perf_counter(); m = onnx.load(path, load_external_data=False)
    onnx.shape_inference.infer_shapes(m); t1 = time.perf_counter()
    lm = load(path); t2 = time.perf_counter()
    sr = infer(lm, dims, {}); t3 = time.perf_counter()
    w = CostWalker(sr.tensors, lm.opsets); w.walk(lm.graph); t4 = time.perf_counter()
    _params(lm.graph); _by_op_type(tuple(w.records)); t5 = time.perf_counter()
    onnxperf.analyze(path, dims=dims); t6 = time.perf_counter()
    for k, v in {"floor": t1 - t0, "load": t2 - t1, "shapes": t3 - t2, "walk": t4 - t3, "tables": t5 - t4,
                 "analyze": t6 - t5}.items():
        out.setdefault(k, []).append(v)
res = {k: statistics.median(v) for k, v in out.items()}
res["nodes"] = len(lm.graph.nodes)
res["engines"] = sr.engines
passes = []
real = onnx.shape_inference.infer_shapes
onnx.shape_inference.infer_shapes = lambda *a, **k: passes.append(1) or real(*a, **k)
onnxperf.analyze(path, dims=dims)
onnx.shape_inference.infer_shapes = real
res["onnx_passes"] = len(passes)
print(json.dumps(res))
"""


def phases(path: Path, dims: dict[str, int], repeats: int) -> dict:
    out = subprocess.run([sys.executable, "-c", PHASES, str(path), json.dumps(dims), str(repeats)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _run(mode: str, path: Path, dims: dict[str, int]) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, mode, str(path), json.dumps(dims)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _summary(runs: list[dict]) -> dict[str, float]:
    return {
        "seconds": statistics.median(r["seconds"] for r in runs),
        "peak_mib": max(r["peak_rss_kib"] for r in runs) / 1024,
        "work_mib": max(r["peak_rss_kib"] - r["baseline_rss_kib"] for r in runs) / 1024,
    }


def measure(mode: str, path: Path, dims: dict[str, int], repeats: int) -> dict[str, float]:
    return _summary([_run(mode, path, dims) for _ in range(repeats)])


def measure_pair(path: Path, dims: dict[str, int], repeats: int) -> tuple[dict[str, float], dict[str, float]]:
    """Floor and onnxperf runs interleaved (the order swapped every repeat), so that a machine
    that slows down or speeds up during the measurement moves both sides of the ratio alike."""
    floor: list[dict] = []
    ours: list[dict] = []
    for i in range(repeats):
        for mode in (("floor", "onnxperf") if i % 2 == 0 else ("onnxperf", "floor")):
            (floor if mode == "floor" else ours).append(_run(mode, path, dims))
    return _summary(floor), _summary(ours)


def make_llm(out: Path, hidden: int, heads: int, ffn: int, layers: int = 32, sparse_weights: bool = False) -> Path:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import make_llm

    make_llm.main(["--out", str(out), "--hidden", str(hidden), "--heads", str(heads), "--ffn", str(ffn),
                   "--layers", str(layers)])
    if sparse_weights:
        import onnx

        m = onnx.load(str(out), load_external_data=False)
        end = 0
        for t in m.graph.initializer:
            info = {e.key: e.value for e in t.external_data}
            if info:
                end = max(end, int(info["offset"]) + int(info["length"]))
        with open(str(out) + ".data", "wb") as fh:
            fh.truncate(end)  # sparse: the size is real, no bytes are stored
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "analysis.md"))
    args = ap.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        llm = make_llm(Path(tmp) / "llm7b.onnx", 4096, 32, 11008)
        cases = [(p, {"batch": 1}) for p in sorted((ROOT / "models").glob("*.onnx"))]
        cases = [(p, {"batch": 1, "sequence": 128} if "bert" in p.name else d) for p, d in cases]
        cases.append((llm, {"batch": 1, "sequence": 2048}))
        for path, dims in cases:
            floor, ours = measure_pair(path, dims, args.repeats)
            rows.append((path.name, floor, ours, phases(path, dims, args.repeats)))
            print(f"{path.name:28} floor {floor['seconds']:.3f}s {floor['peak_mib']:.0f} MiB | onnxperf "
                  f"{ours['seconds']:.3f}s {ours['peak_mib']:.0f} MiB | time x{ours['seconds'] / floor['seconds']:.2f} "
                  f"peak x{ours['peak_mib'] / floor['peak_mib']:.2f}", flush=True)
        small = make_llm(Path(tmp) / "small" / "llm.onnx", 512, 8, 1376, sparse_weights=True) \
            if (Path(tmp) / "small").mkdir() is None else None
        big = make_llm(Path(tmp) / "big" / "llm.onnx", 4096, 32, 11008, sparse_weights=True) \
            if (Path(tmp) / "big").mkdir() is None else None
        dims = {"batch": 1, "sequence": 512}
        mem_small = measure("onnxperf", small, dims, args.repeats)
        mem_big = measure("onnxperf", big, dims, args.repeats)
        w_small = os.path.getsize(str(small) + ".data")
        w_big = os.path.getsize(str(big) + ".data")
    lines = ["# Analysis speed and memory vs the floor", "",
             "Floor = `onnx.load(load_external_data=False)` + `onnx.shape_inference.infer_shapes`. "
             f"Fresh process per run, floor and onnxperf runs interleaved, median of {args.repeats} times, max peak "
             f"RSS. Machine: {os.cpu_count()} cores.",
             "Re-run: `python benchmarks/bench_analysis.py`.", "",
             "| model | floor s | onnxperf s | time ratio | floor peak MiB | onnxperf peak MiB | peak ratio | onnxperf work MiB |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, f, o, _ in rows:
        lines.append(f"| {name} | {f['seconds']:.3f} | {o['seconds']:.3f} | {o['seconds'] / f['seconds']:.2f} | "
                     f"{f['peak_mib']:.0f} | {o['peak_mib']:.0f} | {o['peak_mib'] / f['peak_mib']:.2f} | {o['work_mib']:.0f} |")
    lines += ["", "Where the time goes, warm (one process, after a first analysis: the floor's first call also pays "
              "~10 ms of one-time start-up of ONNX's C++ schema registry, which both sides share and this leaves "
              "out). ms; µs/node = onnxperf's own Python work (analyze − infer_shapes) per node:", "",
              "| model | nodes | shape engines | ONNX passes | floor warm ms | load | shapes | walk | tables | analyze "
              "| µs/node |",
              "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, _, _, p in rows:
        ms = {k: p[k] * 1e3 for k in ("floor", "load", "shapes", "walk", "tables", "analyze")}
        per_node = (p["analyze"] - p["floor"]) / p["nodes"] * 1e6
        lines.append(f"| {name} | {p['nodes']} | {'+'.join(p['engines'])} | {p['onnx_passes']} | {ms['floor']:.1f} | "
                     f"{ms['load']:.1f} | "
                     f"{ms['shapes']:.1f} | {ms['walk']:.1f} | {ms['tables']:.1f} | {ms['analyze']:.1f} | {per_node:.0f} |")
    over = [(name, o["seconds"] / f["seconds"], p) for name, f, o, p in rows if o["seconds"] / f["seconds"] > 2]
    within = [name for name, f, o, _ in rows if o["seconds"] / f["seconds"] <= 2]
    lines += ["", f"Within 2× of the floor: {', '.join(within) or 'none'}."]
    for name, ratio, p in over:
        lines.append(
            f"Over 2×: {name} ({ratio:.2f}×): {p['nodes']} nodes at {(p['analyze'] - p['floor']) / p['nodes'] * 1e6:.0f} µs "
            f"of Python each (load {p['load'] * 1e3:.0f} ms, shapes {p['shapes'] * 1e3:.0f} ms with "
            f"{'+'.join(p['engines'])}, walk {p['walk'] * 1e3:.0f} ms) against {p['floor'] * 1e3:.1f} ms of C++ "
            "inference: the floor does per node in C++ what onnxperf does in Python"
            + (f"; and {p['onnx_passes']} ONNX inference passes where the floor makes one (shape arithmetic "
               "that ONNX's data propagation does not carry, computed and inferred again)."
               if p["onnx_passes"] > 1 else "."))
    llm_row = next((f, o) for name, f, o, _ in rows if name == llm.name)
    lines += ["", f"The 7B-class LLM graph ({llm.name}, 32 layers, hidden 4096, 12.6 GiB of weights referenced): "
              f"{llm_row[1]['seconds']:.3f} s and {llm_row[1]['peak_mib']:.0f} MiB peak "
              f"(targets: under 10 s, under 1 GiB: {'met' if llm_row[1]['seconds'] < 10 and llm_row[1]['peak_mib'] < 1024 else 'MISSED'})."]
    lines += ["", "Peak memory vs weight size (LLM structure, 32 layers, weight file present as a sparse file):", "",
              "| hidden | weight file | onnxperf s | peak MiB |", "|---:|---:|---:|---:|",
              f"| 512 | {w_small / 2**30:.2f} GiB | {mem_small['seconds']:.3f} | {mem_small['peak_mib']:.0f} |",
              f"| 4096 | {w_big / 2**30:.2f} GiB | {mem_big['seconds']:.3f} | {mem_big['peak_mib']:.0f} |",
              "", f"Weight bytes ×{w_big / w_small:.0f}; peak memory ×{mem_big['peak_mib'] / mem_small['peak_mib']:.2f}."]
    text = "\n".join(lines) + "\n"
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
