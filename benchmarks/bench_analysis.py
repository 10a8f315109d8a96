"""Analysis speed and memory, as ratios against a floor measured in the same run.

Floor: ``onnx.load(path, load_external_data=False)`` + ``onnx.shape_inference.infer_shapes`` (what any
tool must do at least). Each measurement runs in a fresh process (peak RSS is a high-water mark),
repeated; the median time and the peak RSS are reported, and the ratio onnxperf / floor.

    python benchmarks/bench_analysis.py [--repeats 5] [--out benchmarks/results/analysis.md]

Also:
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


def measure(mode: str, path: Path, dims: dict[str, int], repeats: int) -> dict[str, float]:
    runs = []
    for _ in range(repeats):
        out = subprocess.run([sys.executable, "-c", CHILD, mode, str(path), json.dumps(dims)],
                             capture_output=True, text=True, check=True)
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    return {
        "seconds": statistics.median(r["seconds"] for r in runs),
        "peak_mib": max(r["peak_rss_kib"] for r in runs) / 1024,
        "work_mib": max(r["peak_rss_kib"] - r["baseline_rss_kib"] for r in runs) / 1024,
    }


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
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "analysis.md"))
    args = ap.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        llm = make_llm(Path(tmp) / "llm7b.onnx", 4096, 32, 11008)
        cases = [(p, {"batch": 1}) for p in sorted((ROOT / "models").glob("*.onnx"))]
        cases = [(p, {"batch": 1, "sequence": 128} if "bert" in p.name else d) for p, d in cases]
        cases.append((llm, {"batch": 1, "sequence": 2048}))
        for path, dims in cases:
            floor = measure("floor", path, dims, args.repeats)
            ours = measure("onnxperf", path, dims, args.repeats)
            rows.append((path.name, floor, ours))
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
             f"Fresh process per run, median of {args.repeats} times, max peak RSS. Machine: {os.cpu_count()} cores.",
             "Re-run: `python benchmarks/bench_analysis.py`.", "",
             "| model | floor s | onnxperf s | time ratio | floor peak MiB | onnxperf peak MiB | peak ratio | onnxperf work MiB |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, f, o in rows:
        lines.append(f"| {name} | {f['seconds']:.3f} | {o['seconds']:.3f} | {o['seconds'] / f['seconds']:.2f} | "
                     f"{f['peak_mib']:.0f} | {o['peak_mib']:.0f} | {o['peak_mib'] / f['peak_mib']:.2f} | {o['work_mib']:.0f} |")
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
