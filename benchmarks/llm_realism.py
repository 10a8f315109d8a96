"""LLM realism without a GPU: onnxperf's decoder-step predictions beside published GPU measurements
(issue 29, items 2 and 3).

    python benchmarks/llm_realism.py [--out benchmarks/results/llm_realism.md] [--quick]
    python benchmarks/llm_realism.py --fit-low [--write]   # the fp8 / fp4 GEMM share, written into the presets

Published figures: ``benchmarks/published/llm_inference.json`` (every entry with its source). Graphs:
``benchmarks/make_llm_decode.py`` builds each checkpoint's decode step (a KV cache as the torch
exporters write it, weights referenced, never written) into a temporary folder at run time. Every
prediction is the device's preset as shipped (its ``[efficiency]``: the GPU kernel model of
:mod:`onnxperf.predict.gpu_kernels`), ``--kv-runtime in-place`` (a serving runtime: TensorRT-LLM, vLLM,
and llama.cpp, whose cache is a preallocated buffer written in place) and ``--precision`` of the
published run (fp16 and bf16 -> fp16; FP8 -> fp8 where the preset has an fp8 peak; FP4 -> fp4 where
it has an fp4 peak).

What is predicted for each row (P = input length, O = output length, B = batch, dec(B, C) = the
decode step's latency at context C, pre(B, P) = the one-pass prefill's):

- static batching (TensorRT-LLM gptSessionBenchmark): output tokens/s =
  B·O / (pre(B, P) + Σ_{k=1..O−1} dec(B, P + k));
- in-flight batching at an unbounded request rate (trtllm-bench): the batch is not published; the
  best static-batching throughput over the batches of :data:`BATCH_GRID` up to the largest whose KV
  cache at P + O tokens fits :data:`KV_FRACTION` of the memory left after the weights (TensorRT-LLM's
  ``kv_cache_free_gpu_mem_fraction``), at most :data:`MAX_BATCH` (the two largest that fit are tried);
- time to first token (idle, batch 1 as the tables say) = pre(B, P);
- llama.cpp tg N (llama-bench: N tokens generated one by one from an empty cache) = N / Σ_{c=1..N}
  dec(1, c); pp N = N / pre(1, N); main's generation (Dec 2023 table: prompt of about 500 tokens,
  1,024 generated) = 1024 / Σ_{c=501..1524} dec(1, c), its prompt evaluation 500 / pre(1, 500);
- inter-token latency while serving = dec(N, P + O/2) with N the mean number of requests in flight by
  Little's law from the same published row: N = (output tokens/s / O)·(TTFT + ITL·(O − 1)); TTFT while
  serving = pre(1, P) (queueing is not modelled: these rows are shown, not held to a target);
- vLLM at concurrency 8 (~20k in, ~2k out): tokens/s as static batching at B = 8, ITL = dec(8, 21000),
  TTFT = pre(1, 20000).

Σ over contexts: dec is evaluated at :func:`sample_contexts` (the ends of the range and 1 or 3 points
between: 3 or 5 analyses) and taken as linear between them (decode time is piecewise linear in the
context in this model); the full run (not ``--quick``) measures the error on one row against every context.

ratio = predicted / published throughput (above 1: onnxperf is optimistic); for latencies published /
predicted (the same sense). Statistics per device generation and metric; the same with
``--kv-runtime exported`` for contrast; the share of the fp8 / fp4 peak a GEMM attains, fitted per GPU
class on half of the TensorRT-LLM rows at that precision and applied to the presets (``matmul.fp8.compute``:
:func:`fit_low`); then a fit proposal of the kernel model's constants per runtime
and generation on half of the rows, with the other half held out (not applied to any preset).

Speed: a point (model, precision, batch, past, new) is analysed once (its costs and GPU kernel plan do
not depend on the device); per device the kernel model's time is then Σ_node max(c/e_c, m/e_m) +
launches·o over arrays (:class:`Arrays`), checked against ``onnxperf.insights.llm.figures.figures``.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import inspect
import itertools
import json
import math
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from onnxperf.base.errors import OptionError  # noqa: E402
from onnxperf.cost.request import Request  # noqa: E402
from onnxperf.graph.loader import load  # noqa: E402
from onnxperf.hardware.files import load_preset, load_spec  # noqa: E402
from onnxperf.hardware.runtimes import profiles  # noqa: E402
from onnxperf.insights.llm.figures import figures  # noqa: E402
from onnxperf.insights.llm.recognize import recognize  # noqa: E402
from onnxperf.predict import precision as P  # noqa: E402
from onnxperf.predict.gpu_kernels import kernel_plan  # noqa: E402
from onnxperf.predict.reuse import level_bytes_rw_each  # noqa: E402
from onnxperf.predict.roofline import (GEMV_ROWS, charged_bytes, half_rate_outputs, int_dtype,  # noqa: E402
                                       integer_named, low_precision, roofline)
from onnxperf.predict.serving import KV_MOVES, in_place  # noqa: E402

_spec = importlib.util.spec_from_file_location("onnxperf_bench_make_llm_decode", ROOT / "benchmarks" / "make_llm_decode.py")
G = sys.modules[_spec.name] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(G)
_spec = importlib.util.spec_from_file_location("onnxperf_bench_gpu_realism", ROOT / "benchmarks" / "gpu_realism.py")
GR = sys.modules[_spec.name] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(GR)

PUBLISHED = ROOT / "benchmarks" / "published" / "llm_inference.json"
OUT = ROOT / "benchmarks" / "results" / "llm_realism.md"
IN_PLACE, EXPORTED = "in-place", "exported"

#: published device -> (preset, why) where the device is not itself a preset id
DEVICE_MAP = {
    "a100": ("a100-80gb", "TensorRT-LLM's tables say 'A100' only: the 80GB SXM assumed"),
    "a100-80gb-unspecified": ("a100-80gb", "form factor not stated: the SXM assumed"),
    "h100": ("h100-sxm", "variant not stated: the SXM assumed"),
    "gh200-480gb": ("gh200-96gb", "the GH200 480GB superchip's GPU has 96 GB of HBM3 (the rest is the Grace CPU's LPDDR5X)"),
}
#: preset -> GPU generation
GENERATION = {
    "t4": "Turing", "a100-80gb": "Ampere", "a100-40gb": "Ampere", "a30": "Ampere", "a40": "Ampere", "a10": "Ampere",
    "rtx3090": "Ampere", "jetson-orin": "Ampere", "l40s": "Ada", "l4": "Ada", "rtx4090": "Ada", "rtx6000-ada": "Ada",
    "h100-sxm": "Hopper", "h100-pcie": "Hopper", "h100-nvl": "Hopper", "h200": "Hopper", "gh200-96gb": "Hopper",
    "gh200-144gb": "Hopper", "h20": "Hopper", "b200": "Blackwell", "rtx5090": "Blackwell", "mi300x": "CDNA3",
}
GENERATIONS = ("Turing", "Ampere", "Ada", "Hopper", "Blackwell", "CDNA3")
#: published precision labels that are weight-only quantizations (no onnxperf precision compared yet)
WEIGHT_ONLY = ("q4_0", "q4_k_m", "q8_0", "int4", "int8", "awq", "w4a16", "w8a16", "gptq")
#: metrics as the statistics group them; the issue's targets
CATEGORIES = ("decode, batch 1", "prefill, batch 1", "batched throughput", "TTFT (idle)", "ITL (serving)",
              "TTFT (serving)")
TARGETS = {"decode, batch 1": 1.2, "batched throughput": 1.5, "TTFT (idle)": 1.5}
#: categories the fit uses (serving rows carry queueing the model does not have)
FIT_CATEGORIES = ("decode, batch 1", "prefill, batch 1", "batched throughput", "TTFT (idle)")


def _length(n) -> str:
    """A length bucket: ≤ 512, ≤ 2048, ≤ 8192, more."""
    if n is None:
        return "?"
    return "≤ 512" if n <= 512 else "513-2048" if n <= 2048 else "2049-8192" if n <= 8192 else "> 8192"


#: (metric, what, key) of the breakdowns the report shows
BREAKDOWNS = (
    ("decode, batch 1", "device", lambda c: c.preset),
    ("prefill, batch 1", "prompt length", lambda c: _length(c.entry.get("input_len") or MAIN_PROMPT)),
    ("prefill, batch 1", "device", lambda c: c.preset),
    ("batched throughput", "model (TensorRT-LLM static batching)",
     lambda c: c.entry["model"] if c.entry["scenario"] == "static_batch_throughput" else "(other scenarios)"),
    ("batched throughput", "scenario, precision", lambda c: f"{c.entry['scenario'].split('_')[0]}, {c.precision}"),
    ("batched throughput", "input length", lambda c: _length(c.entry.get("input_len") or 20000)),
    ("batched throughput", "output length", lambda c: _length(c.entry.get("output_len") or 2000)),
    ("TTFT (idle)", "input length, generation", lambda c: f"{c.entry['input_len']}, {c.generation}"),
    ("ITL (serving)", "request rate (QPS)", lambda c: str(c.entry.get("request_rate_qps") or "concurrency 8")),
)
BATCH_GRID = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048)
MAX_BATCH = 2048
KV_FRACTION = 0.9
#: llama.cpp main (Dec 2023 table): "around 500 tokens" of prompt, -n 1024
MAIN_PROMPT, MAIN_GEN = 500, 1024
#: the fit's grid (step sizes said in the report)
GRID_MM = tuple(round(x, 3) for x in np.arange(0.30, 1.0001, 0.05))
GRID_MEM = tuple(round(x, 3) for x in np.arange(0.50, 1.0001, 0.025))
GRID_O = tuple(x * 1e-6 for x in (0.25, 0.5, 1, 1.5, 2, 3, 4, 5, 6, 8, 10, 12, 16))  # a spec needs o > 0
FIT_KEYS = ("matmul.compute", "default.memory", "overhead_s")
#: the fits, one per runtime and generation: the presets' constants describe a GPU under a tuned runtime
#: (TensorRT, as benchmarks/gpu_realism.py fitted them); llama.cpp's own kernels attain less, fitted apart
FIT_GROUPS = {"TensorRT-LLM": ("tensorrt-llm",), "llama.cpp": ("llama.cpp",)}
#: the low-precision GEMM share (``matmul.fp8.compute``, ``matmul.fp4.compute``): fitted per GPU class of
#: ``benchmarks/gpu_realism.py`` on the fit half of these runtimes' rows at that precision, every other
#: constant as shipped; written into the class's presets (``--fit-low --write``) where the fit half has at
#: least LOW_MIN_ROWS rows
LOW_RUNTIMES = ("tensorrt-llm",)
GRID_LOW = tuple(round(x, 3) for x in np.arange(0.30, 1.0001, 0.025))
LOW_MIN_ROWS = 10
#: published runtime -> the runtime profile its rows are predicted under (``--hw ID:PROFILE``,
#: :mod:`onnxperf.hardware.runtimes`); the others run on the presets as shipped (TensorRT-class kernels)
RUNTIME_PROFILE = {"llama.cpp": "llama.cpp"}
#: the profile's fit (``--fit-runtime``): its rows, and the grid of its share of the bandwidth and per-SM rate
PROFILE_CATEGORY = "decode, batch 1"
GRID_SHARE = tuple(round(x, 3) for x in np.arange(0.50, 1.0001, 0.025))
GRID_SM = tuple(round(x, 2) * 1e9 for x in np.arange(4.0, 20.001, 0.25))
RUNTIMES_FILE = ROOT / "onnxperf" / "hardware" / "runtimes.toml"


# ---------------------------------------------------------------------------------------------- rows

@dataclass(frozen=True)
class Candidate:
    """A predicted time T = Σ weight·latency(point) and what the published figure is over it:
    ``tokens`` / T for a throughput (tokens/s), T itself for a latency (tokens = None)."""

    tokens: float | None
    terms: tuple[tuple[tuple, float], ...]
    label: str = ""


@dataclass(frozen=True)
class Case:
    """A published row beside its prediction recipe."""

    entry: dict
    category: str
    config: str
    preset: str
    mapped: str
    precision: str
    kv_precision: str | None
    candidates: tuple[Candidate, ...]
    how: str

    @property
    def device(self) -> str:
        """The preset without the runtime profile ``preset`` may carry (``a100-80gb:llama.cpp``)."""
        return self.preset.split(":")[0]

    @property
    def generation(self) -> str:
        return GENERATION.get(self.device, "other")

    @property
    def published(self) -> float:
        return float(self.entry["value"])

    @property
    def latency(self) -> bool:
        return self.candidates[0].tokens is None


def sample_contexts(lo: int, hi: int) -> list[int]:
    """Contexts at which dec is evaluated for Σ_{c=lo..hi}: every one when ≤ 3, else the ends and
    1 (≤ 600 contexts) or 3 points evenly between."""
    if hi - lo + 1 <= 3:
        return list(range(lo, hi + 1))
    k = 2 if hi - lo + 1 <= 600 else 4
    return sorted({lo + round(i * (hi - lo) / k) for i in range(k + 1)})


def sum_weights(lo: int, hi: int, xs: list[int] | None = None) -> list[tuple[int, float]]:
    """Weights w_j with Σ_{c=lo..hi} f(c) ≈ Σ_j w_j f(x_j), f linear between the samples x_j
    (exact for a piecewise-linear f with knots at the samples)."""
    xs = xs if xs is not None else sample_contexts(lo, hi)
    w = {x: 0.0 for x in xs}
    for x0, x1 in zip(xs, xs[1:]):
        n = x1 - x0  # contexts x0 .. x1-1 on the chord
        w[x0] += n - (n - 1) / 2
        w[x1] += (n - 1) / 2
    w[xs[-1]] += 1.0
    return sorted(w.items())


def point(config: str, precision: str, kvp: str | None, batch: int, past: int, new: int) -> tuple:
    return (config, precision, kvp, batch, past, new)


def static_terms(config, precision, kvp, batch, prompt, out) -> tuple[tuple[tuple, float], ...]:
    """pre(B, P) + Σ_{k=1..O−1} dec(B, P + k) as weighted points."""
    terms = [(point(config, precision, kvp, batch, 0, prompt), 1.0)]
    if out > 1:
        terms += [(point(config, precision, kvp, batch, c - 1, 1), w) for c, w in sum_weights(prompt + 1, prompt + out - 1)]
    return tuple(terms)


def decode_sum_terms(config, precision, kvp, lo, hi) -> tuple[tuple[tuple, float], ...]:
    return tuple((point(config, precision, kvp, 1, c - 1, 1), w) for c, w in sum_weights(lo, hi))


def precision_of(e: dict, spec) -> tuple[str | None, str | None, str]:
    """(onnxperf precision, KV-cache precision, why not) for a published row."""
    p = e["precision"] or {}
    label = str(p.get("label") or "").lower()
    weights = str(p.get("weights") or p.get("weight_data_types") or "").lower()
    if any(w in label or w in weights for w in WEIGHT_ONLY):
        return None, None, "not comparable yet (weight-only precision)"
    peaks = spec.peak_flops_per_s
    if e["runtime_class"] == "vllm":  # weights not stated: bf16 assumed; the cache as the label says
        kv = str(p.get("kv_cache") or "").lower()
        if kv == "fp8":
            if "kv_precision" not in inspect.signature(figures).parameters:
                return None, None, "KV-cache-only precision (no --kv-precision in this onnxperf)"
            return "fp16", "fp8", ""
        return "fp16", None, ""
    if label in ("f16", "fp16", "bf16") or weights in ("f16", "fp16", "bf16"):
        return "fp16", None, ""
    if label == "fp8" or weights == "fp8":
        return ("fp8", None, "") if "fp8" in peaks else (None, None, "FP8 on a preset without an fp8 peak")
    if label == "fp4" or weights.startswith("fp4") or weights.startswith("nvfp4"):
        if "fp4" not in P.PRECISIONS:
            return None, None, "FP4 (no fp4 precision in this onnxperf)"
        return ("fp4", None, "") if "fp4" in peaks else (None, None, "FP4 on a preset without an fp4 peak")
    return None, None, f"precision not stated or not mapped ({p.get('label')!r})"


def serving_siblings(entries: list[dict]) -> dict[tuple, dict[str, float]]:
    """(url, quoted row) -> {metric: value}: the figures one serving table row gives together."""
    out: dict[tuple, dict[str, float]] = {}
    for e in entries:
        if e["runtime_class"] in ("tensorrt-llm-serving", "vllm"):
            out.setdefault((e["source"].get("url"), e["source"].get("quoted")), {})[e["metric"]] = float(e["value"])
    return out


def plan(e: dict, siblings) -> Case | str:
    """The prediction recipe of a published row, or why it is not compared."""
    cfg = G.ALIASES.get(e["model"])
    if cfg is None:
        return "no graph (not a Llama-shaped checkpoint: GPT-J, Falcon, Mixtral...)"
    if (e.get("device_count") or 1) > 1:
        return "multi-GPU (tensor / pipeline parallel is not modelled yet)"
    if e["runtime_class"].startswith("mlperf"):
        return "MLPerf: per-sample lengths and the harness's batch are not in the summary"
    preset, why = DEVICE_MAP.get(e["device"], (e["device"], ""))
    try:
        spec = load_preset(preset)
    except OptionError:
        return "no preset for the device"
    prec, kvp, no = precision_of(e, spec)
    if prec is None:
        return no
    c = G.CONFIGS[cfg]
    sc, metric = e["scenario"], e["metric"]
    B, I, O = e.get("batch"), e.get("input_len"), e.get("output_len")
    tok = metric in ("output_tokens_per_s", "output_tokens_per_s_per_gpu", "prompt_tokens_per_s")

    profile = RUNTIME_PROFILE.get(e["runtime_class"])
    on = f"{preset}:{profile}" if profile else preset

    def case(category: str, cands: list[Candidate], how: str) -> Case:
        return Case(e, category, cfg, on, why, prec, kvp, tuple(cands), how)

    if sc == "static_batch_throughput" and tok:
        return case("batched throughput", [Candidate(B * O, static_terms(cfg, prec, kvp, B, I, O))],
                    f"static B={B}, {I}/{O}")
    if sc == "inflight_batching_max_throughput" and tok:
        bits = {"fp16": 16, "fp8": 8, "fp4": 4.5}[prec]
        weights = c.params * bits / 8
        free = KV_FRACTION * (spec.memory_capacity_bytes - weights)
        per_seq = c.kv_bytes_per_token * bits / 16 * (I + O)
        fits = [b for b in BATCH_GRID if b <= MAX_BATCH and b * per_seq <= free]
        if not fits:
            return "the weights leave no memory for a KV cache"
        cands = [Candidate(b * O, static_terms(cfg, prec, kvp, b, I, O), f"B={b}") for b in fits[-2:]]
        return case("batched throughput", cands, f"in-flight, best of B={'/'.join(str(b) for b in fits[-2:])}, {I}/{O}")
    if sc == "first_token_latency_batch1" and metric == "ttft_s":
        return case("TTFT (idle)", [Candidate(None, ((point(cfg, prec, kvp, B or 1, 0, I), 1.0),))],
                    f"pre({B or 1}, {I})")
    if sc == "llama_bench_tg" and tok:
        return case("decode, batch 1", [Candidate(O, decode_sum_terms(cfg, prec, kvp, 1, O))], f"tg{O}")
    if sc == "llama_bench_pp" and tok:
        return case("prefill, batch 1", [Candidate(I, ((point(cfg, prec, kvp, 1, 0, I), 1.0),))], f"pp{I}")
    if sc == "llama_cpp_main_generate" and metric == "output_tokens_per_s":
        return case("decode, batch 1", [Candidate(MAIN_GEN, decode_sum_terms(cfg, prec, kvp, MAIN_PROMPT + 1,
                                                                             MAIN_PROMPT + MAIN_GEN))],
                    f"main: {MAIN_GEN} after ~{MAIN_PROMPT}")
    if sc == "llama_cpp_main_generate" and metric == "prompt_tokens_per_s":
        return case("prefill, batch 1", [Candidate(MAIN_PROMPT, ((point(cfg, prec, kvp, 1, 0, MAIN_PROMPT), 1.0),))],
                    f"main: prompt ~{MAIN_PROMPT}")
    if sc == "online_serving":
        sib = siblings.get((e["source"].get("url"), e["source"].get("quoted")), {})
        if metric == "output_tokens_per_s":
            return "serving throughput is set by the offered request rate, not by the GPU alone"
        if metric == "ttft_s":
            return case("TTFT (serving)", [Candidate(None, ((point(cfg, prec, kvp, 1, 0, I), 1.0),))],
                        f"pre(1, {I}); QPS {e.get('request_rate_qps')}")
        if metric == "itl_s":
            if not {"output_tokens_per_s", "ttft_s", "itl_s"} <= set(sib):
                return "serving row without its throughput and TTFT (Little's law needs them)"
            n = sib["output_tokens_per_s"] / O * (sib["ttft_s"] + sib["itl_s"] * (O - 1))
            b = max(1, round(n))
            return case("ITL (serving)", [Candidate(None, ((point(cfg, prec, kvp, b, I + O // 2 - 1, 1), 1.0),))],
                        f"dec({b}, {I + O // 2}); QPS {e.get('request_rate_qps')}, {n:.1f} in flight")
    if sc == "serving_fixed_concurrency":  # vLLM's post: concurrency 8, ~20k in, ~2k out
        b, i, o = 8, 20000, 2000
        if metric == "output_tokens_per_s":
            return case("batched throughput", [Candidate(b * o, static_terms(cfg, prec, kvp, b, i, o))],
                        f"static B={b}, {i}/{o} (concurrency 8)")
        if metric == "itl_s":
            return case("ITL (serving)", [Candidate(None, ((point(cfg, prec, kvp, b, i + o // 2 - 1, 1), 1.0),))],
                        f"dec({b}, {i + o // 2})")
        if metric == "ttft_s":
            return case("TTFT (serving)", [Candidate(None, ((point(cfg, prec, kvp, 1, 0, i), 1.0),))], f"pre(1, {i})")
    return f"no recipe for {sc} / {metric}"


# ------------------------------------------------------------------------------------------ engine

@dataclass(frozen=True)
class Arrays:
    """A point's kernel-model inputs, device-independent, per member of each distinct kernel: its FLOPs,
    integer ops and their dtype, its bytes under the kernel plan (what its kernel reads for it and what it
    writes that leaves the kernel: :func:`onnxperf.predict.roofline.charged_bytes`), whether it is a matrix
    product, whether it starts the kernel, and the output elements its fill reads (inf: no fill); ``kernel``
    the index of its kernel. Kernels alike in all of their members (the same kernel of every layer) are one,
    with its ``count``. ``written``: of ``nbytes``, those it writes; ``hits``: per L2 capacity of the presets
    (:data:`L2_CAPACITIES`), the shares of each member's reads and of its writes the reuse model serves from
    that L2 for a GPU (the kernel model charges a member's reads and writes in those proportions)."""

    count: np.ndarray
    kernel: np.ndarray
    flops: np.ndarray
    int_ops: np.ndarray
    int_dtypes: tuple[str, ...]
    nbytes: np.ndarray
    matmul: np.ndarray
    launch: np.ndarray
    outputs: np.ndarray
    written: np.ndarray
    hits: dict


@dataclass(frozen=True)
class Fast:
    """A point on one device, per distinct kernel: its GEMM members' arithmetic A (over their fill), the
    other members' C, the members' memory time M, all at efficiency 1, and how many kernels are alike; so
    that the kernel model's Σ_K max(A / e_mm + C / e_c, M / e_m) (:func:`onnxperf.predict.roofline._as_kernels`)
    is one broadcast over a grid of constants; and the kernel launches."""

    gemm: np.ndarray
    other: np.ndarray
    memory: np.ndarray
    count: np.ndarray
    launches: int

    def latency(self, e_mm: float, e_other: float, e_mem: float, o: float) -> float:
        return float(self.latencies(np.array([e_mm]), e_other, np.array([e_mem]), np.array([o]))[0, 0, 0])

    def latencies(self, e_mm: np.ndarray, e_other: float, e_mem: np.ndarray, o: np.ndarray) -> np.ndarray:
        """Latency over the grid [e_mm, e_mem, o]."""
        c = self.gemm[None, :] / np.asarray(e_mm, dtype=float)[:, None] + self.other[None, :] / e_other
        m = self.memory[None, :] / np.asarray(e_mem, dtype=float)[:, None]
        out = (np.maximum(c[:, None, :], m[None, :, :]) * self.count).sum(-1)
        return out[:, :, None] + self.launches * np.asarray(o)[None, None, :]


def kv_names(a, step) -> frozenset[str]:
    """The cache tensors of an analysis: inputs, presents and their copies (as the LLM figures find them)."""
    kv = {c.name for c in step.caches} | {c.present for c in step.caches if c.present}
    for n in a.main_nodes:
        if n.op_type in KV_MOVES and not n.domain and n.inputs and n.inputs[0] is not None and n.inputs[0].name in kv:
            kv.update(o.name for o in n.outputs if o is not None)
    return frozenset(kv)


def l2_of(spec) -> tuple[int, float] | None:
    """(capacity, bandwidth) of a preset's L2 level, None where it ships none."""
    lv = tuple(getattr(spec, "memory_levels", ()) or ())
    if len(lv) > 1:
        raise RuntimeError(f"{spec.id}: more than one memory level; the fast path models one (an L2)")
    return (lv[0].capacity_bytes, lv[0].bandwidth_bytes_per_s) if lv else None


#: the L2 capacities of the GPU presets (every one a point's Arrays carry shares for)
L2_CAPACITIES = tuple(sorted({l2_of(load_preset(p))[0] for p in GENERATION if l2_of(load_preset(p))}))


class Engine:
    """Graphs, analyses and device evaluations, cached (see the module docstring's Speed)."""

    def __init__(self, folder: Path, kv_runtime: str):
        self.folder, self.kv_runtime = folder, kv_runtime
        self._graphs: dict[str, tuple] = {}
        self._arrays: dict[tuple, Arrays] = {}
        self._fast: dict[tuple, Fast] = {}
        self._specs: dict[str, object] = {}
        self.analyses = 0
        self.seconds = 0.0

    def graph(self, config: str):
        g = self._graphs.get(config)
        if g is None:
            path = self.folder / f"{config}.onnx"
            if not path.exists():
                G.write(G.CONFIGS[config], path)
            loaded = load(str(path))
            g = self._graphs[config] = (loaded, recognize(loaded), path)
        return g

    def spec(self, preset: str):
        s = self._specs.get(preset)
        if s is None:
            s = self._specs[preset] = load_spec(preset)
        return s

    def analysis(self, pt: tuple):
        config, prec, kvp, b, past, new = pt
        loaded, step, _ = self.graph(config)
        a = P.priced(Request(loaded, precision=prec).at(**step.bindings(b, past, new)), empty_dims=True)
        if kvp is not None:
            a = P.kv_what_if(a, kv_names(a, step), kvp)
        return in_place(a, tuple(c.name for c in step.caches)) if self.kv_runtime == IN_PLACE else a

    def arrays(self, pt: tuple) -> Arrays:
        got = self._arrays.get(pt)
        if got is not None:
            return got
        t0 = time.perf_counter()
        a = self.analysis(pt)
        unit = replace(self.spec("h100-sxm"), efficiency={"fusion.gpu": 1, "overhead_s": 1.0}, efficiency_sources={},
                       memory_levels=())
        r = roofline(a, unit, P.get(pt[1]))
        plan = kernel_plan(a)
        charged = charged_bytes(a.main_nodes, plan)
        lbs = level_bytes_rw_each(a, tuple((cap,) for cap in L2_CAPACITIES), gpu=True)  # one replay
        share = lambda v: v[0] / sum(v) if sum(v) else 0.0  # noqa: E731
        members: dict[str, list[tuple]] = {}
        for n, row in zip(a.main_nodes, r.nodes):
            if row.time_s is None:
                raise RuntimeError(f"{pt}: node {n.name} ({n.op_type}) has no time: the comparison needs every node")
            if n.key not in charged:
                continue  # no kernel: a view, folded
            launch = n.key in plan.launches
            shares = tuple((share(rd), share(wr)) for rd, wr in (lb.get(n.key, ((0.0, 0.0), (0.0, 0.0))) for lb in lbs))
            reads, written = charged[n.key]
            members.setdefault(plan.kernel.get(n.key, n.key), []).append(
                (float(n.flops or 0), float(n.int_ops or 0), int_dtype(n.inputs), float(reads + written),
                 n.family == "matmul", launch, _fill_elements(n) if launch else math.inf, shares, float(written)))
        alike: dict[tuple, int] = {}
        for ms in members.values():
            alike[tuple(ms)] = alike.get(tuple(ms), 0) + 1
        keys = [(i, m) for i, ms in enumerate(alike) for m in ms]
        col = lambda j, dt=float: np.array([k[1][j] for k in keys], dtype=dt)  # noqa: E731
        hits = {cap: (np.array([k[1][7][i][0] for k in keys], float), np.array([k[1][7][i][1] for k in keys], float))
                for i, cap in enumerate(L2_CAPACITIES)}
        got = self._arrays[pt] = Arrays(np.array(list(alike.values()), float), np.array([k[0] for k in keys], np.intp),
                                        col(0), col(1), tuple(k[1][2] for k in keys), col(3), col(4, bool),
                                        col(5, bool), col(6), col(8), hits)
        self.analyses += 1
        self.seconds += time.perf_counter() - t0
        return got

    def fast(self, pt: tuple, preset: str) -> Fast:
        key = (pt, preset)
        got = self._fast.get(key)
        if got is not None:
            return got
        ar, spec = self.arrays(pt), self.spec(preset)
        eff = spec.efficiency
        pf = spec.peak_for(P.get(pt[1]).peak_key)
        pi = np.array([spec.peak_for(d) for d in ar.int_dtypes]) if len(ar.int_dtypes) else np.zeros(0)
        sms, per_sm = float(eff.get("gpu.sms", 0) or 0), float(eff.get("gpu.outputs_per_sm", 0) or 0)
        # the node's peak as node_roofline names it; the fill constant scales above the fp16 rate
        # (onnxperf.predict.roofline.half_rate_outputs)
        per_sm = np.array([half_rate_outputs(spec, float(p_i if integer_named(f, i, pf, p_i) else pf))
                           for f, i, p_i in zip(ar.flops, ar.int_ops, pi)]) if per_sm else 0.0
        fill = np.where(np.isinf(ar.outputs), 1.0, ar.outputs / (np.where(np.isinf(ar.outputs), 0, ar.outputs)
                                                                + sms * per_sm)) if sms and np.all(per_sm) else 1.0
        c = (ar.flops / pf + np.where(ar.int_ops > 0, ar.int_ops / np.where(pi > 0, pi, 1), 0)) / fill
        l2 = l2_of(spec)
        bw = spec.memory_bandwidth_bytes_per_s
        if l2:
            hr, hw = ar.hits[l2[0]]
            m = (ar.nbytes - ar.written) * (hr / l2[1] + (1 - hr) / bw) + ar.written * (hw / l2[1] + (1 - hw) / bw)
        else:
            m = ar.nbytes / bw
        per_kernel = lambda x: np.bincount(ar.kernel, weights=x, minlength=len(ar.count))  # noqa: E731
        got = self._fast[key] = Fast(per_kernel(np.where(ar.matmul, c, 0.0)), per_kernel(np.where(ar.matmul, 0.0, c)),
                                     per_kernel(m), ar.count, int((ar.count[ar.kernel] * ar.launch).sum()))
        return got

    def latency(self, pt: tuple, preset: str, eff: dict | None = None) -> float:
        """The point's latency on ``preset``; ``eff`` overrides constants (a ``matmul.compute`` there is
        every GEMM's share, the low-precision ones included: the fit proposal's what-if)."""
        spec = self.spec(preset)
        e = {**spec.efficiency, **(eff or {})}
        k = mm_key(spec, pt)
        if eff and "matmul.compute" in eff and k not in eff:
            k = "matmul.compute"
        return self.fast(pt, preset).latency(float(e[k]), float(e["default.compute"]),
                                             float(e["default.memory"]), float(e["overhead_s"]))

    def curve(self, case: "Case", e_mm: np.ndarray | None = None, e_mem: np.ndarray | None = None,
              preset: str | None = None) -> np.ndarray:
        """The row's ratio over a grid of one constant: its GEMMs' share (``e_mm``: every GEMM's, the low-precision
        ones too) or the memory share (``e_mem``), every other constant as ``preset`` (default: the row's) holds
        it; the best candidate per grid value, as :func:`predict` takes it."""
        preset = preset or case.preset
        spec = self.spec(preset)
        e = spec.efficiency
        mem = np.asarray(e_mem, dtype=float) if e_mem is not None else np.array([float(e["default.memory"])])
        best = None
        for cand in case.candidates:
            t = sum(w * self.fast(pt, preset).latencies(
                np.asarray(e_mm, dtype=float) if e_mm is not None else np.array([float(e[mm_key(spec, pt)])]),
                float(e["default.compute"]), mem, np.array([float(e["overhead_s"])]))[:, :, 0].ravel()
                    for pt, w in cand.terms)
            r = case.published / t if cand.tokens is None else cand.tokens / t / case.published
            best = r if best is None else np.maximum(best, r)
        return best


def mm_key(spec, pt: tuple) -> str:
    """The efficiency key of a point's GEMMs on ``spec``, as :func:`onnxperf.predict.roofline.families`
    looks it up: ``matmul.fp8.compute`` (``fp4``) where the precision's arithmetic runs at that peak and the
    spec has the key, else ``matmul.compute``."""
    low = low_precision(spec, P.get(pt[1]).peak_key)
    k = f"matmul.{low}.compute"
    return k if low and k in spec.efficiency else "matmul.compute"


def _fill_elements(n) -> float:
    """The output elements :func:`onnxperf.predict.roofline.fill` reads (inf where it is 1: not a
    tiled kernel, a GEMV-like product of at most GEMV_ROWS rows, an unknown shape)."""
    if n.family not in ("conv", "matmul") or not n.outputs or n.outputs[0] is None:
        return math.inf
    shape = n.outputs[0].shape
    if shape is None or not all(isinstance(d, int) for d in shape):
        return math.inf
    out = math.prod(shape)
    if n.family == "matmul" and shape and shape[-1] and out // shape[-1] <= GEMV_ROWS:
        return math.inf
    return float(out) if out > 0 else math.inf


# ------------------------------------------------------------------------------------- predictions

def predict(case: Case, engine: Engine, eff: dict | None = None) -> tuple[float, str]:
    """(ratio, the candidate used): predicted/published throughput or published/predicted latency."""
    best = None
    for cand in case.candidates:
        t = sum(w * engine.latency(pt, case.preset, eff) for pt, w in cand.terms)
        ratio = case.published / t if cand.tokens is None else cand.tokens / t / case.published
        if best is None or ratio > best[0]:
            best = (ratio, cand.label, t)
    return best[0], best[1]


def predicted_value(case: Case, ratio: float) -> float:
    return case.published / ratio if case.latency else case.published * ratio


def stats(ratios: list[float]) -> dict:
    if not ratios:
        return {"n": 0}
    r = np.array(ratios)
    within = lambda f: float(np.mean((r >= 1 / f) & (r <= f)))  # noqa: E731
    return {"n": len(r), "median": float(np.median(r)), "p10": float(np.percentile(r, 10)),
            "p90": float(np.percentile(r, 90)), "w12": within(1.2), "w15": within(1.5),
            "rms_log": float(np.sqrt(np.mean(np.log(r) ** 2)))}


def fmt_stats(s: dict) -> str:
    if not s["n"]:
        return "0 | - | - | - | -"
    return (f"{s['n']} | {s['median']:.2f} | {s['p10']:.2f}-{s['p90']:.2f} | {s['w12']:.0%} | {s['w15']:.0%}")


def split(cases: list[Case]) -> tuple[list[Case], list[Case]]:
    """Fit / held-out halves: within each generation and metric, rows sorted by (model, device,
    precision, scenario, batch, lengths, source) and alternated (even positions fit, odd held out)."""
    groups: dict[tuple, list[Case]] = {}
    for c in cases:
        groups.setdefault((c.generation, c.category), []).append(c)
    fit, held = [], []
    for key in sorted(groups):
        rows = sorted(groups[key], key=lambda c: (c.entry["model"], c.device, c.precision, c.entry["scenario"],
                                                  str(c.entry.get("batch")), str(c.entry.get("input_len")),
                                                  str(c.entry.get("output_len")), str(c.entry.get("request_rate_qps")),
                                                  c.entry["source"].get("url", ""), c.entry["metric"],
                                                  c.entry["source"].get("quoted", "")))
        fit += rows[0::2]
        held += rows[1::2]
    return fit, held


def fit_generation(cases: list[Case], engine: Engine) -> dict | None:
    """Grid search of (matmul.compute, default.memory, overhead_s) minimizing the mean squared log ratio."""
    cases = [c for c in cases if c.category in FIT_CATEGORIES]
    if not cases:
        return None
    e_mm, e_mem, o = np.array(GRID_MM), np.array(GRID_MEM), np.array(GRID_O)
    err = np.zeros((len(e_mm), len(e_mem), len(o)))
    for c in cases:
        e_other = float(engine.spec(c.preset).efficiency["default.compute"])
        best = None
        for cand in c.candidates:
            t = sum(w * engine.fast(pt, c.preset).latencies(e_mm, e_other, e_mem, o) for pt, w in cand.terms)
            r = c.published / t if cand.tokens is None else cand.tokens / t / c.published
            best = r if best is None else np.maximum(best, r)
        err += np.log(best) ** 2
    i, j, k = np.unravel_index(np.argmin(err), err.shape)
    return {"matmul.compute": float(e_mm[i]), "default.memory": float(e_mem[j]), "overhead_s": float(o[k]),
            "rms_log_error": float(math.sqrt(err[i, j, k] / len(cases))), "rows": len(cases)}


def low_groups(cases: list[Case], engine: Engine) -> dict[tuple[str, str], list[Case]]:
    """(GPU class, fp8 / fp4) -> the rows of :data:`LOW_RUNTIMES` in :data:`FIT_CATEGORIES` whose
    arithmetic runs at that peak of their preset (the rows the low-precision GEMM share governs)."""
    out: dict[tuple[str, str], list[Case]] = {}
    for c in cases:
        if c.entry["runtime_class"] not in LOW_RUNTIMES or c.category not in FIT_CATEGORIES:
            continue
        low = low_precision(engine.spec(c.preset), P.get(c.precision).peak_key)
        cls = GR.CLASS_OF.get(c.device)
        if low and cls:
            out.setdefault((cls, low), []).append(c)
    return dict(sorted(out.items()))


def fit_low(cases: list[Case], fit_half: list[Case], engine: Engine) -> list[dict]:
    """Per (GPU class, precision) of :func:`low_groups`: the share of the fp8 / fp4 peak a GEMM attains
    (``matmul.<p>.compute``) minimizing the mean squared log ratio of the fit half's rows over
    :data:`GRID_LOW`, every other constant as shipped; the held-out half scored before (every GEMM at
    ``matmul.compute``, as without the key) and after (the fitted share)."""
    grid = np.array(GRID_LOW)
    fit_ids = {id(c) for c in fit_half}
    out = []
    for (cls, low), cs in low_groups(cases, engine).items():
        curves = {id(c): engine.curve(c, e_mm=grid) for c in cs}
        fc = [c for c in cs if id(c) in fit_ids]
        held = [c for c in cs if id(c) not in fit_ids]
        if not fc:
            continue
        err = sum(np.log(curves[id(c)]) ** 2 for c in fc) / len(fc)
        j = int(np.argmin(err))
        at = lambda c, x: float(np.interp(x, grid, curves[id(c)]))  # noqa: E731
        base = {id(c): float(engine.spec(c.preset).efficiency["matmul.compute"]) for c in cs}
        out.append({"class": cls, "precision": low, "value": float(grid[j]), "fit_rows": fc, "held_rows": held,
                    "rms_before": math.sqrt(sum(math.log(at(c, base[id(c)])) ** 2 for c in fc) / len(fc)),
                    "rms_after": float(math.sqrt(err[j])),
                    "held_before": stats([at(c, base[id(c)]) for c in held]),
                    "held_after": stats([at(c, grid[j]) for c in held]),
                    "by_cat": {cat: (stats([at(c, base[id(c)]) for c in held if c.category == cat]),
                                     stats([at(c, grid[j]) for c in held if c.category == cat]))
                               for cat in FIT_CATEGORIES},
                    "devices": sorted({c.preset for c in fc}),
                    "edge": j in (0, len(grid) - 1), "applied": len(fc) >= LOW_MIN_ROWS})
    return out


def low_source(f: dict) -> str:
    n = len(f["fit_rows"])
    return (f"share of the {f['precision']} tensor peak a GEMM kernel attains; fitted for the {f['class']} class "
            f"by benchmarks/llm_realism.py --fit-low on the fit half of its published TensorRT-LLM rows at "
            f"{f['precision']} ({n} rows: {', '.join(c for c in FIT_CATEGORIES if any(r.category == c for r in f['fit_rows']))}"
            f" on {', '.join(f['devices'])}; "
            "benchmarks/published/llm_inference.json), every other constant as shipped, scored on the held-out "
            f"half ({len(f['held_rows'])} rows: median ratio {f['held_before']['median']:.2f} -> "
            f"{f['held_after']['median']:.2f}; benchmarks/results/llm_realism.md)")


def write_low(fits: list[dict]) -> list[str]:
    """Set ``matmul.<p>.compute`` and its source in every preset of each fitted class (:data:`LOW_MIN_ROWS`
    fit rows or more); remove it where the class's fit has fewer."""
    changed = []
    for f in fits:
        key = f"matmul.{f['precision']}.compute"
        for preset in GR.CLASSES[f["class"]]:
            path = GR.PRESETS / f"{preset}.toml"
            text = path.read_text()
            new = "\n".join(ln for ln in text.split("\n") if not ln.startswith(f'"{key}" ='))
            if f["applied"]:
                new = GR.set_table(new, "efficiency", {key: f"{f['value']:g}"})
                new = GR.set_table(new, "efficiency_sources", {key: json.dumps(low_source(f))})
            if new != text:
                path.write_text(new)
                changed.append(preset)
    load_preset.cache_clear()
    return changed


def _before_after(b: dict, a: dict) -> str:
    """Table cells 'median | within 1.2x | within 1.5x', each before -> after (dashes without rows)."""
    if not b["n"]:
        return "- | - | - |"
    return (f"{b['median']:.2f} -> {a['median']:.2f} | {b['w12']:.0%} -> {a['w12']:.0%} | "
            f"{b['w15']:.0%} -> {a['w15']:.0%} |")


def low_section(fits: list[dict], engine: Engine) -> list[str]:
    L = ["## The share of the fp8 / fp4 peak a GEMM attains (fitted and applied: `matmul.fp8.compute`)", "",
         "The presets' `matmul.compute` was fitted on TensorRT rows of fp16 and int8 CNNs and BERT "
         "(`benchmarks/gpu_realism.py`), where a GEMM attains about 0.9 of its peak; no such row runs at fp8. "
         "On the TensorRT-LLM fp8 rows every GPU class is optimistic with it, and most where GEMMs bound the "
         "time (128/128 at large batch). Per GPU class and low precision, a grid search over "
         f"`matmul.<p>.compute` {GRID_LOW[0]}-{GRID_LOW[-1]} (step 0.025), every other constant as shipped, "
         "minimizes the mean squared log ratio of the fit half's TensorRT-LLM rows at that precision "
         f"(the `half` column; metrics {', '.join(FIT_CATEGORIES)}); the held-out half is scored with every "
         "GEMM at `matmul.compute` (before) and at the fitted share (after). A class whose fit half has "
         f"{LOW_MIN_ROWS} rows or more gets the share in its presets (`python benchmarks/llm_realism.py "
         "--fit-low --write`); `onnxperf.predict.roofline.families` looks it up for float arithmetic at the "
         "fp8 (fp4) peak before `matmul.compute`.", "",
         "| class | precision | fit rows (devices) | fitted share | fit rms log error (matmul.compute -> fitted) "
         "| held-out rows | held-out median | within 1.2x | within 1.5x | in the presets |",
         "|---|---|---|---|---|---|---|---|---|---|"]
    for f in fits:
        hb, ha = f["held_before"], f["held_after"]
        key = f"matmul.{f['precision']}.compute"
        shipped = {float(engine.spec(p).efficiency[key]) if key in engine.spec(p).efficiency else None
                   for p in GR.CLASSES[f["class"]]}
        if f["applied"]:
            state = "yes" if shipped == {f["value"]} else f"NO: the presets hold {sorted(map(str, shipped))}"
        else:
            state = f"no: {len(f['fit_rows'])} fit rows (fewer than {LOW_MIN_ROWS})" + (
                "" if shipped == {None} else f"; the presets hold {sorted(map(str, shipped))}")
        L.append(f"| {f['class']} | {f['precision']} | {len(f['fit_rows'])} ({', '.join(f['devices'])}) | "
                 f"**{f['value']:g}**{' (grid edge)' if f['edge'] else ''} | {f['rms_before']:.3f} -> "
                 f"{f['rms_after']:.3f} | {hb['n']} | "
                 + _before_after(hb, ha) + f" {state} |")
    L += ["", "By metric (held-out rows, before -> after):", "",
          "| class | precision | metric | rows | median | within 1.2x | within 1.5x |", "|---|---|---|---|---|---|---|"]
    for f in fits:
        for cat, (b, a) in f["by_cat"].items():
            if b["n"]:
                L.append(f"| {f['class']} | {f['precision']} | {cat} | {b['n']} | {b['median']:.2f} -> "
                         f"{a['median']:.2f} | {b['w12']:.0%} -> {a['w12']:.0%} | {b['w15']:.0%} -> {a['w15']:.0%} |")
    return L + [""]


def fit_runtime(cases: list[Case], fit_half: list[Case], engine: Engine, profile: str = "llama.cpp") -> dict | None:
    """The runtime profile's (``memory.share`` s, ``memory.sm_bytes_per_s`` b) by grid search (:data:`GRID_SHARE`
    x :data:`GRID_SM`) minimizing the mean squared log ratio of the fit half's rows of that runtime in
    :data:`PROFILE_CATEGORY`, each row's memory share ``min(s, N_SM · b / β)`` (:mod:`onnxperf.hardware.runtimes`),
    every other constant its preset's. Scored on the held-out half: before (the preset as shipped, no profile) and
    after; the after ratios give the profile's band (P10-P90 of measured / predicted time)."""
    rows = [c for c in cases if RUNTIME_PROFILE.get(c.entry["runtime_class"]) == profile
            and c.category == PROFILE_CATEGORY]
    fit_ids = {id(c) for c in fit_half}
    fc, held = [c for c in rows if id(c) in fit_ids], [c for c in rows if id(c) not in fit_ids]
    if not fc:
        return None
    S, B = np.array(GRID_SHARE), np.array(GRID_SM)

    def shares(c: Case) -> np.ndarray:
        spec = engine.spec(c.device)
        return np.minimum(S[:, None], float(spec.efficiency["gpu.sms"]) * B[None, :] / spec.memory_bandwidth_bytes_per_s)

    def ratios(c: Case, e_m: np.ndarray) -> np.ndarray:
        flat, inv = np.unique(e_m, return_inverse=True)
        return engine.curve(c, e_mem=flat, preset=c.device)[inv].reshape(e_m.shape)

    err = sum(np.log(ratios(c, shares(c))) ** 2 for c in fc)
    i, j = np.unravel_index(np.argmin(err), err.shape)
    s_fit, b_fit = float(S[i]), float(B[j])
    fitted = replace(profiles()[profile], memory_share=s_fit, sm_bytes_per_s=b_fit)
    at = lambda c: float(ratios(c, np.array([[fitted.memory_efficiency(engine.spec(c.device))[0]]]))[0, 0])  # noqa: E731
    before = lambda c: predict(replace(c, preset=c.device), engine)[0]  # noqa: E731
    after_fit = [at(c) for c in fc]
    after_held = [at(c) for c in held]
    edge = [k for k, (x, grid) in {"memory.share": (i, S), "memory.sm_bytes_per_s": (j, B)}.items()
            if x in (0, len(grid) - 1)]
    return {"profile": profile, "share": s_fit, "sm_bytes_per_s": b_fit, "fit_rows": fc, "held_rows": held,
            "rms_before": stats([before(c) for c in fc])["rms_log"], "rms_after": stats(after_fit)["rms_log"],
            "held_before": stats([before(c) for c in held]), "held_after": stats(after_held),
            "all_after": stats(after_fit + after_held), "edge": edge,
            "devices": sorted({c.device for c in rows}), "held_devices": sorted({c.device for c in held})}


def write_runtime(f: dict) -> None:
    """The fitted profile into :data:`RUNTIMES_FILE`: its two constants, its band (the held-out rows' P10-P90
    of measured / predicted time) and their sources."""
    ha, n = f["held_after"], len(f["fit_rows"])
    fitted = (f"fitted by benchmarks/llm_realism.py --fit-runtime on the fit half of the published {f['profile']} "
              f"rows of '{PROFILE_CATEGORY}' ({n} rows: {', '.join(sorted({c.device for c in f['fit_rows']}))}; "
              f"benchmarks/published/llm_inference.json), grid share {GRID_SHARE[0]}-{GRID_SHARE[-1]} x per-SM rate "
              f"{GRID_SM[0] / 1e9:g}-{GRID_SM[-1] / 1e9:g} GB/s, {datetime.date.today().isoformat()}; held out: "
              f"{ha['n']} rows, median ratio {f['held_before']['median']:.2f} -> {ha['median']:.2f}, within 1.2x "
              f"{f['held_before']['w12']:.0%} -> {ha['w12']:.0%} (benchmarks/results/llm_realism.md)")
    band = (f"measured / predicted time on the {ha['n']} held-out published {f['profile']} rows of "
            f"'{PROFILE_CATEGORY}' ({', '.join(f['held_devices'])}; benchmarks/published/llm_inference.json) under "
            f"the fitted profile; P10 and P90 by benchmarks/llm_realism.py --fit-runtime, "
            f"{datetime.date.today().isoformat()}. Its prefill rows are not within it (the page's prefill rows)")
    text = RUNTIMES_FILE.read_text()
    table = f'runtime."{f["profile"]}"'
    text = GR.set_table(text, f"{table}.efficiency", {
        "memory.share": f"{f['share']:g}", "memory.sm_bytes_per_s": f"{f['sm_bytes_per_s']:.4g}",
        "band.llm.p10": f"{round(ha['p10'], 2):g}", "band.llm.p90": f"{round(ha['p90'], 2):g}",
        "band.llm.points": str(ha["n"])})
    text = GR.set_table(text, f"{table}.sources", {
        "memory.share": json.dumps("the share of the data-sheet bandwidth its kernels stream at where the memory "
                                   "system is the limit (GDDR GPUs: RTX 4090, L40S); " + fitted),
        "memory.sm_bytes_per_s": json.dumps("the bytes per second one SM of its memory-bound kernels streams: where "
                                            "N_SM x this is below the share of the bandwidth (HBM GPUs: A100, H100), "
                                            "it is the limit; " + fitted),
        "band.llm": json.dumps(band)})
    RUNTIMES_FILE.write_text(text)
    profiles.cache_clear()


def runtime_section(f: dict | None, engine: Engine) -> list[str]:
    if f is None:
        return []
    prof = profiles()[f["profile"]]
    shipped = (prof.memory_share, prof.sm_bytes_per_s)
    state = ("yes" if shipped == (f["share"], f["sm_bytes_per_s"]) else
             f"NO: the profile holds {shipped[0]:g}, {shipped[1] / 1e9:g} GB/s")
    hb, ha = f["held_before"], f["held_after"]
    L = [f"## Runtime profile: {f['profile']} (fitted and applied: `--hw ID:{f['profile']}`)", "",
         f"The presets' constants describe TensorRT-class kernels; {f['profile']}'s decode kernels stream within 5-10% "
         "of the bandwidth bound on GDDR GPUs (RTX 4090, L40S) and at about half of it on HBM GPUs (A100, H100 PCIe): "
         "one share of the bandwidth cannot hold both. The profile (`onnxperf/hardware/runtimes.py`) charges each "
         "kernel's memory at `e_m = min(s, N_SM · b / β)`: s the share of the bandwidth its kernels stream at, b the "
         "bytes per second one SM of them streams (the bytes a kernel keeps in flight over the memory's latency), "
         "N_SM the preset's SMs, β its DRAM bandwidth. A grid search over s "
         f"{GRID_SHARE[0]}-{GRID_SHARE[-1]} (step 0.025) and b {GRID_SM[0] / 1e9:g}-{GRID_SM[-1] / 1e9:g} GB/s "
         f"(step 0.25) minimizes the mean squared log ratio of the fit half's {f['profile']} rows of "
         f"'{PROFILE_CATEGORY}' (the `half` column); the held-out half is scored with the preset as shipped "
         "(before) and under the fitted profile (after), and its ratios give the profile's band "
         f"(`python benchmarks/llm_realism.py --fit-runtime --write`).", "",
         "| profile | fit rows | memory.share | memory.sm_bytes_per_s | fit rms log error (preset -> profile) | "
         "held-out rows | held-out median | within 1.2x | within 1.5x | all rows under the profile | in the profile |",
         "|---|---|---|---|---|---|---|---|---|---|---|",
         f"| {f['profile']} | {len(f['fit_rows'])} | **{f['share']:g}** | **{f['sm_bytes_per_s'] / 1e9:g} GB/s** | "
         f"{f['rms_before']:.3f} -> {f['rms_after']:.3f} | {hb['n']} | " + _before_after(hb, ha)
         + f" median {f['all_after']['median']:.2f}, {f['all_after']['w12']:.0%} within 1.2x | {state}"
         + (f" (grid edge: {', '.join(f['edge'])})" if f["edge"] else "") + " |", "",
         "The memory share it gives each device (`onnxperf hw show ID:" + f["profile"] + "`): "
         + ", ".join(f"{d} {prof.memory_efficiency(engine.spec(d))[0]:.3f}" for d in f["devices"]) + ".", ""]
    return L


# ------------------------------------------------------------------------------------------ checks

def graph_checks(engine: Engine, configs: list[str]) -> list[dict]:
    """Per config: the CLI recognizes a decoder step; decode MACs per token = the matrix products'
    parameters (+ attention's 2·L·H·d·C), set beside the config's parameter count."""
    out = []
    for name in configs:
        cfg = G.CONFIGS[name]
        _, step, path = engine.graph(name)
        ctx = 128
        cmd = [sys.executable, "-m", "onnxperf", "summary", str(path), "--llm", "--hw", "h100-sxm", "--precision", "fp16",
               "--dim", "batch=1", "--context", str(ctx), "--prompt", "16", "--kv-runtime", "in-place"]
        text = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT).stdout
        js = json.loads(subprocess.run(cmd + ["--format", "json"], capture_output=True, text=True, cwd=ROOT).stdout)
        macs = js["llm"]["figures"]["decode"]["macs"]
        attention = 2 * cfg.layers * cfg.heads * cfg.head_dim * ctx
        out.append({"config": name, "recognized": "Decoder LLM" in text and js["llm"]["decoder_step"],
                    "bytes": path.stat().st_size, "nodes": len(engine.graph(name)[0].proto.graph.node),
                    "params": cfg.params, "graph_params": js.get("totals", {}).get("params"),
                    "macs": macs, "expected": G.decode_macs(cfg, 1, ctx), "per_token": macs - attention,
                    "kv_per_token": step.kv_bytes_per_token, "kv_expected": cfg.kv_bytes_per_token,
                    "gqa": cfg.heads // cfg.kv_heads})
    return out


def consistency(engine: Engine, cases: list[Case], quick: bool) -> list[dict]:
    """The fast kernel-model sum against ``figures()`` (the shipped path) at the preset's constants: one
    decode and one prefill point per (config, preset, precision, KV precision)."""
    seen, out = set(), []
    has_kvp = "kv_precision" in inspect.signature(figures).parameters
    for c in cases:
        key = (c.config, c.preset, c.precision, c.kv_precision)
        if key in seen:
            continue
        seen.add(key)
        pts = [pt for cand in c.candidates for pt, _ in cand.terms]
        dec = next((pt for pt in pts if pt[5] == 1 and pt[4] > 0), None)
        pre = next((pt for pt in pts if pt[4] == 0), None)
        loaded, step, _ = engine.graph(c.config)
        if dec is not None:
            b, context = dec[3], dec[4] + 1
            prompt = pre[5] if pre is not None and pre[3] == b and pre[5] <= context else 1
        else:
            b, context, prompt = pre[3], pre[5], pre[5]
        kw = {"kv_precision": c.kv_precision} if has_kvp and c.kv_precision else {}
        f = figures(Request(loaded, precision=c.precision), step, batch=b, context=context, prompt=prompt,
                    spec=engine.spec(c.preset), kv_runtime=engine.kv_runtime, with_formulas=False, **kw)
        row = {"key": key, "batch": b, "context": context, "prompt": prompt}
        if dec is not None:
            row["decode"] = (f.decode.latency_s, engine.latency(dec, c.preset))
        if pre is not None and pre[3] == b and pre[5] == prompt:
            row["prefill"] = (f.prefill_latency_s, engine.latency(pre, c.preset))
        out.append(row)
        if quick and len(out) >= 4:
            break
    return out


def interpolation_check(engine: Engine, cases: list[Case]) -> dict | None:
    """One static-batching row with a short output (the first with O ≤ 128, fewest tokens first):
    its throughput with dec at the sampled contexts (linear between) and at every context."""
    rows = [c for c in cases if c.entry["scenario"] == "static_batch_throughput" and (c.entry["output_len"] or 0) <= 128
            and (c.entry["output_len"] or 0) > 8]
    if not rows:
        return None
    c = min(rows, key=lambda c: (c.entry["batch"] * (c.entry["input_len"] + c.entry["output_len"]), c.preset))
    B, I, O = c.entry["batch"], c.entry["input_len"], c.entry["output_len"]
    every = list(range(I + 1, I + O))
    exact = Candidate(B * O, ((point(c.config, c.precision, c.kv_precision, B, 0, I), 1.0),)
                      + tuple((point(c.config, c.precision, c.kv_precision, B, x - 1, 1), w)
                              for x, w in sum_weights(I + 1, I + O - 1, every)))
    r_sampled, _ = predict(c, engine)
    r_exact, _ = predict(replace(c, candidates=(exact,)), engine)
    return {"case": c, "samples": len(sample_contexts(I + 1, I + O - 1)), "evaluated": len(every),
            "sampled": r_sampled, "exact": r_exact, "error": r_sampled / r_exact - 1}


def fit_note(f: dict) -> str:
    """Why a fit should not be taken as it is: few rows, a constant at the grid's edge."""
    out = []
    if f["rows"] < 10:
        out.append(f"{f['rows']} rows for 3 constants: not enough")
    edges = [k for k, grid in (("matmul.compute", GRID_MM), ("default.memory", GRID_MEM), ("overhead_s", GRID_O))
             if f[k] in (grid[0], grid[-1])]
    if edges:
        out.append("at the grid's edge: " + ", ".join(edges))
    return "; ".join(out) or "-"


def _natural(s: str) -> tuple:
    """Sort key: numbers by value ("≤ 512" before "513-2048", "2" before "16")."""
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", s.replace("≤ ", "0-")))


def _src(e: dict) -> str:
    s = e["source"]
    if s.get("repo"):
        name = s["repo"].split("/")[-1]
        return f"[{name}@{s['commit'][:8]}]({s['url']})"
    return f"[page {s.get('date', '')}]({s.get('url', '')})"


def _g(x: float) -> str:
    if x >= 100:
        return f"{x:,.0f}"
    if x >= 1:
        return f"{x:.2f}"
    return f"{x * 1e3:.2f} ms" if x >= 1e-3 else f"{x * 1e6:.0f} µs"


def _value(case: Case, v: float) -> str:
    return _g(v) if case.latency else f"{v:,.1f} tok/s" if v < 100 else f"{v:,.0f} tok/s"


def report(cases, apart, ratios, exported, checks, consist, interp, fits, halves, elapsed, quick, chosen,
           lows=(), engine=None, runtime_fit=None) -> str:
    fit_half, held_half = halves
    L = ["# LLM realism: decoder-step predictions beside published GPU measurements (issue 29, items 2 and 3)", "",
         f"Made by `python benchmarks/llm_realism.py{' --quick' if quick else ''}` (no GPU needed; "
         f"{elapsed:.0f} s on this 2-core machine). Published rows: `benchmarks/published/llm_inference.json` "
         "(each with its source). Graphs: `benchmarks/make_llm_decode.py` (Llama-style decode steps with a "
         "KV cache, weights referenced, never written). Every prediction is the device's preset as shipped "
         "(its `[efficiency]`: the GPU kernel model, constants fitted by `benchmarks/gpu_realism.py` on published "
         "CNN/BERT rows, `benchmarks/results/gpu_realism.md`; the table below lists them), `--kv-runtime in-place` and `--precision` of the published run; "
         "a llama.cpp row runs under the llama.cpp runtime profile (`--hw ID:llama.cpp`, `onnxperf/hardware/runtimes.py`; "
         "its own section below). "
         "ratio = predicted / published throughput, or published / predicted latency: above 1 onnxperf is "
         "optimistic. What each row's prediction is: the module docstring of `benchmarks/llm_realism.py` and "
         "the `predicted as` column.", ""]
    presets = sorted({c.preset for c in cases},
                     key=lambda p: (GENERATIONS.index(GENERATION.get(p.split(":")[0], "CDNA3")), p))
    L += ["The presets' kernel-model constants this run used (the working tree's presets at run time):", "",
          "| preset | generation | matmul.compute | default.memory | default.compute | overhead_s | gpu.sms | "
          "gpu.outputs_per_sm | rows |", "|---|---|---|---|---|---|---|---|---|"]
    for p in presets:
        e = load_spec(p).efficiency
        L.append(f"| {p} | {GENERATION.get(p.split(':')[0], '?')} | {e.get('matmul.compute')} | {float(e.get('default.memory')):.3g} | "
                 f"{e.get('default.compute')} | {float(e.get('overhead_s', 0)) * 1e6:g} µs | {float(e.get('gpu.sms', 0)):g} | "
                 f"{float(e.get('gpu.outputs_per_sm', 0)):g} | {sum(c.preset == p for c in cases)} |")
    L.append("")
    n_entries = len(cases) + len(apart)
    L += [f"- published entries: {n_entries:,}; compared: **{len(cases)}**; not compared: {len(apart):,} (reasons below)",
          f"- devices compared: {', '.join(sorted({c.preset for c in cases}))}"
          + ("; mapped to a preset: " + "; ".join(sorted({f'{c.entry["device"]} -> {c.preset} ({c.mapped})'
                                                          for c in cases if c.mapped})) if any(c.mapped for c in cases) else ""),
          ""]
    # targets
    L += ["## The issue's targets", ""]
    for cat, lim in TARGETS.items():
        s = stats([ratios[id(c)] for c in cases if c.category == cat])
        ok = s["n"] and s["w12" if lim == 1.2 else "w15"] >= 0.9 and 1 / lim <= s["median"] <= lim
        L.append(f"- [{'x' if ok else ' '}] {cat} within {lim}x: " + (
            f"{s['w12' if lim == 1.2 else 'w15']:.0%} of {s['n']} rows within {lim}x, median ratio {s['median']:.2f}"
            if s["n"] else "no comparable row"))
    L += ["", "A target counts as met when the median is within it and 90% of the rows are.", ""]
    # per generation x category
    L += ["## Statistics by device generation and metric (`--kv-runtime in-place`, presets as shipped)", "",
          "| generation | metric | rows | median ratio | P10-P90 | within 1.2x | within 1.5x |",
          "|---|---|---|---|---|---|---|"]
    for gen in GENERATIONS:
        gcases = [c for c in cases if c.generation == gen]
        if not gcases:
            L.append(f"| {gen} | (no comparable row) | 0 | - | - | - | - |")
            continue
        for cat in CATEGORIES:
            s = stats([ratios[id(c)] for c in gcases if c.category == cat])
            if s["n"]:
                L.append(f"| {gen} | {cat} | {fmt_stats(s)} |")
        L.append(f"| {gen} | **all** | {fmt_stats(stats([ratios[id(c)] for c in gcases]))} |")
    L += ["", "| metric (all generations) | rows | median ratio | P10-P90 | within 1.2x | within 1.5x |",
          "|---|---|---|---|---|---|"]
    for cat in CATEGORIES:
        L.append(f"| {cat} | {fmt_stats(stats([ratios[id(c)] for c in cases if c.category == cat]))} |")
    L.append(f"| **all** | {fmt_stats(stats([ratios[id(c)] for c in cases]))} |")
    # exported contrast
    if exported:
        L += ["", "## Contrast: `--kv-runtime exported` (the graph as exported: the cache concatenated, repeated "
              "for grouped heads and read as copies)", "",
              "| metric | rows | in place: median | within 1.5x | exported: median | within 1.5x |", "|---|---|---|---|---|---|"]
        for cat in CATEGORIES + ("all",):
            sel = [c for c in cases if cat == "all" or c.category == cat]
            a, b = stats([ratios[id(c)] for c in sel]), stats([exported[id(c)] for c in sel])
            if a["n"]:
                L.append(f"| {cat} | {a['n']} | {a['median']:.2f} | {a['w15']:.0%} | {b['median']:.2f} | {b['w15']:.0%} |")
    # where the error is
    L += ["", "## Where the error is (in place, presets as shipped)", "",
          "| metric | by | group | rows | median ratio | P10-P90 | within 1.2x | within 1.5x |",
          "|---|---|---|---|---|---|---|---|"]
    for cat, by, key in BREAKDOWNS:
        groups: dict[str, list[float]] = {}
        for c in cases:
            if c.category == cat:
                groups.setdefault(key(c), []).append(ratios[id(c)])
        for g in sorted(groups, key=_natural):
            L.append(f"| {cat} | {by} | {g} | {fmt_stats(stats(groups[g]))} |")
    L += ["", "Largest misses of the targeted metrics (ratio furthest from 1 either way):", ""]
    for cat in TARGETS:
        rows = sorted((c for c in cases if c.category == cat), key=lambda c: -abs(math.log(ratios[id(c)])))[:4]
        for c in rows:
            e = c.entry
            L.append(f"- {cat}: {e['model']} on {c.preset} ({c.precision}, {e['runtime_class']}), {c.how}: published "
                     f"{_value(c, c.published)}, predicted {_value(c, predicted_value(c, ratios[id(c)]))}, "
                     f"ratio {ratios[id(c)]:.2f}")
    if lows:
        L += [""] + low_section(lows, engine)
    if runtime_fit is not None:
        L += [""] + runtime_section(runtime_fit, engine)
    # fit
    L += ["", "## Fit proposal (NOT applied to any preset)", "",
          "Rows are split per generation and metric, sorted by (model, device, precision, scenario, batch, "
          "lengths, request rate, source, metric) and alternated: even positions are the fit half, odd the "
          "held-out half (deterministic; the `half` column of the full table). Per generation, a grid search "
          f"over `matmul.compute` {GRID_MM[0]}-{GRID_MM[-1]} (step 0.05), `default.memory` "
          f"{GRID_MEM[0]}-{GRID_MEM[-1]} (step 0.025) and `overhead_s` {', '.join(f'{o * 1e6:g}' for o in GRID_O)} µs "
          "minimizes the mean squared log ratio of the fit half's rows of the metrics "
          f"{', '.join(FIT_CATEGORIES)} (serving rows carry queueing the model does not have, so they are "
          "neither fitted nor held to a target). `default.compute`, `gpu.sms` and `gpu.outputs_per_sm` stay "
          "as shipped. One fit per runtime and generation: the presets' constants describe a GPU under a tuned "
          "runtime (TensorRT, as `benchmarks/gpu_realism.py` fitted them), and llama.cpp's kernels attain less, "
          "so its rows are fitted apart. Another engineer decides whether to adopt them.", "",
          "| runtime | generation | fit rows | matmul.compute | default.memory | overhead_s | fit rms log error "
          "(shipped -> fitted) | held-out rows | held-out median (shipped -> fitted) | held-out within 1.2x "
          "| held-out within 1.5x | note |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for (group, gen), f in fits.items():
        shipped = f["shipped"]
        sh = lambda k: f"{shipped[k] * 1e6:g} µs" if k == "overhead_s" else f"{shipped[k]:g}"  # noqa: E731
        new = lambda k: f"{f[k] * 1e6:g} µs" if k == "overhead_s" else f"{f[k]:g}"  # noqa: E731
        hb, ha = f["held_before"], f["held_after"]
        L.append(f"| {group} | {gen} | {f['rows']} | {sh('matmul.compute')} -> **{new('matmul.compute')}** | "
                 f"{sh('default.memory')} -> **{new('default.memory')}** | {sh('overhead_s')} -> **{new('overhead_s')}** | "
                 f"{f['fit_before']:.3f} -> {f['rms_log_error']:.3f} | {hb['n']} | "
                 + _before_after(hb, ha) + f" {fit_note(f)} |")
    L += ["", "Held-out statistics by metric, shipped -> fitted constants:", "",
          "| runtime | generation | metric | held-out rows | median | within 1.2x | within 1.5x |",
          "|---|---|---|---|---|---|---|"]
    for (group, gen), f in fits.items():
        for cat in CATEGORIES:
            b, a = f["by_cat"].get(cat, ({"n": 0}, {"n": 0}))
            if b["n"]:
                L.append(f"| {group} | {gen} | {cat} | {b['n']} | {b['median']:.2f} -> {a['median']:.2f} | "
                         f"{b['w12']:.0%} -> {a['w12']:.0%} | {b['w15']:.0%} -> {a['w15']:.0%} |")
    L += ["", "Proposed `[efficiency]` values (TOML; the TensorRT-LLM ones are the candidates for the presets, the "
          "llama.cpp ones describe that runtime's kernels; the fit rows are the `fit` rows of the full table "
          "below, of that runtime and generation):", "", "```toml"]
    for (group, gen), f in fits.items():
        L.append(f"# {gen}, {group}: fitted by benchmarks/llm_realism.py on {f['rows']} published rows "
                 f"({', '.join(sorted(f['devices']))}); not applied")
        L.append(f'"matmul.compute" = {f["matmul.compute"]:g}')
        L.append(f'"default.memory" = {f["default.memory"]:g}')
        L.append(f"overhead_s = {f['overhead_s']:.2g}")
    L += ["```", ""]
    # assumptions
    L += ["## Assumptions and known gaps (read before the numbers)", "",
          "- Devices: the published name is mapped to a preset where it is not one (the top of this file); "
          "such rows carry `*` in the table.",
          "- KV runtime: every row in place (`--kv-runtime in-place`): TensorRT-LLM and vLLM keep a paged cache, "
          "llama.cpp a preallocated one written in place. The exported contrast shows what the graph as exported "
          "would cost.",
          "- Attention is written out in these graphs (Q·Kᵀ, scale, mask, Softmax, ·V), as the torch exporters "
          "write eager attention, and the GPU kernel model does not fuse it: a prefill moves its P×P scores through "
          "memory four times per layer, where TensorRT-LLM, vLLM and llama.cpp with `-fa` keep them on chip. "
          "Long prompts (pp4096/8192, 5k and 20k inputs) are where this shows.",
          "- llama.cpp's pp runs the prompt in micro-batches of 512 (llama-bench's default n_ubatch); onnxperf "
          "prefills it in one pass.",
          "- FP4 (B200): `--precision fp4` puts every floating-point tensor, the KV cache included, at NVFP4 "
          "(4.5 bits); NVIDIA's NVFP4 checkpoints are usually served with an FP8 cache (not stated in the table), "
          "so the prediction moves less KV and fits larger batches than the runtime did. `--kv-precision fp8` on "
          "top of `--precision fp4` does not help yet (see the bug in the report of this change).",
          "- In-flight batching: the batch is not published; the prediction takes the best of the two largest "
          f"batches of the grid whose KV cache at input + output tokens fits {KV_FRACTION:.0%} of the memory left "
          f"after the weights (at most {MAX_BATCH}); activation memory is not subtracted.",
          "- Serving rows: the batch is the mean number of requests in flight by Little's law from the same "
          "published row (its throughput, TTFT and ITL); queueing, chunked prefill interleaved with decode, and "
          "the scheduler are not modelled, so serving TTFT and ITL are shown, not held to a target.",
          "- vLLM's post: weights assumed BF16, '~20k in, ~2k out' taken as 20,000 / 2,000.",
          "- llama.cpp rows are one person's community runs (the source says so): weigh them accordingly. Its F16 "
          "rows are tg512-8192 / pp512-8192 (llama-bench) and main's generation; the tg128 / pp512 rows proper "
          "(llama-bench's README, the r/LocalLLaMA post) are all Q4_0, weight-only, so not compared yet.",
          "- Mistral-7B's 4,096-token sliding window is not written in its graph; every published context of it "
          "is within the window.", ""]
    # checks
    L += ["## Checks", "", "Graphs (`benchmarks/make_llm_decode.py`, written to a temporary folder at run time):", "",
          "| config | nodes | file bytes | parameters | recognized (`summary --llm`) | decode MACs per token (context 128, "
          "less attention's 2·L·H·d·C) | / parameters | KV bytes per token | query heads per KV head |",
          "|---|---|---|---|---|---|---|---|---|"]
    for g in checks:
        L.append(f"| {g['config']} | {g['nodes']:,} | {g['bytes']:,} | {g['params']:,}"
                 f"{'' if g['graph_params'] in (None, g['params']) else ' (graph: ' + format(g['graph_params'], ',') + ')'} | "
                 f"{'Decoder LLM' if g['recognized'] else '**no**'} | {g['per_token']:,}"
                 f"{'' if g['macs'] == g['expected'] else ' (**expected ' + format(g['expected'], ',') + '**)'} | "
                 f"{g['per_token'] / g['params']:.4f} | {g['kv_per_token']:,} | {g['gqa']} |")
    L += ["", "Decode MACs per token equal the matrix products' weights exactly (every parameter but the "
          "embedding table, which a Gather reads, the norms' weights and the rotary inv_freq); the ratio to the "
          "parameter count is 1 less the embedding's share.", ""]
    if consist:
        dev = [abs(a / b - 1) for row in consist for k in ("decode", "prefill") if k in row
               for a, b in [row[k]] if a and b]
        L += [f"The per-device fast sum against `onnxperf.insights.llm.figures.figures()` (the CLI's path) at the "
              f"presets' constants: {len(dev)} latencies on {len(consist)} (model, device, precision) combinations, "
              f"largest relative difference {max(dev):.1e}.", ""]
    if interp:
        c = interp["case"]
        L += [f"Interpolation: {c.entry['model']} on {c.preset} ({c.precision}), static batch {c.entry['batch']}, "
              f"{c.entry['input_len']}/{c.entry['output_len']}: dec evaluated at {interp['samples']} contexts and "
              f"taken as linear between gives ratio {interp['sampled']:.4f}; every one of the {interp['evaluated']} "
              f"contexts gives {interp['exact']:.4f} (error {interp['error']:+.2e}). Rows sum dec over 3 sampled "
              "contexts (≤ 600 of them) or 5.", ""]
    # apart
    L += ["## Not compared", "", "| why | entries |", "|---|---|"]
    reasons: dict[str, int] = {}
    for e, why in apart:
        reasons[why] = reasons.get(why, 0) + 1
    for why, n in sorted(reasons.items(), key=lambda kv: -kv[1]):
        L.append(f"| {why} | {n} |")
    L += ["", "Multi-GPU rows (listed apart, not compared: tensor parallel is not modelled yet):", "",
          "| model | device | GPUs | runtime | metric | rows |", "|---|---|---|---|---|---|"]
    multi: dict[tuple, int] = {}
    for e, why in apart:
        if why.startswith("multi-GPU"):
            k = (e["model"], e["device"], e["device_count"], e["runtime_class"], e["metric"])
            multi[k] = multi.get(k, 0) + 1
    for k, n in sorted(multi.items(), key=lambda kv: tuple(str(x) for x in kv[0])):
        L.append(f"| {' | '.join(str(x) for x in k)} | {n} |")
    # full table
    L += ["", "## Every compared row", "",
          "| gen | model | device | precision | runtime | metric | B | in/out | predicted as | published | predicted | "
          "ratio | exported | half | fitted | source |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    fitted = {id(c): f"matmul.{f['precision']}.compute" for f in lows if f["applied"] for c in f["fit_rows"]}
    half = {}
    for (group, gen), f in fits.items():
        half.update({id(c): "fit" for c in f["fit_rows"]})
        half.update({id(c): "held" for c in f["held_rows"]})
    for c in sorted(cases, key=lambda c: (GENERATIONS.index(c.generation) if c.generation in GENERATIONS else 99,
                                          c.category, c.entry["model"], c.preset, c.precision,
                                          str(c.entry.get("batch")), str(c.entry.get("input_len")),
                                          str(c.entry.get("output_len")), str(c.entry.get("request_rate_qps")))):
        e, r = c.entry, ratios[id(c)]
        dev = c.preset + ("*" if c.mapped else "")
        prec = c.precision + (f" (KV {c.kv_precision})" if c.kv_precision else "")
        ex = f"{exported[id(c)]:.2f}" if exported else "-"
        L.append(f"| {c.generation} | {e['model']} | {dev} | {prec} | {e['runtime_class']} | {c.category} "
                 f"({e['metric']}{', ' + e['stat'] if e.get('stat') else ''}) | {e.get('batch') or '-'} | "
                 f"{e.get('input_len') if e.get('input_len') is not None else '-'}/"
                 f"{e.get('output_len') if e.get('output_len') is not None else '-'} | {c.how}"
                 f"{'; best ' + chosen[id(c)] if len(c.candidates) > 1 else ''} | "
                 f"{_value(c, c.published)} | {_value(c, predicted_value(c, r))} | {r:.2f} | {ex} | "
                 f"{half.get(id(c), '-')} | {fitted.get(id(c), '-')} | {_src(e)} |")
    L += ["", "`*`: the published device name maps to that preset (see the top). `fitted`: the constant of a "
          "preset this row was fitted on (its error is in sample; `benchmarks/llm_bands.py` leaves it out).", ""]
    return "\n".join(L)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=None, help=f"default {OUT.relative_to(ROOT)} (--quick: a temporary file)")
    ap.add_argument("--quick", action="store_true",
                    help="Llama-3-8B / Llama-2-7B rows on H100 SXM, A100 80GB and L40S only; no exported contrast, "
                         "no interpolation check")
    ap.add_argument("--graphs", default=None, help="folder for the generated graphs (default: a temporary one)")
    ap.add_argument("--fit-low", action="store_true",
                    help="only the fit of the fp8 / fp4 GEMM share (matmul.<p>.compute) on its rows; prints its table")
    ap.add_argument("--fit-runtime", action="store_true",
                    help="only the fit of the llama.cpp runtime profile on its rows; prints its section")
    ap.add_argument("--write", action="store_true",
                    help="write the fitted fp8 / fp4 GEMM shares into the presets (with --fit-low, or after a full run: "
                         "its predictions use the presets as they were, and its table says whether they agree); with "
                         "--fit-runtime, the runtime profile into onnxperf/hardware/runtimes.toml")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    data = json.loads(PUBLISHED.read_text())
    entries = data["entries"]
    sib = serving_siblings(entries)
    cases, apart = [], []
    for e in entries:
        p = plan(e, sib)
        (cases.append(p) if isinstance(p, Case) else apart.append((e, p)))
    if args.fit_low:
        with tempfile.TemporaryDirectory() as tmp:
            eng = Engine(Path(args.graphs) if args.graphs else Path(tmp), IN_PLACE)
            lows = fit_low(cases, split(cases)[0], eng)
            if args.write:
                changed = write_low(lows)
                print(f"wrote {', '.join(changed) or 'nothing'}", file=sys.stderr)
                eng._specs.clear()  # the presets as written
            print("\n".join(low_section(lows, eng)))
        return 0
    if args.fit_runtime:
        with tempfile.TemporaryDirectory() as tmp:
            eng = Engine(Path(args.graphs) if args.graphs else Path(tmp), IN_PLACE)
            rt = fit_runtime(cases, split(cases)[0], eng)
            if args.write and rt is not None:
                write_runtime(rt)
                print(f"wrote {RUNTIMES_FILE.relative_to(ROOT)}", file=sys.stderr)
                eng._specs.clear()
            print("\n".join(runtime_section(rt, eng)))
        return 0
    if args.quick:
        keep = [c for c in cases if c.config in ("llama-3-8b", "llama-2-7b") and c.device in ("h100-sxm", "a100-80gb", "l40s")]
        apart += [(c.entry, "left out by --quick") for c in cases if c not in keep]
        cases = keep
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.graphs) if args.graphs else Path(tmp)
        eng = Engine(folder, IN_PLACE)
        ratios, chosen = {}, {}
        for k, c in enumerate(cases):
            ratios[id(c)], chosen[id(c)] = predict(c, eng)
            if k % 50 == 0:
                print(f"  {k}/{len(cases)} rows, {eng.analyses} analyses, {time.perf_counter() - t0:.0f} s", file=sys.stderr)
        configs = sorted({c.config for c in cases})
        checks = graph_checks(eng, configs[:1] if args.quick else configs)
        consist = consistency(eng, cases, args.quick)
        interp = None if args.quick else interpolation_check(eng, cases)
        fit_half, held_half = split(cases)
        fits = {}
        for (group, runtimes), gen in itertools.product(FIT_GROUPS.items(), GENERATIONS):
            fc = [c for c in fit_half if c.generation == gen and c.entry["runtime_class"] in runtimes]
            f = fit_generation(fc, eng)
            if f is None:
                continue
            fc = [c for c in fc if c.category in FIT_CATEGORIES]
            held = [c for c in held_half if c.generation == gen and c.category in FIT_CATEGORIES
                    and c.entry["runtime_class"] in runtimes]
            eff = {k: f[k] for k in FIT_KEYS}
            after = {id(c): predict(c, eng, eff)[0] for c in held}
            f["shipped"] = {k: float(eng.spec(fc[0].preset).efficiency[k]) for k in FIT_KEYS}
            f["fit_before"] = stats([ratios[id(c)] for c in fc])["rms_log"]
            f["held_before"] = stats([ratios[id(c)] for c in held])
            f["held_after"] = stats(list(after.values()))
            f["by_cat"] = {cat: (stats([ratios[id(c)] for c in held if c.category == cat]),
                                 stats([after[id(c)] for c in held if c.category == cat])) for cat in CATEGORIES}
            f["devices"] = {c.preset for c in fc}
            f["fit_rows"], f["held_rows"] = fc, held
            fits[(group, gen)] = f
        lows = fit_low(cases, fit_half, eng)
        rt = fit_runtime(cases, fit_half, eng)
        if args.write and not args.quick:
            print(f"wrote {', '.join(write_low(lows)) or 'nothing'}", file=sys.stderr)
            eng._specs.clear()  # the table's 'in the presets' reads them as written
        exported = {}
        if not args.quick:
            ex = Engine(folder, EXPORTED)
            for c in cases:
                exported[id(c)] = predict(c, ex)[0]
        elapsed = time.perf_counter() - t0
        text = report(cases, apart, ratios, exported, checks, consist, interp, fits, (fit_half, held_half), elapsed,
                      args.quick, chosen, lows, eng, rt)
    out = Path(args.out) if args.out else (Path(tempfile.gettempdir()) / "llm_realism_quick.md" if args.quick else OUT)
    out.write_text(text)
    print(f"{out}: {len(cases)} rows compared, {eng.analyses} analyses in place "
          f"({eng.seconds:.0f} s), {elapsed:.0f} s in all", file=sys.stderr)
    i = text.index("## The issue's targets")
    print(text[i:text.index("## Fit proposal")])
    return 0


if __name__ == "__main__":
    sys.exit(main())
