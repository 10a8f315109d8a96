"""Decode steps of Llama-shaped ONNX graphs run by onnxruntime's CUDA provider, beside onnxperf's
predictions of the same graphs (issue 29: "measure decode steps there through onnxruntime-genai or
onnxruntime's CUDA provider at batch 1, 8, 32 and two contexts, and put the points beside the published
ones").

    python benchmarks/ort_cuda.py measure --out ort_cuda_h200.json         # on the GPU machine
                                                 # (benchmarks/ort_cuda_device.sh: as it was run there)
    python benchmarks/ort_cuda.py measure --out x.json --tiny --provider CPUExecutionProvider   # a dry run
    python benchmarks/ort_cuda.py compare [benchmarks/measured/ort_cuda_h200.json] \\
        [--out benchmarks/results/ort_cuda.md]                              # here: onnxperf beside it

What is measured (``measure``): the graph ``benchmarks/make_llm_decode.py`` writes (what the torch
exporters write for a Llama decoder with a KV cache: past/present Concat, attention as MatMul, Softmax,
MatMul, grouped-query attention's repeat_kv as Unsqueeze/Expand/Reshape) for Llama-2-7B (32 KV heads)
and Llama-3-8B (8 KV heads) at their real sizes (:data:`LAYERS` layers; ``--layers 4`` for a quicker run of
the same widths), fp16, random weights
N(0, 0.02) written to the external-data file the graph names. onnxruntime as a user runs it: an
``InferenceSession`` with the CUDA provider first and the CPU provider as fallback, the default
graph optimizations, every input and output bound on the GPU (``IOBinding``: no host copies in the
timed region), one new token per sequence after ``context - 1`` cached ones, at every batch of
:data:`BATCHES` and context of :data:`CONTEXTS`. Timing: wall clock around ``run_with_iobinding``
(which returns when the GPU is done) after :data:`WARMUP` runs, :data:`REPEATS` runs, the median and
P10/P90. For :data:`PROFILED` points, the CUDA kernels of three steps through ``torch.profiler`` (CUPTI
sees every kernel of the process, onnxruntime's too): device time by family and kernels per step; the
difference between the wall time and the kernels' sum is the host's launch time not hidden behind them.

``compare`` predicts every point with onnxperf's command line (``summary --llm --hw <preset>
--precision fp16 --dim batch=B --context C``) on the same graph, with the KV cache as exported (what
onnxruntime runs here) and, beside it, in place (what a serving runtime would do with the same
weights): ratio = measured / predicted (above 1: onnxperf optimistic).
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

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))  # make_llm_decode and gpu_decode beside it
import make_llm_decode as MLD  # noqa: E402
from gpu_decode import _smi, kernel_family  # noqa: E402

MODELS = ("llama-2-7b", "llama-3-8b")
LAYERS = 32
BATCHES = (1, 8, 32)
CONTEXTS = (512, 2048)
REPEATS = 30
WARMUP = 3
PROFILED = {(1, 2048), (32, 2048)}
#: a dry run's shape (``--tiny``): the same graph at toy widths
TINY = {"llama-2-7b": dict(hidden=64, heads=4, kv_heads=4, ffn=128, vocab=256),
        "llama-3-8b": dict(hidden=64, heads=4, kv_heads=2, ffn=160, vocab=512)}

MEASURED = ROOT / "benchmarks" / "measured" / "ort_cuda_h200.json"
#: the same script earlier in the same lease (the run-to-run spread of onnxruntime's host side)
REPEAT = ROOT / "benchmarks" / "measured" / "ort_cuda_h200_run1.json"
#: ``onnxperf validate --provider CUDAExecutionProvider`` on two models of models/ (the fields the page reads)
VALIDATE = ROOT / "benchmarks" / "measured" / "ort_cuda_h200_validate.json"
OUT = ROOT / "benchmarks" / "results" / "ort_cuda.md"
PRESETS = {"NVIDIA H200": "h200", "NVIDIA H100 80GB HBM3": "h100-sxm"}


def config(name: str, layers: int = LAYERS, tiny: bool = False) -> MLD.Config:
    """``name``'s checkpoint shape with ``layers`` layers (``tiny``: toy widths)."""
    c = MLD.CONFIGS[name]
    if tiny:
        t = TINY[name]
        return MLD.Config(f"{name}-tiny", layers, t["hidden"], t["heads"], t["kv_heads"], t["ffn"], t["vocab"],
                          c.rope_theta)
    return MLD.Config(f"{name}-{layers}l", layers, c.hidden, c.heads, c.kv_heads, c.ffn, c.vocab, c.rope_theta)


def graph(cfg: MLD.Config, folder: Path) -> Path:
    """The decode graph of ``cfg`` in ``folder`` (its weights referenced, not written)."""
    return MLD.write(cfg, folder / f"{cfg.name}.onnx")


# ---------------------------------------------------------------------------------------------------
# measure (runs where onnxruntime has the provider; imports nothing from onnxperf)


def write_weights(path: Path, seed: int = 0) -> int:
    """Fill the external-data file ``path``'s graph names with fp16 N(0, 0.02) values (a 64 MiB random
    block repeated: a dense kernel's time does not depend on the values); its size in bytes."""
    import numpy as np
    import onnx

    m = onnx.load(str(path), load_external_data=False)
    end, location = 0, None
    for t in m.graph.initializer:
        info = {e.key: e.value for e in t.external_data}
        if info:
            location = info["location"]
            end = max(end, int(info["offset"]) + int(info["length"]))
    block = (np.random.default_rng(seed).standard_normal(32 << 20, dtype=np.float32) * 0.02).astype(np.float16)
    raw = block.tobytes()
    with open(path.parent / location, "wb") as f:
        left = end
        while left > 0:
            f.write(raw[:left])
            left -= min(left, len(raw))
    return end


def _stats(ts: list[float]) -> dict:
    ts = sorted(ts)
    q = lambda p: ts[min(len(ts) - 1, int(round(p * (len(ts) - 1))))]  # noqa: E731
    return {"median_s": statistics.median(ts), "p10_s": q(0.1), "p90_s": q(0.9), "repeats": len(ts)}


class Step:
    """One decode point of a session: inputs and outputs bound on the provider's device."""

    def __init__(self, ort, sess, cfg: MLD.Config, batch: int, context: int, device: str):
        import numpy as np

        self.sess, self.io = sess, sess.io_binding()
        past = context - 1
        host = {"input_ids": np.zeros((batch, 1), np.int64),
                "position_ids": np.full((batch, 1), past, np.int64),
                "attention_mask": np.ones((batch, context), np.int64)}
        self.values = {k: ort.OrtValue.ortvalue_from_numpy(v, device, 0) for k, v in host.items()}
        shape = [batch, cfg.kv_heads, past, cfg.head_dim]
        zero = np.zeros(shape, np.float16) if device == "cpu" else None
        for i in range(cfg.layers):
            for kind in ("key", "value"):
                name = f"past_key_values.{i}.{kind}"
                self.values[name] = (ort.OrtValue.ortvalue_from_numpy(zero) if zero is not None
                                     else ort.OrtValue.ortvalue_from_shape_and_type(shape, np.float16, device, 0))
        for k, v in self.values.items():
            self.io.bind_ortvalue_input(k, v)
        for o in sess.get_outputs():
            self.io.bind_output(o.name, device, 0)

    def __call__(self) -> None:
        self.sess.run_with_iobinding(self.io)

    def times(self, repeats: int = REPEATS, warmup: int = WARMUP) -> dict:
        for _ in range(warmup):
            self()
        ts = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            self()
            ts.append(time.perf_counter() - t0)
        return _stats(ts)

    def logits_finite(self) -> bool:
        import numpy as np

        out = self.io.get_outputs()[0].numpy()
        return bool(np.isfinite(out.astype(np.float32)).all())


def kernels(torch, step, steps: int = 3) -> dict:
    """The CUDA kernels of ``steps`` steps (torch.profiler: CUPTI sees onnxruntime's kernels too): device
    time per step by family, kernels and copies per step, the largest kernels."""
    from torch.profiler import ProfilerActivity, profile

    step()
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        for _ in range(steps):
            step()
    fam: dict[str, float] = {}
    top, count = [], 0
    for e in p.key_averages():
        t = getattr(e, "device_time_total", None)
        if t is None:
            t = getattr(e, "cuda_time_total", 0)
        if not t or e.key.startswith("cuda"):  # runtime API calls: host side
            continue
        f = "copy" if e.key.lower().startswith("memcpy") or e.key.lower().startswith("memset") else kernel_family(e.key)
        fam[f] = fam.get(f, 0.0) + t / 1e6 / steps
        count += e.count
        top.append((t / 1e6 / steps, e.key[:160], e.count // steps))
    top.sort(reverse=True)
    return {"family_s": fam, "kernels_per_step": count / steps,
            "top": [{"s": t, "name": n, "per_step": c} for t, n, c in top[:12]]}


def measure(out: Path, provider: str = "CUDAExecutionProvider", tiny: bool = False, layers: int = LAYERS,
            models=MODELS, batches=BATCHES, contexts=CONTEXTS, repeats: int = REPEATS) -> dict:
    """Every point of the module docstring, saved to ``out`` after each (a run stopped at its limit keeps
    what it measured)."""
    import onnxruntime as ort

    torch = None
    if provider == "CUDAExecutionProvider":
        try:
            import torch  # noqa: F811  (the kernel profile only; loads the CUDA libraries onnxruntime needs)
        except ImportError:
            torch = None
    device = "cuda" if provider == "CUDAExecutionProvider" else "cpu"
    res = {"what": "benchmarks/make_llm_decode.py graphs run by onnxruntime (benchmarks/ort_cuda.py)",
           "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "onnxruntime": ort.__version__, "available_providers": ort.get_available_providers(),
           "provider": provider, "layers": layers, "tiny": tiny, "repeats": repeats, "warmup": WARMUP,
           "device": torch.cuda.get_device_name(0) if torch is not None and torch.cuda.is_available() else "cpu",
           "smi_before": _smi() if device == "cuda" else {}, "points": []}
    t0 = time.time()

    def save() -> None:
        res["seconds"] = round(time.time() - t0, 1)
        out.write_text(json.dumps(res, indent=1, sort_keys=True) + "\n")

    with tempfile.TemporaryDirectory() as tmp:
        for name in models:
            cfg = config(name, layers, tiny)
            path = graph(cfg, Path(tmp))
            size = write_weights(path)
            so = ort.SessionOptions()
            so.log_severity_level = 3
            t1 = time.time()
            try:
                sess = ort.InferenceSession(str(path), so, providers=list(dict.fromkeys([provider, "CPUExecutionProvider"])))
            except Exception as e:  # noqa: BLE001  (recorded; the next model is tried)
                res["points"].append({"model": name, "error": f"session: {type(e).__name__}: {str(e)[:300]}"})
                save()
                continue
            if sess.get_providers()[0] != provider:  # onnxruntime fell back (the provider did not load)
                res["points"].append({"model": name, "error": f"session: {provider} not used "
                                                              f"({sess.get_providers()})"})
                save()
                continue
            res.setdefault("sessions", {})[name] = {"graph": cfg.name, "weights_bytes": size,
                                                    "providers": sess.get_providers(),
                                                    "load_s": round(time.time() - t1, 1)}
            print(f"{cfg.name}: {size / 1e9:.2f} GB of weights, session {time.time() - t1:.1f} s, "
                  f"{sess.get_providers()}", flush=True)
            for b in batches:
                for c in contexts:
                    pt = {"model": name, "graph": cfg.name, "batch": b, "context": c}
                    try:
                        step = Step(ort, sess, cfg, b, c, device)
                        pt["step"] = step.times(repeats)
                        pt["finite"] = step.logits_finite()
                        if torch is not None and (b, c) in PROFILED:
                            pt["kernels"] = kernels(torch, step)
                        del step
                    except Exception as e:  # noqa: BLE001  (one point's failure is recorded)
                        pt["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:300]}"
                    res["points"].append(pt)
                    s = pt.get("step", {}).get("median_s")
                    print(f"  b={b:>3} ctx={c:>5}: {s and round(s * 1e3, 3)} ms {pt.get('error', '')} "
                          f"[{time.time() - t0:.0f} s]", flush=True)
                    save()
            del sess
    res["smi_after"] = _smi() if device == "cuda" else {}
    save()
    return res


# ---------------------------------------------------------------------------------------------------
# compare (here: onnxperf's predictions beside a measured file)


def predict(path: Path, preset: str, batch: int, context: int, kv_runtime: str) -> tuple[float, dict[str, float],
                                                                                        dict[str, int]]:
    """onnxperf's decode-step time for ``path`` through the command line (``summary --llm --format json``),
    and the roofline's time and bytes per op type."""
    cmd = [sys.executable, "-m", "onnxperf", "summary", str(path), "--llm", "--hw", preset, "--precision", "fp16",
           "--dim", f"batch={batch}", "--context", str(context), "--kv-runtime", kv_runtime, "--format", "json"]
    js = json.loads(subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, check=True).stdout)
    return (js["llm"]["figures"]["decode"]["latency_s"],
            {r["op_type"]: r["time_s"] or 0.0 for r in js["roofline"]["by_op_type"]},
            {r["op_type"]: r["bytes"] or 0 for r in js["roofline"]["by_op_type"]})


#: onnxruntime CUDA kernels by the op they run (the others: see :func:`kernel_op`)
KERNEL_OPS = (("ConcatKernel", "Concat"), ("ExpandKernel", "Expand"), ("Transpose", "Transpose"),
              ("softmax", "Softmax"), ("LayerNorm", "normalization"))


def kernel_op(name: str) -> str:
    """The op a profiled kernel runs: ``MatMul`` for a GEMM (cuBLAS), else by :data:`KERNEL_OPS`, else other."""
    if kernel_family(name) == "gemm":
        return "MatMul"
    return next((op for key, op in KERNEL_OPS if key.lower() in name.lower()), "other")


def predictions(measured: dict, folder: Path, preset: str | None = None) -> list[dict]:
    """Every measured point with onnxperf's prediction of the same graph, the cache as exported (what
    onnxruntime ran) and in place, on ``preset`` (default: the measured device's)."""
    preset = preset or PRESETS[measured["device"]]
    paths: dict[str, Path] = {}
    rows = []
    for m in measured["points"]:
        if "error" in m:
            continue
        if m["model"] not in paths:
            paths[m["model"]] = graph(config(m["model"], measured["layers"], measured["tiny"]), folder)
        p = paths[m["model"]]
        exported, by_op, bytes_by_op = predict(p, preset, m["batch"], m["context"], "exported")
        row = {**m, "preset": preset, "exported_s": exported,
               "in_place_s": predict(p, preset, m["batch"], m["context"], "in-place")[0]}
        if "kernels" in m:
            row["predicted_by_op"], row["bytes_by_op"] = by_op, bytes_by_op
        rows.append(row)
    return rows


def _ms(x: float) -> str:
    return f"{x * 1e3:.2f}"


def by_kernel_op(r: dict) -> dict[str, float]:
    """A profiled point's twelve largest kernels' device time per step, by the op they run (:func:`kernel_op`)."""
    got: dict[str, float] = {}
    for t in r["kernels"]["top"]:
        got[kernel_op(t["name"])] = got.get(kernel_op(t["name"]), 0.0) + t["s"]
    return got


def conclusions(rows: list[dict], prof: list[dict]) -> list[str]:
    """The page's findings, each figure read off the rows (onnxperf imported here: the measuring side of
    this script runs where onnxperf need not be installed)."""
    from onnxperf.hardware import load_spec

    spec = load_spec(rows[0]["preset"])
    roof = float((spec.efficiency or {}).get("default.memory", 1.0)) * spec.memory_bandwidth_bytes_per_s
    out = []
    big = [r for r in prof if r["batch"] == max(p["batch"] for p in prof)]
    rates = []
    for r in big:
        got = by_kernel_op(r)
        rates += [f"{op} {r['bytes_by_op'][op] / got[op] / 1e12:.1f} TB/s ({r['graph']})"
                  for op in ("Concat", "Expand") if got.get(op) and r["bytes_by_op"].get(op)]
    if rates:
        out.append(f"- The ops that move the cache as exported run slower on onnxruntime's CUDA kernels than the "
                   f"preset's kernel model gives a memory-bound kernel ({roof / 1e12:.2f} TB/s: `default.memory` × "
                   f"the data-sheet bandwidth) at batch {big[0]['batch']}, context {big[0]['context']}: "
                   + ", ".join(rates) + ". That is most of the gap at batch 8-32; the GEMMs are within "
                   + _spread([by_kernel_op(r).get("MatMul", 0.0) / r["predicted_by_op"]["MatMul"] for r in prof
                              if r["predicted_by_op"].get("MatMul")]) + " of their prediction.")
    one = [r for r in prof if r["batch"] == 1]
    if one:
        share = ", ".join(f"{sum(r['kernels']['family_s'].values()) / r['step']['median_s']:.0%} "
                          f"({r['graph']}, {r['kernels']['kernels_per_step']:.0f} kernels)" for r in one)
        out.append("- At batch 1 the kernels fill only part of a step (" + share + "): onnxruntime launches "
                   "every node's kernels from the host, unfused and without a captured CUDA graph, and the "
                   f"launches outlast the GPU's work; the kernel model charges each fused kernel a "
                   f"{float((spec.efficiency or {}).get('overhead_s', 0)) * 1e6:g} µs launch (`overhead_s`), "
                   "a runtime that fuses and replays a graph. The same holds for `onnxperf validate` on this "
                   "provider at small batch (the table below: host-bound runs).")
    out.append("- onnxruntime's profiler times each node's launch on the host on this provider (its CUDA kernels "
               "run asynchronously and the published builds have no CUDA profiling): `validate` says so and "
               "calls a run host-bound when the launches take 70% of its latency or more.")
    return out


def _spread(xs: list[float]) -> str:
    return f"{min(xs):.2f}-{max(xs):.2f}×" if xs else "-"


def _band(xs: list[float]) -> str:
    xs = sorted(xs)
    within = sum(1 for x in xs if 1 / 1.2 <= x <= 1.2) / len(xs)
    return (f"median {statistics.median(xs):.2f} ({xs[0]:.2f}-{xs[-1]:.2f}) on {len(xs)} points, "
            f"within 1.2× {within:.0%}")


def report(measured: dict, rows: list[dict], repeat: dict | None = None, validate: dict | None = None) -> str:
    """The page ``compare`` writes (``repeat``: the same points measured earlier, a column; ``validate``:
    the validate runs' table)."""
    again = {(p["model"], p["batch"], p["context"]): p["step"]["median_s"]
             for p in (repeat or {}).get("points", ()) if "step" in p}
    s = measured.get("sessions", {})
    lines = [
        "# Decode steps run by onnxruntime's CUDA provider beside onnxperf (issue 29)",
        "",
        f"`python benchmarks/ort_cuda.py measure` on one {measured['device']} (onnxruntime "
        f"{measured['onnxruntime']}, {measured['provider']}, driver "
        f"{measured.get('smi_before', {}).get('driver_version', '?')}), {measured['date']}; "
        "`python benchmarks/ort_cuda.py compare` wrote this page from "
        f"`benchmarks/measured/{MEASURED.name}`.",
        "",
        f"The graphs are `benchmarks/make_llm_decode.py`'s (as the torch exporters write a Llama decoder with a "
        f"KV cache) at the checkpoints' real widths with {measured['layers']} layers, fp16, random weights; "
        "onnxruntime with its default optimizations, every input and output bound on the GPU, one new token "
        f"after context − 1 cached. Each time is the median of {measured['repeats']} runs (wall clock around "
        f"`run_with_iobinding`) after {measured['warmup']} warm-ups. Sessions: "
        + "; ".join(f"{v['graph']} {v['weights_bytes'] / 1e9:.2f} GB of weights, providers "
                    f"{', '.join(v['providers'])}" for v in s.values()) + ".",
        "",
        f"onnxperf: `summary --llm --hw {rows[0]['preset'] if rows else '?'} --precision fp16 --dim batch=B "
        "--context C` on the same graph, `--kv-runtime exported` (the cache as the graph moves it: what "
        "onnxruntime ran) and `in-place` (a serving runtime's cache, for scale). ratio = measured / predicted "
        "(above 1: onnxperf optimistic).",
        "",
        "| model | batch | context | measured ms (P10-P90) | earlier run ms | onnxperf as exported ms "
        "| measured / onnxperf | onnxperf in place ms |",
        "|---|---:|---:|---|---:|---:|---:|---:|",
    ]
    ratios: dict[str, list[float]] = {"batch 1": [], "batch 8-32": []}
    for r in rows:
        st = r["step"]
        ratio = st["median_s"] / r["exported_s"]
        ratios["batch 1" if r["batch"] == 1 else "batch 8-32"].append(ratio)
        lines.append(f"| {r['graph']} | {r['batch']} | {r['context']} | {_ms(st['median_s'])} "
                     f"({_ms(st['p10_s'])}-{_ms(st['p90_s'])}) | "
                     f"{_ms(again[k]) if (k := (r['model'], r['batch'], r['context'])) in again else '-'} "
                     f"| {_ms(r['exported_s'])} | {ratio:.2f} "
                     f"| {_ms(r['in_place_s'])} |")
    lines += ["", "Summary (measured / onnxperf, the cache as exported):", ""]
    lines += [f"- decode, {k}: {_band(v)}" for k, v in ratios.items() if v]
    errors = [p for p in measured["points"] if "error" in p]
    if errors:
        lines += ["", "Points that failed: " + "; ".join(
            f"{p['model']} {p.get('batch', '')} {p.get('context', '')}: {p['error']}" for p in errors)]
    prof = [r for r in rows if "kernels" in r]
    if prof:
        lines += ["", "Where a step's time goes (torch.profiler over onnxruntime's kernels, device time per step; "
                  "gemm = cuBLAS, attention = fused attention kernels, copy = memcpy/memset, other = the rest; "
                  "host = wall time − Σ kernels: launch time not hidden behind the GPU's work):", "",
                  "| model | batch | context | kernels per step | gemm ms | attention ms | copy ms | other ms "
                  "| Σ kernels / wall time |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for r in prof:
            f = r["kernels"]["family_s"]
            lines.append(f"| {r['graph']} | {r['batch']} | {r['context']} | {r['kernels']['kernels_per_step']:.0f} | "
                         + " | ".join(_ms(f.get(k, 0.0)) for k in ("gemm", "attention", "copy", "other"))
                         + f" | {sum(f.values()) / r['step']['median_s']:.2f} |")
        lines += ["", "The ops behind the largest kernels, measured (Σ of the twelve largest kernels' device time "
                  "by the op they run) beside onnxperf's time for that op type (the cache as exported), and the "
                  "bandwidth the measured kernels attained on onnxperf's bytes for the op:", "",
                  "| model | batch | context | op | measured ms | onnxperf ms | onnxperf GB | measured TB/s |",
                  "|---|---:|---:|---|---:|---:|---:|---:|"]
        for r in prof:
            got = by_kernel_op(r)
            for op in ("MatMul", "Concat", "Expand", "Transpose"):
                if op in got or r["predicted_by_op"].get(op, 0.0) > 0.05 * r["exported_s"]:
                    nbytes = r["bytes_by_op"].get(op, 0)
                    rate = f"{nbytes / got[op] / 1e12:.2f}" if got.get(op) else "-"
                    lines.append(f"| {r['graph']} | {r['batch']} | {r['context']} | {op} | {_ms(got.get(op, 0.0))} "
                                 f"| {_ms(r['predicted_by_op'].get(op, 0.0))} | {nbytes / 1e9:.1f} | {rate} |")
        lines += ["", "What it says:", ""] + conclusions(rows, prof)
        lines += ["", "The largest kernels:", ""]
        for r in prof:
            top = "; ".join(f"{t['name'][:70]} ×{t['per_step']} {_ms(t['s'])} ms" for t in r["kernels"]["top"][:5])
            lines.append(f"- {r['graph']} batch {r['batch']} context {r['context']}: {top}")
    if validate:
        lines += ["", "`onnxperf validate` on the same machine and provider (`benchmarks/measured/"
                  f"{VALIDATE.name}`: the fields of each run's JSON; measured = mean of the timed runs, host Σ = the "
                  "profiled session's per-node times summed, onnxruntime's profiler timing each node's launch on the "
                  "host):", "",
                  "| command | nodes timed | measured ms | host Σ ms | onnxperf ms | end-to-end error | per-node median "
                  "error |", "|---|---:|---:|---:|---:|---:|---:|"]
        for v in validate["runs"]:
            e = v["error_plain"]
            lines.append(f"| `{v['command']}` | {v['nodes_timed']} | {_ms(v['measured_latency']['mean_s'])} "
                         f"| {_ms(v['measured_kernels_s'])} | {_ms(v['predicted_latency_s'])} "
                         f"| {e['end_to_end_error']:+.0%} | {e['median_ape']:.0%} |")
    return "\n".join(lines) + "\n"


def load(path: Path) -> dict | None:
    return json.loads(path.read_text()) if path.exists() else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("measure")
    m.add_argument("--out", required=True)
    m.add_argument("--provider", default="CUDAExecutionProvider")
    m.add_argument("--tiny", action="store_true", help="toy widths (a dry run of the script)")
    m.add_argument("--layers", type=int, default=LAYERS)
    m.add_argument("--repeats", type=int, default=REPEATS)
    m.add_argument("--models", nargs="+", default=list(MODELS))
    m.add_argument("--batches", type=int, nargs="+", default=list(BATCHES))
    m.add_argument("--contexts", type=int, nargs="+", default=list(CONTEXTS))
    c = sub.add_parser("compare")
    c.add_argument("measured", nargs="?", default=str(MEASURED))
    c.add_argument("--out", default=None)
    c.add_argument("--hw", default=None, help="the preset to predict on (default: the measured device's)")
    a = ap.parse_args(argv)
    if a.cmd == "measure":
        measure(Path(a.out), a.provider, a.tiny, a.layers, a.models, a.batches, a.contexts, a.repeats)
        return 0
    measured = json.loads(Path(a.measured).read_text())
    with tempfile.TemporaryDirectory() as tmp:
        text = report(measured, predictions(measured, Path(tmp), a.hw), load(REPEAT), load(VALIDATE))
    if a.out:
        Path(a.out).write_text(text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
