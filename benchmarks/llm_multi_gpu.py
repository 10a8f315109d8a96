"""Tensor parallel (``--devices N``) beside published multi-GPU throughput (issue 29, item 6).

    python benchmarks/llm_multi_gpu.py [--out benchmarks/results/llm_multi_gpu.md] [--quick]

Rows: TensorRT-LLM's static-batching tables (gptSession: a fixed batch, input and output lengths) of
Llama-2-70B run tensor parallel on 2, 4 or 8 GPUs, from ``benchmarks/published/llm_inference.json``
(each with its source; fp16 and fp8 rows, whose weight, activation and KV precision the row states).
Graph: ``benchmarks/make_llm_decode.py --config llama-2-70b`` (80 layers, hidden 8192, 64 heads, 8 KV
heads, FFN 28672; weights referenced, never written).

Prediction, with the device's preset as shipped, ``--kv-runtime in-place`` (TensorRT-LLM keeps the
cache in place), ``--precision`` of the row and ``--devices`` = the row's GPU count: static batching
runs the prefill of the batch, then ``output_len - 1`` decode steps at contexts ``input_len + 1 ..
input_len + output_len - 1``:

    T = prefill(B, input_len) + Σ_k decode(B, input_len + k),   throughput = B · output_len / T

(per GPU: / N). The decode time is linear in the context to well under 1% over these ranges, so the
sum is the trapezoid of the step at 3 contexts (first, middle, last). ratio = predicted / published
(above 1: optimistic).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from onnxperf.cost.request import Request  # noqa: E402
from onnxperf.graph.loader import load  # noqa: E402
from onnxperf.hardware import load_preset  # noqa: E402
from onnxperf.insights.llm import recognize  # noqa: E402
from onnxperf.insights.llm.figures import figures  # noqa: E402

PUBLISHED = ROOT / "benchmarks" / "published" / "llm_inference.json"
DEVICE = {"a100": "a100-80gb", "h100": "h100-sxm"}
PRECISION = {"fp16": ("fp16", None), "fp8": ("fp8", "fp8")}


def rows() -> list[dict]:
    out = []
    for e in json.loads(PUBLISHED.read_text())["entries"]:
        if e["model"] != "llama-2-70b" or (e.get("device_count") or 1) < 2 or not e.get("batch"):
            continue
        if e["runtime_class"] != "tensorrt-llm" or e["metric"] not in ("output_tokens_per_s", "output_tokens_per_s_per_gpu"):
            continue
        label = (e.get("precision") or {}).get("label", "").lower() if isinstance(e.get("precision"), dict) else ""
        if label not in PRECISION or not e.get("input_len") or not e.get("output_len"):
            continue
        out.append(e)
    return out


class Predictor:
    def __init__(self, model: Path):
        self.loaded = load(model)
        self.step = recognize(self.loaded)
        self.cache: dict[tuple, object] = {}

    def figures(self, device: str, precision: str, kv: str | None, n: int, batch: int, context: int, prompt: int):
        key = (device, precision, kv, n, batch, context, prompt)
        if key not in self.cache:
            self.cache[key] = figures(Request(self.loaded, precision=precision), self.step, batch=batch,
                                      context=context, prompt=prompt, spec=load_preset(device), with_formulas=False,
                                      kv_runtime="in-place", kv_precision=kv, devices=n)
        return self.cache[key]

    def throughput(self, e: dict) -> tuple[float, dict]:
        device = DEVICE.get(e["device"], e["device"])
        precision, kv = PRECISION[e["precision"]["label"].lower()]
        n, b, i, o = e["device_count"], e["batch"], e["input_len"], e["output_len"]
        first = self.figures(device, precision, kv, n, b, i + 1, i)
        prefill = first.prefill_latency_s
        if o <= 1:
            total = prefill
        else:
            ks = sorted({i + 1, i + (o - 1 + 1) // 2, i + o - 1})
            lat = {c: self.figures(device, precision, kv, n, b, c, i).decode.latency_s for c in ks}
            # trapezoid over the o - 1 steps at contexts i+1 .. i+o-1
            pts = sorted(lat.items())
            decode = 0.0
            for (c0, t0), (c1, t1) in zip(pts, pts[1:]):
                decode += (t0 + t1) / 2 * (c1 - c0)
            decode += (pts[0][1] + pts[-1][1]) / 2  # the trapezoid counts c1 - c0 intervals: one step more
            total = prefill + decode
        tput = b * o / total
        if e["metric"] == "output_tokens_per_s_per_gpu":
            tput /= n
        return tput, {"prefill_s": prefill, "total_s": total, "allreduce_s": first.decode.allreduce_s,
                      "per_device_weights": first.weight_bytes}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "llm_multi_gpu.md"))
    ap.add_argument("--quick", action="store_true", help="the first 4 rows only")
    args = ap.parse_args(argv)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        model = Path(tmp) / "llama-2-70b.onnx"
        subprocess.run([sys.executable, str(ROOT / "benchmarks" / "make_llm_decode.py"), "--config", "llama-2-70b",
                        "--out", str(model)], check=True, capture_output=True)
        p = Predictor(model)
        picked = rows()[:4] if args.quick else rows()
        out = []
        for e in picked:
            pred, parts = p.throughput(e)
            out.append((e, pred, pred / e["value"], parts))
            print(f"{e['device']} x{e['device_count']} b{e['batch']} {e['input_len']}/{e['output_len']} "
                  f"{e['precision']['label']}: {pred:.0f} vs {e['value']} ({pred / e['value']:.2f})", file=sys.stderr)
    ratios = [r for _, _, r, _ in out]
    lines = [
        "# Tensor parallel beside published multi-GPU throughput (issue 29, item 6)", "",
        f"Made by `python benchmarks/llm_multi_gpu.py` ({time.perf_counter() - started:.0f} s). Model: Llama-2-70B "
        "(`benchmarks/make_llm_decode.py`), `--kv-runtime in-place`, `--devices` = the row's GPU count, each device's "
        "preset as shipped. ratio = predicted / published (above 1: optimistic). Method: the module docstring.", "",
        f"- rows: {len(out)}; median ratio {statistics.median(ratios):.2f}; range {min(ratios):.2f}-{max(ratios):.2f}; "
        f"within 1.5x: {sum(1 for r in ratios if 1 / 1.5 <= r <= 1.5)}/{len(ratios)}" if out else "- no row"]
    groups: dict[tuple, list[float]] = {}
    for e, _, r, _ in out:
        groups.setdefault((e["device"], e["precision"]["label"]), []).append(r)
    lines += [f"- {dev}, {prec}: {len(rs)} rows, median ratio {statistics.median(rs):.2f}, range {min(rs):.2f}-"
              f"{max(rs):.2f}, within 1.5x {sum(1 for r in rs if 1 / 1.5 <= r <= 1.5)}/{len(rs)}"
              for (dev, prec), rs in sorted(groups.items())]
    lines += ["", "These rows are held out: no constant of any preset is fitted on a multi-GPU row (the fp8 GEMM "
              "share, `matmul.fp8.compute`, is fitted on single-GPU TensorRT-LLM rows: "
              "`benchmarks/results/llm_realism.md`).", "",
        "| GPUs | batch | in / out | precision | metric | published | predicted | ratio | all-reduces per step | "
        "weights per GPU | source |",
        "|---|---:|---|---|---|---:|---:|---:|---:|---:|---|"]
    for e, pred, r, parts in out:
        s = e["source"]
        lines.append(f"| {e['device_count']} x {e['device']} | {e['batch']} | {e['input_len']} / {e['output_len']} | "
                     f"{e['precision']['label']} | {e['metric']} | {e['value']:,.0f} | {pred:,.0f} | {r:.2f} | "
                     f"{parts['allreduce_s'] * 1e3:.2f} ms | {parts['per_device_weights'] / 2**30:.1f} GiB | "
                     f"{s.get('repo', '')}@{str(s.get('commit', ''))[:8]} |")
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
