"""GPU realism without a GPU: onnxperf's predictions beside published whole-model measurements.

    python benchmarks/gpu_realism.py [--out benchmarks/results/gpu_realism.md]
    python benchmarks/gpu_realism.py --fit        # refit the kernel-model constants on the A100 rows

Published figures: ``benchmarks/published/gpu_inference.json`` (every entry with its source), the
``tensorrt`` rows (a TensorRT engine timed on its own: Paddle-TRT ResNet-50 batch sweeps on A100 80GB
and A10, TensorRT demo/BERT latency sweeps on A100 40GB and T4, MLPerf Inference v3.1 closed results
on H100 PCIe / SXM, L4 and Jetson AGX Orin). Models: ``models/resnet50_torch.onnx`` (torchvision
ResNet-50 = v1.5) and ``benchmarks/models/bert_{base,large}_legacy.onnx`` (transformers BertModel,
``make_bert.py``). Each row is predicted with the device's preset as shipped (its ``[efficiency]``:
the GPU kernel model of :mod:`onnxperf.predict.gpu_kernels`, a per-kernel launch overhead, attainable
fractions) at the published batch, sequence and precision (``--precision``: fp16, int8, tf32).

Scenarios: ``fixed_batch``: throughput = batch / latency (the published average latency where no
throughput is given); MLPerf ``SingleStream``: batch 1 latency (p50); ``MultiStream``: 8 samples per
query, latency (p50) of batch 8; ``Offline``: the best predicted throughput over batches 1..1024 (the
harness picks its batch and does not say). ratio = predicted / published throughput (for latencies:
published / predicted), so above 1 means onnxperf is optimistic.

The knee: the smallest batch of the published grid whose throughput is within 10% of the best of that
grid, published and predicted; their ratio is the check (within 2x).

Rows used to fit the constants (``--fit``): the A100 rows (ResNet-50 80GB, BERT 40GB). Every other
device is held out: T4, A10, L4, H100, Jetson Orin are predicted with constants never fitted on them.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import math
import statistics
import sys
from functools import lru_cache
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from onnxperf.predict import precision as P  # noqa: E402
from onnxperf.cost.analysis import cost_analysis as analyze  # noqa: E402
from onnxperf.hardware.files import load_preset  # noqa: E402
from onnxperf.predict.roofline import fill, roofline  # noqa: E402
from onnxperf.predict.gpu_kernels import kernel_plan  # noqa: E402

PUBLISHED = ROOT / "benchmarks" / "published" / "gpu_inference.json"
MODELS = {
    "resnet50": ROOT / "models" / "resnet50_torch.onnx",
    "bert-base": ROOT / "benchmarks" / "models" / "bert_base_legacy.onnx",
    "bert-large": ROOT / "benchmarks" / "models" / "bert_large_legacy.onnx",
}
TRAIN_DEVICES = ("a100-40gb", "a100-80gb")
OFFLINE_BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
KNEE = 0.9


def entries() -> list[dict]:
    data = json.loads(PUBLISHED.read_text())
    return [e for e in data["entries"] if e["runtime_class"] == "tensorrt"]


def dims(e: dict, batch: int) -> dict:
    d = {"batch": batch}
    if e["model"].startswith("bert"):
        d["sequence"] = e["seq_len"]
    return d


@lru_cache(maxsize=None)
def _analysis(model: str, batch: int, seq: int | None, precision: str):
    d = {"batch": batch} if seq is None else {"batch": batch, "sequence": seq}
    return P.what_if(analyze(str(MODELS[model]), dims=d), P.get(precision))


def predict_latency(model: str, batch: int, seq: int | None, device: str, precision: str, eff=None) -> float:
    spec = load_preset(device)
    if eff is not None:
        spec = dataclasses.replace(spec, efficiency={**spec.efficiency, **eff}, efficiency_sources={})
    return roofline(_analysis(model, batch, seq, precision), spec, P.get(precision)).latency_s


@lru_cache(maxsize=None)
def _parts(model: str, batch: int, seq: int | None, device: str, precision: str):
    """Per node (family index, compute s, memory s at efficiency 1), and the kernel count: the
    kernel model's time is then Σ max(c/e_c, m/e_m) + kernels x o, evaluated fast for the fit."""
    unit = {"fusion.gpu": 1}
    a = _analysis(model, batch, seq, precision)
    spec = load_preset(device)
    r = roofline(a, dataclasses.replace(spec, efficiency=unit, efficiency_sources={}), P.get(precision))
    plan = kernel_plan(a)
    fam, c, m, out = [], [], [], []
    for n, x in zip(a.main_nodes, r.nodes):
        if not x.time_s:
            continue
        comp = x.ops / x.peak_ops_per_s if x.ops and x.peak_ops_per_s else 0.0
        mem = x.bytes / spec.memory_bandwidth_bytes_per_s
        fam.append({"conv": 0, "matmul": 1}.get(n.family, 2))
        c.append(comp)
        m.append(mem)
        o = n.outputs[0].shape if n.outputs and n.outputs[0] is not None else None
        f = fill(n, spec)
        out.append(np.inf if f == 1.0 or n.key not in plan.launches else float(np.prod(o)))
    return np.array(fam), np.array(c), np.array(m), np.array(out), r.kernels


def fast_latency(parts, e_conv, e_mm, e_other, e_mem, overhead, sms=0.0, per_sm=0.0, run=0.0) -> float:
    fam, c, m, out, k = parts
    ec = np.where(fam == 0, e_conv, np.where(fam == 1, e_mm, e_other))
    f = np.where(np.isinf(out), 1.0, out / (np.where(np.isinf(out), 0.0, out) + sms * per_sm)) if sms and per_sm else 1.0
    return float(np.maximum(c / ec / f, m / e_mem).sum() + k * overhead + run)


def _seq(e):
    return e["seq_len"] if e["model"].startswith("bert") else None


def published_throughput(e: dict) -> float:
    if e.get("throughput_items_per_s") and e["scenario"] in ("fixed_batch", "mlperf_offline"):
        return e["throughput_items_per_s"]
    lat = e["latency_s"]
    key = "p50" if "p50" in lat else "avg"
    batch = 8 if e["scenario"] == "mlperf_multi_stream" else (e["batch"] or 1)
    return batch / lat[key]


def row_batches(e: dict) -> tuple[int, ...]:
    if e["scenario"] == "mlperf_offline":
        return OFFLINE_BATCHES
    if e["scenario"] == "mlperf_multi_stream":
        return (8,)
    return (e["batch"] or 1,)


def predicted_throughput(e: dict, lat_of) -> tuple[float, int]:
    """(throughput, the batch it is at) for an entry, with ``lat_of(batch)`` the latency."""
    best = max(((b / lat_of(b)), b) for b in row_batches(e))
    return best


def evaluate(rows: list[dict], lat_fn) -> list[dict]:
    out = []
    for e in rows:
        thr, b = predicted_throughput(e, lambda b, e=e: lat_fn(e, b))
        pub = published_throughput(e)
        out.append({**e, "_pred": thr, "_pub": pub, "_ratio": thr / pub, "_batch": b})
    return out


def knees(rows: list[dict]) -> list[dict]:
    """Batch sweeps (>= 5 batches of one model / seq / device / precision / runtime)."""
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        if r["scenario"] != "fixed_batch":
            continue
        groups.setdefault((r["model"], r.get("seq_len"), r["device"], r["precision"], r["runtime"]), []).append(r)
    out = []
    for key, rs in sorted(groups.items(), key=lambda kv: tuple(str(x) for x in kv[0])):
        rs = sorted(rs, key=lambda r: r["batch"])
        if len(rs) < 5:
            continue
        out.append({"key": key, "published": _knee([(r["batch"], r["_pub"]) for r in rs]),
                    "predicted": _knee([(r["batch"], r["_pred"]) for r in rs]),
                    "batches": [r["batch"] for r in rs], "source": rs[0]["source"]})
    return out


def _knee(points: list[tuple[int, float]]) -> int:
    best = max(t for _, t in points)
    return min(b for b, t in points if t >= KNEE * best)


def _sms(device: str) -> float:
    return float(load_preset(device).efficiency["gpu.sms"])


def fit(rows: list[dict]) -> dict:
    """Grid search of the shared constants minimising the mean squared log ratio on the A100 rows."""
    train = [e for e in rows if e["device"] in TRAIN_DEVICES]
    parts = {}
    for e in train:
        for b in row_batches(e):
            parts[(id(e), b)] = _parts(e["model"], b, _seq(e), e["device"], e["precision"])
    grid_c = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
    grid_m = (0.7, 0.8, 0.9)
    grid_o = tuple(x * 1e-6 for x in (1, 2, 3, 4, 5, 6, 8))
    grid_t = (1024, 2048, 4096, 8192, 16384)
    grid_r = (0.0,)  # no per-run overhead: the presets carry none (a runtime, not the GPU, adds it)
    best = None
    for ec, em_, mem, o, t, run in itertools.product(grid_c, grid_c, grid_m, grid_o, grid_t, grid_r):
        err = []
        for e in train:
            thr = max(b / fast_latency(parts[(id(e), b)], ec, em_, 0.5, mem, o, _sms(e["device"]), t, run)
                      for b in row_batches(e))
            err.append(math.log(thr / published_throughput(e)) ** 2)
        score = sum(err) / len(err)
        if best is None or score < best[0]:
            best = (score, ec, em_, mem, o, t, run)
    score, ec, em_, mem, o, t, run = best
    return {"conv.compute": ec, "matmul.compute": em_, "default.memory": mem, "overhead_s": o,
            "gpu.outputs_per_sm": t, "overhead_run_s": run, "rms_log_error": math.sqrt(score), "train_rows": len(train)}


def _src(e: dict) -> str:
    s = e["source"]
    return f"[{s['repo']}/{s['path'].split('/')[-2] if '/' in s['path'] else s['path']}@{s['commit'][:8]}]({s['url']})"


def not_comparable(e: dict) -> str | None:
    """Why a published row does not measure the work onnxperf predicts, or None."""
    if e["model"] == "bert-large" and e["scenario"].startswith("mlperf"):
        return "MLPerf bert-99 runs unpadded variable-length sequences (<= 384): less work than the padded seq-384 pass"
    if "NOT GPU-only" in (e.get("note") or ""):
        return "GPU and both DLAs together (uses_dla=true): not the GPU alone"
    return None


def report(all_rows: list[dict], ks: list[dict]) -> str:
    rows = [r for r in all_rows if not_comparable(r) is None]
    apart = [r for r in all_rows if not_comparable(r) is not None]
    ratios = [r["_ratio"] for r in rows]
    held = [r for r in rows if r["device"] not in TRAIN_DEVICES]
    within = sum(0.5 <= x <= 2 for x in ratios)
    kin = sum(0.5 <= k["predicted"] / k["published"] <= 2 for k in ks)
    lines = [
        "# GPU realism: predictions beside published measurements (issue 18, point 2)",
        "",
        "Made by `python benchmarks/gpu_realism.py` (no GPU needed). Every prediction uses the device's",
        "preset as shipped (`onnxperf hw show <id>` lists its [efficiency] and their sources), the GPU kernel",
        "model (`onnxperf/predict/gpu_kernels.py`) and `--precision` of the published run. ratio = predicted /",
        "published throughput (above 1: onnxperf is optimistic). Constants fitted on the A100 rows only",
        "(`--fit`); the other devices are held out.",
        "",
        f"- comparable rows: {len(rows)} ({len(apart)} more are shown apart: they measure other work); "
        f"within 2x: **{within}/{len(rows)}**; ratio min {min(ratios):.2f}, "
        f"median {statistics.median(ratios):.2f}, max {max(ratios):.2f}",
        f"- held-out rows (not A100): {len(held)}; within 2x: {sum(0.5 <= r['_ratio'] <= 2 for r in held)}"
        f"/{len(held)}; median ratio {statistics.median([r['_ratio'] for r in held]):.2f}",
        f"- batch sweeps: {len(ks)}; knee (smallest batch within {1 - KNEE:.0%} of the sweep's best throughput) "
        f"within 2x of the published one: **{kin}/{len(ks)}**",
        "",
        "## Knee of the batch sweeps",
        "",
        "| model | seq | device | precision | runtime | batches | published knee | predicted knee | ratio |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for k in ks:
        m, seq, dev, prec, rt = k["key"]
        lines.append(f"| {m} | {seq or '-'} | {dev} | {prec} | {rt.split(' (')[0]} | "
                     f"{k['batches'][0]}..{k['batches'][-1]} | {k['published']} | {k['predicted']} | "
                     f"{k['predicted'] / k['published']:.2f} |")
    misses = [r for r in rows if not 0.5 <= r["_ratio"] <= 2]
    kmiss = [k for k in ks if not 0.5 <= k["predicted"] / k["published"] <= 2]
    lines += ["", "## Outside 2x", ""]
    lines += [f"- row: {r['model']} {r.get('seq_len') or ''} {r['device']} {r['precision']} {r['scenario']} batch "
              f"{r['batch']} ({r['runtime'].split(' (')[0]}): ratio {r['_ratio']:.2f}" for r in misses] or ["- no row"]
    lines += [f"- knee: {k['key'][0]} {k['key'][1] or ''} {k['key'][2]} {k['key'][3]} ({k['key'][4].split(' (')[0]}): "
              f"published {k['published']}, predicted {k['predicted']}" for k in kmiss] or ["- no knee"]
    lines += ["", "## Every comparable row", "",
              "| model | seq | device | precision | scenario | batch | runtime | published /s | predicted /s | ratio | source |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (r["model"], str(r.get("seq_len")), r["device"], r["precision"],
                                         r["scenario"], r["runtime"], r["batch"] or 0)):
        b = r["batch"] if r["scenario"] != "mlperf_offline" else f"best ({r['_batch']})"
        lines.append(f"| {r['model']} | {r.get('seq_len') or '-'} | {r['device']} | {r['precision']} | "
                     f"{r['scenario']} | {b} | {r['runtime'].split(' (')[0]} | {r['_pub']:,.0f} | {r['_pred']:,.0f} | "
                     f"{r['_ratio']:.2f} | {_src(r)} |")
    lines += ["", "## Shown apart: published rows that measure other work", "",
              "| model | device | scenario | published /s | predicted /s | ratio | why apart |", "|---|---|---|---|---|---|---|"]
    for r in apart:
        lines.append(f"| {r['model']} | {r['device']} | {r['scenario']} | {r['_pub']:,.0f} | {r['_pred']:,.0f} | "
                     f"{r['_ratio']:.2f} | {not_comparable(r)} |")
    lines += ["", "Notes: " + " ".join(sorted({r["note"] for r in rows if r.get("note")}))[:3000], ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "gpu_realism.md"))
    ap.add_argument("--fit", action="store_true", help="fit the constants on the A100 rows and print them")
    ap.add_argument("--eff", help="JSON object: merge these [efficiency] values into the presets' (to try some)")
    args = ap.parse_args(argv)
    eff = json.loads(args.eff) if args.eff else None
    rows = entries()
    if args.fit:
        print(json.dumps(fit(rows), indent=1))
        return 0
    ev = evaluate(rows, lambda e, b: predict_latency(e["model"], b, _seq(e), e["device"], e["precision"], eff))
    ks = knees(ev)
    text = report(ev, ks)
    Path(args.out).write_text(text)
    print("\n".join(text.splitlines()[8:12]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
