"""GPU realism without a GPU: onnxperf's predictions beside published whole-model measurements.

    python benchmarks/gpu_realism.py [--out benchmarks/results/gpu_realism.md]
    python benchmarks/gpu_realism.py --fit            # fit each generation's constants on its fit half (with
                                                      # each GPU's L2 level), print them
    python benchmarks/gpu_realism.py --fit --write    # ... and write them and the L2 levels into every preset,
                                                      # and the mlperf runtime profile into runtimes.toml
    python benchmarks/gpu_realism.py --fit --no-l2    # the fit without the L2 levels (for contrast; not written)
    python benchmarks/gpu_realism.py --bands          # recompute every class's band from its held-out rows, write it
                                                      # (and the mlperf profile's band)

Published figures, the ``tensorrt`` rows (a TensorRT engine timed on its own) of three files:
``benchmarks/published/gpu_inference.json`` (Paddle-TRT ResNet-50 batch sweeps on A100 80GB and A10,
TensorRT demo/BERT latency sweeps on A100 40GB and T4, MLPerf Inference v3.1 closed results on H100
PCIe / SXM, L4 and Jetson AGX Orin), ``benchmarks/published/bert_extra.json`` (the same schema:
TensorRT demo/BERT latency sweeps on L40S, L4 and A30) and the ResNet-50 MLPerf Offline rows of
``benchmarks/published/llm_inference.json`` (v4.0 H100 SXM, v4.1 GH200 96GB: ``samples_per_s``).
A ``bert_extra.json`` table with ``device_label_conflict`` (headed L4 at TensorRT 10.7, relabelled A30
by a later commit with every number unchanged) is shown apart, neither fitted nor scored: its numbers
repeat the L4 table of an earlier release within a few percent, so it adds no independent L4 point,
and its label is not certain enough to make it an A30 one. Models: ``models/resnet50_torch.onnx``
(torchvision ResNet-50 = v1.5) and ``benchmarks/models/bert_{base,large}_legacy.onnx`` (transformers
BertModel, ``make_bert.py``), predicted with the device's preset (the GPU kernel model of
:mod:`onnxperf.predict.gpu_kernels`) at the published batch, sequence and precision.

Scenarios: ``fixed_batch``: throughput = batch / latency (the published average latency where no
throughput is given); MLPerf ``SingleStream``: batch 1 latency (p50); ``MultiStream``: 8 samples per
query, latency (p50) of batch 8; ``Offline``: the best predicted throughput over batches 1..1024 (the
harness picks its batch and does not say). ratio = predicted / published throughput (for latencies:
published / predicted), which is the measured time over the predicted time per item: above 1 means
onnxperf is optimistic. A band's p10 / p90 are percentiles of this ratio, so that a predicted time t
bounds the measured one by t·p10 .. t·p90 (:class:`onnxperf.predict.roofline.Band`).

The MLPerf rows are NVIDIA's own harness (its int8 convolution plugins, CUDA graphs, a batch per GPU that
keeps activations in the L2), not a framework's TensorRT integration: they are predicted under the
``mlperf`` runtime profile (``--hw ID:mlperf``, :data:`HARNESS`), whose figures (:func:`fit_profile`) are
fitted on every second MLPerf row of each class, pooled, and scored on the others; the classes' constants
are fitted on the other rows.

Device classes (:data:`CLASSES`) are GPU generations; every preset of a class carries its constants.
The rows of a class are split once, deterministically, into a fit half and a held-out half
(:func:`split`): in a batch sweep (one model, sequence, device and precision; every release of the
table alike) the batches at even positions of the sorted grid are fitted and those at odd positions
held out; single points (MLPerf) are sorted by device, scenario and source within their class and
alternate, the first fitted (they fit the harness profile). :func:`fit` searches a grid of ``conv.compute``, ``matmul.compute``, ``default.memory``,
``overhead_s`` and ``gpu.outputs_per_sm`` for the least mean squared log ratio on the fit half (every
row the same weight), plus a small pull towards the A100 constants fitted
before (:data:`A100`) so that a constant its rows say nothing about keeps that value. ``gpu.outputs_per_sm``
is the fp16 figure: a kernel at a faster peak (the int8 rows) fills the GPU at that many times the outputs, as
the library has it (:func:`onnxperf.predict.roofline.half_rate_outputs`); the page sets the constants refitted
with one figure for every precision beside them. A class
without published rows takes a donor class's constants (:data:`DONORS`). No source gives a per-run
figure, so ``overhead_run_s`` stays 0 in every preset.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import math
import re
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
from onnxperf.hardware.runtimes import apply_runtime, profiles  # noqa: E402
from onnxperf.hardware.spec import MemoryLevel  # noqa: E402
from onnxperf.predict.reuse import level_bytes_rw  # noqa: E402
from onnxperf.predict.roofline import charged_bytes, fill, half_rate_outputs, node_roofline, op_keys, roofline  # noqa: E402
from onnxperf.predict.gpu_kernels import kernel_plan  # noqa: E402

PUBLISHED = ROOT / "benchmarks" / "published" / "gpu_inference.json"
EXTRA = ROOT / "benchmarks" / "published" / "bert_extra.json"
LLM_FILE = ROOT / "benchmarks" / "published" / "llm_inference.json"
MLPERF = ROOT / "benchmarks" / "published" / "mlperf_resnet.json"
#: the file whose rows came after the constants were fitted: every comparable row of it is held out (:func:`split`)
LATE = "mlperf_resnet.json"
#: the runtime profile of NVIDIA's MLPerf Inference harness (``--hw ID:mlperf``), whose rows it is fitted on
HARNESS = "mlperf"
RUNTIMES = ROOT / "onnxperf" / "hardware" / "runtimes.toml"
#: where NVIDIA's harness picks its Offline batch per GPU (the L4's keeps activations in its L2)
HARNESS_CONFIG = ("NVIDIA's MLPerf Inference v3.0 submission, closed/NVIDIA/configs/resnet50/Offline/__init__.py "
                  "(mlcommons/inference_results_v3.0@dad59af09e9e62eceec4bee48794e201d6cf9170): L4x1 "
                  "gpu_batch_size = 32, use_graphs = True; A100, H100 and L40 2048")
PRESETS = ROOT / "onnxperf" / "hardware" / "presets"
MODELS = {
    "resnet50": ROOT / "models" / "resnet50_torch.onnx",
    "bert-base": ROOT / "benchmarks" / "models" / "bert_base_legacy.onnx",
    "bert-large": ROOT / "benchmarks" / "models" / "bert_large_legacy.onnx",
}
OFFLINE_BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
KNEE = 0.9

#: device class (GPU generation) -> its presets
CLASSES = {
    "turing": ("t4",),
    "volta": ("v100-sxm2-32gb",),
    "ampere": ("a100-40gb", "a100-80gb", "a10", "a30", "a40", "rtx3090"),
    "ampere-jetson": ("jetson-orin", "jetson-orin-nx-16gb", "jetson-orin-nano-8gb"),
    "ada": ("l4", "l40s", "rtx4090", "rtx6000-ada"),
    "hopper": ("h100-sxm", "h100-pcie", "h100-nvl", "h200", "gh200-96gb", "gh200-144gb", "h20"),
    "blackwell": ("b200",),
    "blackwell-geforce": ("rtx5090",),
    "cdna3": ("mi300x",),
}
#: a class without published rows -> the class whose constants it takes, and why
DONORS = {
    "volta": ("turing", "no published TensorRT row on a Volta GPU; the preset's notes name the T4's constants "
                        "(Turing's SM and first tensor cores are Volta's)"),
    "ampere-jetson": ("ampere", "the Jetson's GPU is an Ampere SM, and it has no published row outside NVIDIA's "
                                "MLPerf harness (whose rows fit the mlperf runtime profile)"),
    "blackwell": ("hopper", "no published ResNet-50 or BERT row on a Blackwell GPU"),
    "blackwell-geforce": ("ada", "no published ResNet-50 or BERT row on a Blackwell GPU; the preset's notes name "
                                 "the RTX 4090's constants (a GeForce card with GDDR memory, as the Ada ones)"),
    "cdna3": ("hopper", "no published ResNet-50 or BERT row on an AMD GPU; the preset's notes name the H100 SXM's "
                        "constants (TensorRT's fusions assumed)"),
}
CLASS_OF = {p: c for c, ps in CLASSES.items() for p in ps}
#: the constants each generation fits
FIT_KEYS = ("conv.compute", "matmul.compute", "default.memory", "overhead_s", "gpu.outputs_per_sm")
#: the constants every GPU preset shipped before the per-generation fit (fitted on the A100 rows alone)
A100 = {"conv.compute": 0.4, "matmul.compute": 0.9, "default.memory": 0.9, "overhead_s": 2e-6,
        "gpu.outputs_per_sm": 4096}
#: the grid :func:`fit` searches
GRID = {
    "conv.compute": tuple(round(0.2 + 0.05 * i, 2) for i in range(15)),
    "matmul.compute": tuple(round(0.2 + 0.05 * i, 2) for i in range(15)),
    "default.memory": (0.5, 0.6, 0.7, 0.8, 0.9),
    "overhead_s": tuple(x * 1e-6 for x in (0.5, 1, 1.5, 2, 3, 4, 5, 6, 8)),
    "gpu.outputs_per_sm": (512, 1024, 2048, 4096, 8192, 16384, 32768),
}
MIB = 2 ** 20
#: L2 capacity of a preset's device (bytes) and where it is stated; the presets left out state none that
#: was checked (h20, b200, rtx5090, mi300x, the Jetson Orin NX and Nano)
L2_CAPACITY = {
    "t4": (4 * MIB, "NVIDIA Turing GPU Architecture whitepaper, Tesla T4 (TU104): 4,096 KB L2"),
    "v100-sxm2-32gb": (6 * MIB, "NVIDIA Tesla V100 GPU Architecture whitepaper: 6,144 KB L2"),
    "a100-40gb": (40 * MIB, "NVIDIA A100 Tensor Core GPU Architecture whitepaper: 40 MB L2"),
    "a100-80gb": (40 * MIB, "NVIDIA A100 Tensor Core GPU Architecture whitepaper: 40 MB L2"),
    "a30": (24 * MIB, "reported, not stated by NVIDIA (TechPowerUp GPU database: A30 PCIe, 24 MB L2)"),
    "a10": (6 * MIB, "NVIDIA Ampere GA102 GPU Architecture whitepaper: GA102, 6,144 KB L2"),
    "a40": (6 * MIB, "NVIDIA Ampere GA102 GPU Architecture whitepaper: GA102, 6,144 KB L2"),
    "rtx3090": (6 * MIB, "NVIDIA Ampere GA102 GPU Architecture whitepaper: RTX 3090, 6,144 KB L2"),
    "jetson-orin": (4 * MIB, "NVIDIA Jetson AGX Orin Series Technical Brief: the GPU's 4 MB L2"),
    "l4": (48 * MIB, "reported, not stated by NVIDIA (TechPowerUp GPU database: L4 (AD104), 48 MB L2)"),
    "l40s": (96 * MIB, "the full AD102's L2 (NVIDIA Ada GPU Architecture whitepaper: 98,304 KB), every memory "
                       "controller enabled (384-bit); NVIDIA's L40S documents state none"),
    "rtx6000-ada": (96 * MIB, "the full AD102's L2 (NVIDIA Ada GPU Architecture whitepaper: 98,304 KB), every "
                              "memory controller enabled (384-bit)"),
    "rtx4090": (72 * MIB, "NVIDIA Ada GPU Architecture whitepaper: RTX 4090, 73,728 KB L2"),
    "h100-sxm": (50 * MIB, "NVIDIA H100 Tensor Core GPU Architecture whitepaper: H100 SXM5, 50 MB L2"),
    "h100-pcie": (50 * MIB, "NVIDIA H100 Tensor Core GPU Architecture whitepaper: H100 PCIe, 50 MB L2"),
    "h100-nvl": (50 * MIB, "the GH100 configuration of the H100 (H100 whitepaper: 50 MB L2)"),
    "h200": (50 * MIB, "the GH100 configuration of the H100 SXM5 (H100 whitepaper: 50 MB L2)"),
    "gh200-96gb": (50 * MIB, "the GH100 configuration of the H100 SXM5 (H100 whitepaper: 50 MB L2)"),
    "gh200-144gb": (50 * MIB, "the GH100 configuration of the H100 SXM5 (H100 whitepaper: 50 MB L2)"),
}
#: the L2 of an H200 measured on this workplace's lent GPU (``python benchmarks/gpu_l2.py measure``)
MEASURED_L2 = ROOT / "benchmarks" / "measured" / "gpu_l2_h200.json"


def measured_l2(path: Path = MEASURED_L2) -> tuple[int, float, str]:
    """(capacity bytes, read bytes per clock per SM, what) of the measured GPU's L2: the capacity the device
    reports, and the median read bandwidth over footprints of at most half of it (L1 bypassed) over SMs
    times the SM clock read after the run."""
    m = json.loads(path.read_text())
    cap = int(m["l2_cache_size_bytes"])
    bws = [r["bytes_per_s"] for r in m["read"] if r["bytes"] <= cap // 2]
    clock = float(m["smi_after"]["clocks.sm"].split()[0]) * 1e6
    bw = statistics.median(bws)
    return cap, bw / (m["sms"] * clock), (f"{m['device']}, {m['date']}: {bw / 1e12:.2f} TB/s median read over "
                                          f"footprints of 1-{cap // 2 // MIB} MiB at {clock / 1e9:.2f} GHz, "
                                          f"{m['sms']} SMs; {path.relative_to(ROOT)}")


L2_CAPACITY["h200"] = (measured_l2()[0], "device-reported: L2_cache_size of an H200 of this workplace, "
                       f"{measured_l2()[0]:,} bytes ({MEASURED_L2.relative_to(ROOT)}); the H100 whitepaper's 50 MB "
                       "is the H100's")
#: L2 read bytes per clock per SM, NVIDIA A100 Tensor Core GPU Architecture whitepaper: 5,120 bytes/clk
#: for the A100's 108 SMs, 2,048 for the V100's 80 (7,219 and 3,133 GB/s at 1,410 and 1,530 MHz)
#: Hopper's measured on an H200 (:func:`measured_l2`: NVIDIA states none)
L2_PER_SM_CLK = {"ampere": 5120 / 108, "volta": 2048 / 80, "hopper": measured_l2()[1]}
#: the generation whose per-SM rate a class's L2 bandwidth takes: NVIDIA states none for Turing, Ada,
#: Hopper (derived or measured, and said so in :func:`l2_level`)
L2_RATE_OF = {"turing": "volta", "volta": "volta", "ampere": "ampere", "ampere-jetson": "ampere", "ada": "ampere",
              "hopper": "hopper", "blackwell": "ampere", "blackwell-geforce": "ampere"}
#: FP32 lanes per SM (Turing, Volta, GA100: 64; GA102 / Orin, Ada, Hopper, Blackwell: 128)
LANES_64 = ("t4", "v100-sxm2-32gb", "a100-40gb", "a100-80gb", "a30")


def l2_level(device: str, scale: float = 1.0) -> tuple[int, float, str] | None:
    """(capacity bytes, bandwidth bytes/s, source) of a preset's L2, None where no capacity is stated:

        β_L2 = r · SMs · clock = r · fp32 peak / (2 · lanes),   clock = fp32 peak / (2 · lanes · SMs)

    r the generation's L2 bytes per clock per SM (:data:`L2_PER_SM_CLK`), lanes the FP32 lanes per SM;
    ``scale`` multiplies β_L2 (the sensitivity check)."""
    if device not in L2_CAPACITY or CLASS_OF[device] not in L2_RATE_OF:
        return None
    cap, src = L2_CAPACITY[device]
    gen = L2_RATE_OF[CLASS_OF[device]]
    spec = load_preset(device)
    lanes = 64 if device in LANES_64 else 128
    bw = L2_PER_SM_CLK[gen] * spec.peak_flops_per_s["fp32"] / (2 * lanes) * scale
    how = ("the A100 whitepaper's figure" if device.startswith("a100") else
           f"measured: {L2_PER_SM_CLK[gen]:.1f} bytes/clk per SM on an H200 ({measured_l2()[2]}) x "
           f"{int(spec.efficiency['gpu.sms'])} SMs x the clock of the fp32 peak "
           f"({spec.peak_flops_per_s['fp32'] / (2 * lanes * spec.efficiency['gpu.sms']) / 1e9:.3g} GHz)"
           if gen == "hopper" else
           f"derived: {'Volta' if gen == 'volta' else 'Ampere (A100)'}'s {L2_PER_SM_CLK[gen]:.1f} bytes/clk per SM "
           f"(A100 whitepaper) x {int(spec.efficiency['gpu.sms'])} SMs x the clock of the fp32 peak "
           f"({spec.peak_flops_per_s['fp32'] / (2 * lanes * spec.efficiency['gpu.sms']) / 1e9:.3g} GHz)"
           + ("" if gen == CLASS_OF[device] or CLASS_OF[device] == "ampere-jetson"
              else f"; NVIDIA states no L2 bandwidth for {CLASS_OF[device].capitalize()}, so Ampere's per-SM rate"
              if gen == "ampere" else "; Turing's L2 taken as Volta's per SM (Jia et al. 2019, Dissecting the NVIDIA "
              "Turing T4 GPU via Microbenchmarking: TU104's memory hierarchy is as deep as GV100's)"))
    return cap, bw, f"capacity: {src}; bandwidth {bw / 1e12:.3g} TB/s, {how}"


def l2_table(scale: float = 1.0) -> dict[str, tuple[int, float]]:
    """preset -> (capacity, bandwidth) for every preset with an L2 level."""
    out = {}
    for p in CLASS_OF:
        lv = l2_level(p, scale)
        if lv is not None:
            out[p] = lv[:2]
    return out


def shipped_l2() -> dict[str, tuple[int, float]]:
    """preset -> (capacity, bandwidth) of the L2 level its file ships (``[[memory_levels]]``), for every
    preset that ships one: what the library's kernel model charges (:func:`fast_ratio` with it is the
    library's prediction)."""
    out = {}
    for p in CLASS_OF:
        lv = load_preset(p).memory_levels
        if lv:
            out[p] = (lv[0].capacity_bytes, lv[0].bandwidth_bytes_per_s)
    return out


#: weight of the pull towards :data:`A100` (per constant, squared log of the ratio)
PULL = 1e-3
E_OTHER = 0.5  # default.compute, not fitted (pointwise and normalization kernels are memory-bound)


# ---------------------------------------------------------------------------------------------- rows

def _tensorrt(path: Path, name: str) -> list[dict]:
    data = json.loads(path.read_text())
    return [{**e, "_file": name, "_id": f"{name}#{i}"} for i, e in enumerate(data["entries"])
            if e["runtime_class"] == "tensorrt"]


def _llm_file_rows() -> list[dict]:
    """The ResNet-50 MLPerf Offline throughputs of llm_inference.json, in gpu_inference.json's schema.
    NVIDIA's closed ResNet-50 harness runs INT8 (the GH200 rows state it; the v3.1 rows of
    gpu_inference.json too); an entry that states no precision is taken as INT8, and said so."""
    data = json.loads(LLM_FILE.read_text())
    out = []
    for i, e in enumerate(data["entries"]):
        if e.get("model") != "resnet50" or e.get("scenario") != "mlperf_offline" or e.get("metric") != "samples_per_s" \
                or e.get("device_count") != 1 or e.get("device") not in CLASS_OF:
            continue
        stated = (e.get("precision") or {}).get("weight_data_types")
        note = ("precision as stated" if stated else
                "precision not stated in the entry: INT8, as NVIDIA's closed ResNet-50 harness")
        out.append({"model": "resnet50", "seq_len": None, "device": e["device"], "precision": "int8", "batch": None,
                    "scenario": "mlperf_offline", "throughput_items_per_s": e["value"], "runtime": e["runtime"],
                    "runtime_class": "tensorrt", "source": e["source"], "note": f"llm_inference.json ({note})",
                    "_file": "llm_inference.json", "_id": f"llm_inference.json#{i}"})
    return out


def entries() -> list[dict]:
    """Every published TensorRT row, each with ``_file``, ``_id`` and its device ``_class``."""
    late = [e for e in _tensorrt(MLPERF, LATE) if e["device"] in CLASS_OF]  # a100-pcie-80gb, a2, l40: no preset
    rows = (_tensorrt(PUBLISHED, "gpu_inference.json") + _tensorrt(EXTRA, "bert_extra.json") + _llm_file_rows() + late)
    return [{**e, "_class": CLASS_OF[e["device"]]} for e in rows]


def dims(e: dict, batch: int) -> dict:
    d = {"batch": batch}
    if e["model"].startswith("bert"):
        d["sequence"] = e["seq_len"]
    return d


def _seq(e):
    return e["seq_len"] if e["model"].startswith("bert") else None


def family(e: dict) -> str:
    return "CNN" if e["model"] == "resnet50" else "BERT"


def harness(e: dict) -> bool:
    """A row of NVIDIA's MLPerf Inference harness (every MLPerf scenario: its TensorRT harness, run by NVIDIA
    and by the submitters that use its code): predicted under the :data:`HARNESS` runtime profile, which is
    fitted on these rows alone; the classes' constants are fitted on the other rows."""
    return e["scenario"].startswith("mlperf")


def profile_sets() -> dict:
    """The :data:`HARNESS` profile's figures as shipped (``runtimes.toml``)."""
    return dict(profiles()[HARNESS].sets)


def with_profile(e: dict, eff: dict, sets: dict | None = None) -> dict:
    """``eff`` for row ``e``: with the harness profile's figures (``sets``, default as shipped) on a
    :func:`harness` row."""
    return {**eff, **(profile_sets() if sets is None else sets)} if harness(e) else eff


def row_constants(e: dict) -> dict:
    """The constants a row is predicted with as shipped: its preset's, under the profile on a harness row."""
    return with_profile(e, constants(e["device"]))


def not_comparable(e: dict) -> str | None:
    """Why a published row does not measure the work onnxperf predicts (or its device is uncertain), or None."""
    if e["model"] == "bert-large" and e["scenario"].startswith("mlperf"):
        return "MLPerf bert-99 runs unpadded variable-length sequences (<= 384): less work than the padded seq-384 pass"
    if "NOT GPU-only" in (e.get("note") or ""):
        return "GPU and both DLAs together (uses_dla=true): not the GPU alone"
    if e.get("mig"):
        return f"a MIG slice ({e['mig']}): a fraction of the GPU, not the device the preset describes"
    if e.get("power_capped"):
        return "a MaxQ submission (power-capped): the preset's peaks are the data sheet's, at full power"
    if "uses_dla" in e and e["uses_dla"] is not False:
        return "the system description does not rule out the DLAs (uses_dla unknown): maybe not the GPU alone"
    if e["scenario"] == "mlperf_server":
        return "MLPerf Server: Poisson arrivals under a latency bound, not the device's best throughput"
    if e.get("device_label_conflict"):
        return ("device label conflict: headed L4 at TensorRT 10.7, relabelled A30 by a later commit with the same "
                "numbers (within a few percent of the L4 table of 10.2): neither fitted nor scored")
    return None


def published_throughput(e: dict) -> float:
    if e.get("throughput_items_per_s") and e["scenario"] in ("fixed_batch", "mlperf_offline", "mlperf_server"):
        return e["throughput_items_per_s"]
    lat = e["latency_s"]
    key = "p50" if "p50" in lat else "avg"
    batch = 8 if e["scenario"] == "mlperf_multi_stream" else (e["batch"] or 1)
    return batch / lat[key]


def row_batches(e: dict) -> tuple[int, ...]:
    if e["scenario"] in ("mlperf_offline", "mlperf_server"):
        return OFFLINE_BATCHES
    if e["scenario"] == "mlperf_multi_stream":
        return (8,)
    return (e["batch"] or 1,)


def split(rows: list[dict]) -> dict[str, str]:
    """``_id`` -> "fit" or "held" for every comparable row (see the module text): in a sweep, even positions
    of the sorted batch grid fit and odd ones are held out (every release of a table alike, so a measurement
    repeated in two releases never sits on both sides); MLPerf points (:func:`harness` rows: they fit the
    harness's runtime profile, pooled over the classes) alternate within each class in (device, scenario,
    source) order, the first fitted. A class with a donor (its constants fitted elsewhere) holds its other
    rows out."""
    out: dict[str, str] = {}
    grids: dict[tuple, set] = {}
    single: dict[tuple, list[dict]] = {}
    ok = [e for e in rows if not_comparable(e) is None]
    for e in ok:
        if e["scenario"] == "fixed_batch":
            grids.setdefault((e["model"], e.get("seq_len"), e["device"], e["precision"]), set()).add(e["batch"])
        else:
            single.setdefault((e["_class"], e["model"]), []).append(e)
    pos = {k: {b: i for i, b in enumerate(sorted(v))} for k, v in grids.items()}
    for e in ok:
        if e["scenario"] == "fixed_batch":
            i = pos[(e["model"], e.get("seq_len"), e["device"], e["precision"])][e["batch"]]
            out[e["_id"]] = "fit" if i % 2 == 0 else "held"
    for _, es in sorted(single.items()):
        es = sorted(es, key=lambda e: (e["device"], e["scenario"], e["source"].get("commit", ""),
                                       e["source"].get("path", ""), e["_id"]))
        for i, e in enumerate(es):
            out[e["_id"]] = "fit" if i % 2 == 0 else "held"
    for e in ok:
        if e["_class"] in DONORS and not harness(e):
            out[e["_id"]] = "held"
    return out


# ------------------------------------------------------------------------------------- predictions

@lru_cache(maxsize=None)
def _analysis(model: str, batch: int, seq: int | None, precision: str):
    d = {"batch": batch} if seq is None else {"batch": batch, "sequence": seq}
    return P.what_if(analyze(str(MODELS[model]), dims=d), P.get(precision))


@lru_cache(maxsize=None)
def _spec(device: str, eff: tuple | None = None, runtime: str | None = None):
    spec = load_preset(device)
    if runtime is not None:
        spec = apply_runtime(spec, profiles()[runtime], f"{device}:{runtime}")
    if eff is not None:
        spec = dataclasses.replace(spec, efficiency={**spec.efficiency, **dict(eff)})
    return spec


def predict_latency(model: str, batch: int, seq: int | None, device: str, precision: str, eff=None,
                    runtime: str | None = None) -> float:
    """The library's prediction (the full execution plan) with the preset as shipped (under the runtime
    profile ``runtime``: ``--hw device:runtime``), or with ``eff`` merged into its [efficiency]."""
    spec = _spec(device, None if eff is None else tuple(sorted(eff.items())), runtime)
    return roofline(_analysis(model, batch, seq, precision), spec, P.get(precision)).latency_s


@lru_cache(maxsize=None)
def _nodes(model: str, batch: int, seq: int | None, device: str, precision: str, l2_bytes: int | None = None,
           scaled: bool = True, held: bool = False):
    """Per node that runs: (family index, compute s, bytes its kernel reads for it, bytes it writes, the
    shares of its reads and of its writes an L2 of ``l2_bytes`` holds, output elements over the fill
    constant's scale at its peak (:func:`onnxperf.predict.roofline.half_rate_outputs`) or inf, the index of
    its kernel), and the kernels launched, at efficiency 1 with no fill (see :func:`_parts`). ``held``: an
    output that fits the L2 is charged there (``gpu.l2_writes``: :mod:`onnxperf.predict.reuse`)."""
    a = _analysis(model, batch, seq, precision)
    spec = load_preset(device)
    unit = dataclasses.replace(spec, efficiency={"fusion.gpu": 1}, efficiency_sources={}, memory_levels=())
    key, ops = P.get(precision).peak_key, op_keys(a)
    raw = {n.key: node_roofline(n, unit, key, ops.get(n.key)) for n in a.main_nodes}
    plan = kernel_plan(a)
    charged = charged_bytes(a.main_nodes, plan, {k for k, x in raw.items() if x.time_s is not None})
    rw = level_bytes_rw(a, (l2_bytes,), gpu=True, writes_held=held) if l2_bytes else {}
    fam, c, qr, qw, hr, hw, out, kid = [], [], [], [], [], [], [], []
    kernels: dict[str, int] = {}
    share = lambda v: v[0] / sum(v) if sum(v) else 0.0  # noqa: E731
    base = half_rate_outputs(spec)  # the fill constant at the fp16 rate
    for n in a.main_nodes:
        if n.key not in charged:
            continue
        x = raw[n.key]
        rd, wr = rw.get(n.key, ((0.0, 0.0), (0.0, 0.0)))
        fam.append({"conv": 0, "matmul": 1}.get(n.family, 2))
        c.append(x.compute_s)
        qr.append(float(charged[n.key][0]))
        qw.append(float(charged[n.key][1]))
        hr.append(share(rd))
        hw.append(share(wr))
        kid.append(kernels.setdefault(plan.kernel.get(n.key, n.key), len(kernels)))
        o = n.outputs[0].shape if n.outputs and n.outputs[0] is not None else None
        # the fill constant at this node's peak over the one at fp16 divides its outputs (fill depends on N / k)
        scale = half_rate_outputs(spec, x.peak_ops_per_s) / base if scaled and base else 1.0
        out.append(np.inf if fill(n, spec) == 1.0 or n.key not in plan.launches else float(np.prod(o)) / scale)
    arr = np.array
    return (arr(fam), arr(c), arr(qr), arr(qw), arr(hr), arr(hw), arr(out), plan.kernel_count,
            arr(kid, dtype=np.intp))


def _parts(model: str, batch: int, seq: int | None, device: str, precision: str, l2: tuple | None = None,
           scaled: bool = True, held: bool = False):
    """Per node that runs: (family index, compute s, memory s, output elements or inf), the kernels launched
    and each node's kernel index, at efficiency 1 with no fill: the kernel model's time
    (:func:`onnxperf.predict.roofline._as_kernels`) is then

        Σ_K max(Σ_{i∈K} c_i / (e_c,i·f_i), Σ_{i∈K} m_i / e_m) + kernels·o,   f = N / (N + sms·k)

    evaluated fast for the fit (:func:`fast_latency`); m = Q / β for Q the bytes the kernel plan charges.
    ``l2`` = (capacity bytes, bandwidth bytes/s): an L2 level, a node's kernel reads and writes split over
    L2 and DRAM in the proportions the reuse model gives its own (:func:`onnxperf.predict.reuse.level_bytes_rw`
    for a GPU: writes at DRAM), as the library's kernel model charges them,

        m = R·(h_r / β_L2 + (1 − h_r) / β) + W·(h_w / β_L2 + (1 − h_w) / β)"""
    fam, c, qr, qw, hr, hw, out, k, kid = _nodes(model, batch, seq, device, precision, l2[0] if l2 else None, scaled,
                                                 held)
    bw = load_preset(device).memory_bandwidth_bytes_per_s
    m = (qr * (hr / l2[1] + (1 - hr) / bw) + qw * (hw / l2[1] + (1 - hw) / bw)) if l2 else (qr + qw) / bw
    return fam, c, m, out, k, kid


def _per_kernel(kid: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Σ of ``x`` over each kernel's members (kernel index ``kid``)."""
    return np.bincount(kid, weights=x, minlength=int(kid.max()) + 1 if len(kid) else 0)


def fast_latency(parts, eff: dict, sms: float) -> float:
    """The kernel model's latency from :func:`_parts` with the constants ``eff`` (:data:`FIT_KEYS`)."""
    fam, c, m, out, k, kid = parts
    ec = np.where(fam == 0, eff["conv.compute"], np.where(fam == 1, eff["matmul.compute"], E_OTHER))
    f = np.where(np.isinf(out), 1.0, out / (np.where(np.isinf(out), 0.0, out) + sms * eff["gpu.outputs_per_sm"]))
    return float(np.maximum(_per_kernel(kid, c / ec / f), _per_kernel(kid, m) / eff["default.memory"]).sum()
                 + k * eff["overhead_s"])


def _sms(device: str) -> float:
    return float(load_preset(device).efficiency["gpu.sms"])


def constants(device: str) -> dict:
    """The preset's kernel-model constants as shipped."""
    eff = load_preset(device).efficiency
    return {k: float(eff[k]) for k in FIT_KEYS}


def fast_ratio(e: dict, eff: dict, l2: dict | None = None, scaled: bool = True) -> tuple[float, float, int]:
    """(ratio, predicted throughput, batch) of a row with the constants ``eff`` (and an L2 level: preset ->
    (capacity, bandwidth); ``gpu.l2_writes`` in ``eff``: outputs that fit it charged there), on the fast path."""
    lv = l2.get(e["device"]) if l2 else None
    held = float(eff.get("gpu.l2_writes", 0)) >= 1
    best = max((b / fast_latency(_parts(e["model"], b, _seq(e), e["device"], e["precision"], lv, scaled, held), eff,
                                 _sms(e["device"])), b) for b in row_batches(e))
    return best[0] / published_throughput(e), best[0], best[1]


def evaluate(rows: list[dict], lat_fn) -> list[dict]:
    """Each row with ``_pred``, ``_pub``, ``_ratio`` and ``_batch`` from ``lat_fn(row, batch)``."""
    out = []
    for e in rows:
        thr, b = max(((b / lat_fn(e, b)), b) for b in row_batches(e))
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
        batches = [r["batch"] for r in rs]
        pub, pred = _knee([(r["batch"], r["_pub"]) for r in rs]), _knee([(r["batch"], r["_pred"]) for r in rs])
        out.append({"key": key, "published": pub, "predicted": pred, "batches": batches, "source": rs[0]["source"],
                    "steps": batches.index(pred) - batches.index(pub), "_class": rs[0]["_class"]})
    return out


def _knee(points: list[tuple[int, float]]) -> int:
    best = max(t for _, t in points)
    return min(b for b, t in points if t >= KNEE * best)


# ----------------------------------------------------------------------------------------------- fit

#: fit rows a constant needs before a class's fit may move it from :data:`A100` (:func:`informed`);
#: the memory share, which every row touches a little, needs more
MIN_ROWS = 3
MIN_ROWS_MEMORY = 10


def informed(train: list[dict]) -> dict[str, str | None]:
    """constant -> None where the fit rows inform it, else why it stays at :data:`A100`'s value: a
    convolution's share of the peak needs CNN rows, a GEMM's BERT rows, the launch overhead rows at
    batch ≤ 8 (at the large batches of an Offline run it is hidden), the fill constant a batch sweep;
    each at least :data:`MIN_ROWS`; the memory share :data:`MIN_ROWS_MEMORY` rows. (Three MLPerf ResNet-50
    Offline rows once moved the Hopper class's overhead to the grid's edge, 8 µs, then, that pinned, its
    memory share to 0.5: the H200 decode steps measured by ``benchmarks/gpu_decode.py`` contradict both
    by 1.6-2x, and its copy ran at 0.89 of the data sheet's bandwidth.)"""
    n_cnn = sum(family(e) == "CNN" for e in train)
    n_bert = len(train) - n_cnn
    n_small = sum(max(row_batches(e)) <= 8 for e in train)
    n_sweep = sum(e["scenario"] == "fixed_batch" for e in train)
    why = lambda n, what, least=MIN_ROWS: None if n >= least else f"{n} fit rows {what} (fewer than {least})"  # noqa: E731
    return {"conv.compute": why(n_cnn, "of a CNN"), "matmul.compute": why(n_bert, "of BERT"),
            "default.memory": why(len(train), "in all", MIN_ROWS_MEMORY), "overhead_s": why(n_small, "at batch 8 or less"),
            "gpu.outputs_per_sm": why(n_sweep, "in a batch sweep")}


def fit(rows: list[dict], halves: dict[str, str], cls: str, l2: dict | None = None, scaled: bool = True) -> dict:
    """Grid search (:data:`GRID`) of a class's constants on its fit half: the least

        mean_rows (ln ratio)² + PULL · Σ_constants (ln(x / x_A100))²

    evaluated for every grid point at once (per row: the GEMM, convolution and other kernels' sums as
    arrays over their own constant, broadcast together, plus the launches). A constant the fit rows do
    not inform (:func:`informed`) stays at :data:`A100`'s value. The :func:`harness` rows are not fitted
    here (they fit the harness's profile, :func:`fit_profile`); a class with no other fit row keeps every
    :data:`A100` value."""
    train = [e for e in rows if e["_class"] == cls and halves.get(e["_id"]) == "fit" and not harness(e)]
    if not train:
        why = "no fit row outside NVIDIA's MLPerf harness (whose rows fit the mlperf runtime profile)"
        return {**A100, "rms_log_error": float("nan"), "fit_rows": 0, "fit_files": [], "fit_rows_by_family": {},
                "at_grid_edge": [], "pinned": {k: why for k in FIT_KEYS}}
    pinned = {k: w for k, w in informed(train).items() if w}
    g = {k: np.array(v, dtype=float) for k, v in GRID.items()}
    shape = (len(g["gpu.outputs_per_sm"]), len(g["default.memory"]), len(g["conv.compute"]),
             len(g["matmul.compute"]), len(g["overhead_s"]))
    by_fam: dict[str, int] = {}
    total = np.zeros(shape)
    for e in train:
        sms = _sms(e["device"])
        lv = l2.get(e["device"]) if l2 else None
        best = None
        for b in row_batches(e):
            fam, c, m, out, k, kid = _parts(e["model"], b, _seq(e), e["device"], e["precision"], lv, scaled)
            conv_k = _per_kernel(kid, (fam == 0).astype(float)) > 0  # kernels with a convolution member
            mat_k = _per_kernel(kid, (fam == 1).astype(float)) > 0
            if np.any(conv_k & mat_k):
                raise RuntimeError(f"{e['_id']}: a kernel with a convolution and a matrix product: the fit "
                                   "separates them")
            lat = np.empty(shape)
            for ti, t in enumerate(g["gpu.outputs_per_sm"]):
                f = np.where(np.isinf(out), 1.0, out / (np.where(np.isinf(out), 0.0, out) + sms * t))
                cf = c / f
                # per kernel: its convolution / GEMM members' arithmetic (over their share) + the rest's
                c_conv = _per_kernel(kid, np.where(fam == 0, cf, 0.0))
                c_mat = _per_kernel(kid, np.where(fam == 1, cf, 0.0))
                c_oth = _per_kernel(kid, np.where(fam == 2, cf / E_OTHER, 0.0))
                m_k = _per_kernel(kid, m)
                oth = ~(conv_k | mat_k)
                for mi, em in enumerate(g["default.memory"]):
                    mm = m_k / em
                    other = np.maximum(c_oth[oth], mm[oth]).sum()
                    conv = np.maximum(c_conv[conv_k][None, :] / g["conv.compute"][:, None] + c_oth[conv_k][None, :],
                                      mm[conv_k][None, :]).sum(1)
                    mat = np.maximum(c_mat[mat_k][None, :] / g["matmul.compute"][:, None] + c_oth[mat_k][None, :],
                                     mm[mat_k][None, :]).sum(1)
                    lat[ti, mi] = (other + conv[:, None, None] + mat[None, :, None]
                                   + k * g["overhead_s"][None, None, :])
            thr = b / lat
            best = thr if best is None else np.maximum(best, thr)
        total = total + np.log(best / published_throughput(e)) ** 2
        by_fam[family(e)] = by_fam.get(family(e), 0) + 1
    score = total / len(train)
    axes = ("gpu.outputs_per_sm", "default.memory", "conv.compute", "matmul.compute", "overhead_s")
    for i, key in enumerate(axes):
        pull = PULL * np.log(g[key] / A100[key]) ** 2
        if key in pinned:
            pull = np.where(np.isclose(g[key], A100[key]), 0.0, np.inf)
        score = score + pull.reshape([-1 if j == i else 1 for j in range(5)])
    idx = np.unravel_index(int(np.argmin(score)), shape)
    best = {key: float(g[key][j]) for key, j in zip(axes, idx)}
    best["gpu.outputs_per_sm"] = int(best["gpu.outputs_per_sm"])
    fit_err = float(total[idx]) / len(train)
    return {**{k: best[k] for k in FIT_KEYS}, "rms_log_error": math.sqrt(fit_err), "fit_rows": len(train),
            "fit_files": sorted({e["_file"] for e in train}),
            "fit_rows_by_family": dict(sorted(by_fam.items())),
            "at_grid_edge": sorted(k for k, j in zip(axes, idx) if j in (0, len(g[k]) - 1) and k not in pinned),
            "pinned": dict(sorted(pinned.items()))}


def fits(rows: list[dict], halves: dict[str, str], l2: dict | None = None, scaled: bool = True) -> dict[str, dict]:
    """Every class's fitted constants; a class with a donor takes the donor's."""
    out = {c: fit(rows, halves, c, l2, scaled) for c in CLASSES if c not in DONORS}
    for c, (donor, _) in DONORS.items():
        out[c] = out.get(donor, {})
    return out


#: the least fit rows the harness profile is fitted on
PROFILE_MIN_ROWS = 10


def fit_profile(rows: list[dict], halves: dict[str, str], consts_of, l2: dict | None, held: bool = True) -> dict:
    """The :data:`HARNESS` profile's convolution share: the :data:`GRID` value with the least mean squared
    log ratio over the fit half of the :func:`harness` rows of every class, each row at its class's
    constants (``consts_of(row)``) with ``conv.compute`` set and, with ``held``, its outputs charged at the
    L2 when they fit (``gpu.l2_writes`` = 1). The rows' classes' own constants come from their other rows
    (:func:`fit`), so the profile holds what the harness adds: NVIDIA's int8 convolution plugins, and a batch
    whose activations stay in the L2 with TensorRT reusing their buffers in place (:data:`HARNESS_CONFIG`)."""
    train = [e for e in rows if harness(e) and halves.get(e["_id"]) == "fit"]
    if len(train) < PROFILE_MIN_ROWS:
        raise RuntimeError(f"{len(train)} fit rows of the MLPerf harness: fewer than {PROFILE_MIN_ROWS}")
    extra = {"gpu.l2_writes": 1.0} if held else {}
    scores = []
    for cc in GRID["conv.compute"]:
        err = [math.log(fast_ratio(e, {**consts_of(e), "conv.compute": cc, **extra}, l2)[0]) ** 2 for e in train]
        scores.append((sum(err) / len(err), cc))
    best, cc = min(scores)
    return {"conv.compute": cc, **extra, "rms_log_error": math.sqrt(best), "fit_rows": len(train),
            "fit_classes": sorted({e["_class"] for e in train}), "fit_devices": sorted({e["device"] for e in train}),
            "fit_files": sorted({e["_file"] for e in train}),
            "at_grid_edge": cc in (GRID["conv.compute"][0], GRID["conv.compute"][-1])}


def profile_source(key: str, f: dict, held_stats_: dict, date: str) -> str:
    """Where the harness profile's figure comes from (``runtimes.toml``'s sources)."""
    how = (f"fitted by benchmarks/gpu_realism.py --fit on the fit half of the published MLPerf ResNet-50 rows of "
           f"NVIDIA's harness ({f['fit_rows']} rows: {', '.join(f['fit_devices'])}; "
           f"{', '.join('benchmarks/published/' + x for x in f['fit_files'])}), every other constant its class's "
           f"(fitted on the other rows), {date}; held out: {held_stats_['n']} rows, median ratio "
           f"{held_stats_['before']:.2f} -> {held_stats_['median']:.2f}, within 1.5x {held_stats_['within_1.5']:.0%} "
           f"(benchmarks/results/gpu_realism.md)")
    if key == "conv.compute":
        return f"the share of the tensor peak its convolutions attain (NVIDIA's own int8 plugins); {how}"
    return ("an output that fits the L2 is charged there (onnxperf.predict.reuse, writes held): the harness runs "
            f"at a batch whose activations fit the L2 and TensorRT reuses their buffers in place ({HARNESS_CONFIG}); "
            f"{how}")


def write_profile(f: dict, held_stats_: dict, date: str) -> bool:
    """The fitted harness profile into ``runtimes.toml``; whether the file changed."""
    text = RUNTIMES.read_text()
    table = f"runtime.{HARNESS}"
    new = set_table(text, f"{table}.efficiency", {"conv.compute": _num(f["conv.compute"]), "gpu.l2_writes": "1"})
    new = set_table(new, f"{table}.sources", {k: json.dumps(profile_source(k, f, held_stats_, date))
                                              for k in ("conv.compute", "gpu.l2_writes")})
    if new != text:
        RUNTIMES.write_text(new)
        profiles.cache_clear()
        _spec.cache_clear()
    return new != text


def profile_fit_rms(rows: list[dict], halves: dict[str, str], l2: dict) -> float:
    """rms of ln ratio over the harness profile's fit rows under the profile as shipped."""
    train = [e for e in rows if harness(e) and halves.get(e["_id"]) == "fit"]
    return math.sqrt(sum(math.log(fast_ratio(e, row_constants(e), l2)[0]) ** 2 for e in train) / len(train))


def profile_held(rows: list[dict], halves: dict[str, str], sets: dict, l2: dict) -> dict:
    """Statistics of the held-out harness rows under the profile ``sets`` (and, as ``before``, the median at
    their classes' constants alone)."""
    held = [e for e in rows if harness(e) and halves.get(e["_id"]) == "held"]
    after = [fast_ratio(e, with_profile(e, constants(e["device"]), sets), l2)[0] for e in held]
    before = [fast_ratio(e, constants(e["device"]), l2)[0] for e in held]
    return {**stats(after), "before": statistics.median(before)}


# --------------------------------------------------------------------------------------- statistics

def pct(xs: list[float], q: float) -> float:
    """The q-th percentile (numpy's linear interpolation between the closest ranks)."""
    return float(np.percentile(np.array(xs, dtype=float), q))


def stats(ratios: list[float]) -> dict:
    """Median, P10, P90 and the share within 1.25x / 1.5x / 2x of a list of ratios."""
    if not ratios:
        return {"n": 0}
    n = len(ratios)
    return {"n": n, "median": statistics.median(ratios), "p10": pct(ratios, 10), "p90": pct(ratios, 90),
            **{f"within_{w}": sum(1 / w <= x <= w for x in ratios) / n for w in (1.25, 1.5, 2)}}


def _fmt(s: dict) -> str:
    if not s.get("n"):
        return "- | - | - | - | - | - | 0"
    return (f"{s['median']:.2f} | {s['p10']:.2f} | {s['p90']:.2f} | {s['within_1.25']:.0%} | {s['within_1.5']:.0%} | "
            f"{s['within_2']:.0%} | {s['n']}")


def held_stats(rows: list[dict], halves: dict[str, str], eff_of, l2: dict | None = None,
               scaled: bool = True) -> dict[tuple, dict]:
    """(class, family) -> statistics of the held-out rows' ratios with ``eff_of(row)`` constants
    (family "all": every family of the class)."""
    acc: dict[tuple, list[float]] = {}
    for e in rows:
        if halves.get(e["_id"]) != "held":
            continue
        r = fast_ratio(e, eff_of(e), l2, scaled)[0]
        acc.setdefault((e["_class"], family(e)), []).append(r)
        acc.setdefault((e["_class"], "all"), []).append(r)
    return {k: stats(v) for k, v in acc.items()}


# -------------------------------------------------------------------------------------------- bands

def bands(rows: list[dict], halves: dict[str, str]) -> dict[str, dict]:
    """class -> its band on the held-out rows with the presets' constants as shipped: p10, p90 (of
    measured / predicted time, :func:`pct`), points, and what they are; the :func:`harness` rows are the
    profile's (:func:`harness_band`), not the class's."""
    acc: dict[str, list[dict]] = {}
    for e in rows:
        if halves.get(e["_id"]) == "held" and not harness(e):
            acc.setdefault(e["_class"], []).append({**e, "_r": fast_ratio(e, constants(e["device"]), shipped_l2())[0]})
    out = {}
    for cls, es in sorted(acc.items()):
        rs = [e["_r"] for e in es]
        out[cls] = {"p10": round(pct(rs, 10), 2), "p90": round(pct(rs, 90), 2), "points": len(rs),
                    "devices": sorted({e["device"] for e in es}), "models": sorted({e["model"] for e in es}),
                    "files": sorted({e["_file"] for e in es}), "median": statistics.median(rs)}
    return out


def harness_band(rows: list[dict], halves: dict[str, str]) -> dict:
    """The harness profile's band: the held-out harness rows of every class under the profile as shipped."""
    es = [e for e in rows if harness(e) and halves.get(e["_id"]) == "held"]
    rs = [fast_ratio(e, row_constants(e), shipped_l2())[0] for e in es]
    return {"p10": round(pct(rs, 10), 2), "p90": round(pct(rs, 90), 2), "points": len(rs),
            "devices": sorted({e["device"] for e in es}), "classes": sorted({e["_class"] for e in es}),
            "files": sorted({e["_file"] for e in es}), "median": statistics.median(rs)}


def write_harness_band(b: dict, date: str) -> bool:
    """The harness band into ``runtimes.toml`` (``band.p10``, ``band.p90``, ``band.points`` and the ``band``
    source); whether the file changed."""
    text = RUNTIMES.read_text()
    table = f"runtime.{HARNESS}"
    files = ", ".join(f"benchmarks/published/{f}" for f in b["files"])
    src = (f"measured / predicted time per item on the {b['points']} held-out published MLPerf ResNet-50 rows of "
           f"NVIDIA's harness ({', '.join(b['devices'])}; {files}), none of them fitted (every second row of each "
           f"class); P10 and P90 by benchmarks/gpu_realism.py --bands under the profile as shipped, {date}")
    new = set_table(text, f"{table}.efficiency", {"band.p10": f"{b['p10']:g}", "band.p90": f"{b['p90']:g}",
                                                  "band.points": str(b["points"])})
    new = set_table(new, f"{table}.sources", {"band": json.dumps(src)})
    if new != text:
        RUNTIMES.write_text(new)
        profiles.cache_clear()
    return new != text


def band_source(cls: str, b: dict, date: str) -> str:
    how = (f"every row of the class, its constants being the {DONORS[cls][0]} class's" if cls in DONORS else
           "batch sweeps: the odd positions of each grid")
    files = ", ".join(f"benchmarks/published/{f}" for f in b["files"])
    return (f"measured / predicted time per item on the {b['points']} held-out published TensorRT rows of the "
            f"{cls} class ({', '.join(b['devices'])}; {', '.join(b['models'])}; {files}), none of them fitted "
            f"({how}); P10 and P90 by benchmarks/gpu_realism.py --bands with the constants as shipped, {date}")


# ------------------------------------------------------------------------------------ preset files

def set_table(text: str, table: str, values: dict[str, str]) -> str:
    """``text`` (a preset file) with ``values`` (key -> TOML value text) set in ``[table]``: an existing
    key's line replaced, a new one appended at the end of the table."""
    lines = text.split("\n")
    start = lines.index(f"[{table}]")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("[")), len(lines))
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1
    done = set()
    for i in range(start + 1, end):
        m = re.match(r'^("?)([^"=]+)\1\s*=', lines[i])
        if m and m.group(2).strip() in values:
            key = m.group(2).strip()
            lines[i] = f"{_key(key)} = {values[key]}"
            done.add(key)
    new = [f"{_key(k)} = {v}" for k, v in values.items() if k not in done]
    lines[end:end] = new
    return "\n".join(lines)


def _key(k: str) -> str:
    return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else json.dumps(k)


def _num(x: float) -> str:
    if isinstance(x, int) or float(x).is_integer() and abs(x) >= 1:
        return str(int(x))
    if abs(x) < 1e-3:
        return f"{x * 1e6:g}e-6"
    return f"{x:g}"


def constants_source(cls: str, key: str, fitted: dict, donor: tuple | None) -> str:
    """Where a class's constant comes from: fitted on the class's fit half, kept at the A100 value where
    the class has no row of the family it governs (``conv.compute``: CNN; ``matmul.compute``: BERT), or
    a donor class's."""
    what = {"conv.compute": "share of the tensor peak a convolution kernel attains",
            "matmul.compute": "share of the tensor peak a GEMM kernel attains",
            "default.memory": "share of the data-sheet memory bandwidth a kernel attains",
            "overhead_s": "per kernel of the kernel plan (a CUDA kernel launch costs a few microseconds: NVIDIA "
                          "Technical Blog, Getting Started with CUDA Graphs, 2019; a runtime that fuses more than the "
                          "plan assumes, as TensorRT's attention plugins do, shows as a smaller figure); no per-run "
                          "overhead (overhead_run_s absent, 0): no published source gives a per-run figure",
            "gpu.outputs_per_sm": "output elements per SM at which a GEMM or convolution reaches half its rate at the "
                                  "fp16 tensor rate, P / P_fp16 times as many for a kernel at a faster peak P (int8, "
                                  "fp8, fp4; onnxperf.predict.roofline.half_rate_outputs) (tile and wave quantization: "
                                  "NVIDIA, Matrix Multiplication Background User's Guide)"}[key]
    if donor is not None:
        d, why = donor
        return f"{what}; the {d} class's figure ({why}); benchmarks/results/gpu_realism.md"
    fams = fitted["fit_rows_by_family"]
    need = {"conv.compute": "CNN", "matmul.compute": "BERT"}.get(key)
    files = ", ".join(f"benchmarks/published/{f}" for f in fitted["fit_files"])
    devs = ", ".join(CLASSES[cls])
    pinned = fitted.get("pinned", {}).get(key)
    if pinned or (need and need not in fams):
        why = pinned or f"no published {need} row"
        return (f"{what}; the A100 fit's value, kept: the {cls} class ({devs}) has {why} to fit it on "
                f"(benchmarks/gpu_realism.py --fit keeps a constant its rows do not inform; "
                f"benchmarks/results/gpu_realism.md)")
    fam = ", ".join(f"{n} {f}" for f, n in fams.items())
    return (f"{what}; fitted for the {cls} class ({devs}) by benchmarks/gpu_realism.py --fit on the fit half of its "
            f"published TensorRT rows ({fam}; {files}), scored on the held-out half (benchmarks/results/gpu_realism.md)")


def write_constants(fitted: dict[str, dict]) -> list[str]:
    """Every preset of a class gets the class's constants (a donor class's where it has one) and their
    sources. ``overhead_run_s`` is left out (absent: 0): no source gives a per-run figure."""
    changed = []
    for cls, presets in CLASSES.items():
        f = fitted[cls]
        donor = DONORS.get(cls)
        for p in presets:
            path = PRESETS / f"{p}.toml"
            text = path.read_text()
            lines = [ln for ln in text.split("\n") if not re.match(r"^overhead_run_s\s*=", ln)]
            new = set_table("\n".join(lines), "efficiency", {k: _num(f[k]) for k in FIT_KEYS})
            srcs = {k: json.dumps(constants_source(donor[0] if donor else cls, k, f, donor)) for k in FIT_KEYS}
            new = set_table(new, "efficiency_sources", srcs)
            if new != text:
                path.write_text(new)
                changed.append(p)
    return changed


def kernel_model_reads_levels() -> bool:
    """Whether the library's GPU kernel model charges bytes at a spec's memory levels: BERT-base at batch 1
    on an L40S predicted with and without its L2 level."""
    spec = load_preset("l40s")
    cap, bw, src = l2_level("l40s")
    with_l2 = dataclasses.replace(spec, memory_levels=(MemoryLevel("L2", cap, bw, src),))
    a = _analysis("bert-base", 1, 128, "fp16")
    return roofline(a, with_l2, P.get("fp16")).latency_s != roofline(a, spec, P.get("fp16")).latency_s


def write_levels() -> list[str]:
    """Every GPU preset with a stated L2 capacity gets one ``[[memory_levels]]`` entry, L2 (:func:`l2_level`);
    the others lose any."""
    changed = []
    for p in CLASS_OF:
        path = PRESETS / f"{p}.toml"
        text = path.read_text()
        cut = text.find("\n[[memory_levels]]")
        new = (text if cut < 0 else text[:cut]).rstrip("\n") + "\n"
        lv = l2_level(p)
        if lv is not None:
            new += (f"\n[[memory_levels]]\nname = \"L2\"\ncapacity_bytes = {lv[0]}\n"
                    f"bandwidth_bytes_per_s = {lv[1]:.4g}\nsource = {json.dumps(lv[2])}\n")
        if new != text:
            path.write_text(new)
            changed.append(p)
    return changed


def write_bands(b: dict[str, dict], date: str) -> list[str]:
    """Every preset of a class with held-out rows gets ``band.p10``, ``band.p90``, ``band.points``; the
    others lose any they had (``band.llm.*`` is left alone)."""
    changed = []
    for cls, presets in CLASSES.items():
        for p in presets:
            path = PRESETS / f"{p}.toml"
            text = path.read_text()
            lines = [ln for ln in text.split("\n") if not re.match(r'^"band\.(p10|p90|points)"\s*=', ln)]
            new = "\n".join(lines)
            if cls in b:
                x = b[cls]
                new = set_table(new, "efficiency", {"band.p10": f"{x['p10']:g}", "band.p90": f"{x['p90']:g}",
                                                    "band.points": str(x["points"])})
                src = json.dumps(band_source(cls, x, date))
                new = set_table(new, "efficiency_sources", {"band.p10": src, "band.p90": src, "band.points": src})
            if new != text:
                path.write_text(new)
                changed.append(p)
    return changed


# ------------------------------------------------------------------------------------------- report

def _src(e: dict) -> str:
    s = e["source"]
    path = s.get("path", "")
    short = path.split("/")[-2] if "/" in path else path
    commit = s.get("commit", "")[:8]
    return f"[{s.get('repo', '')}/{short}@{commit}]({s.get('url', '')})"



def _as(rows: list[dict], device: str) -> float:
    """Median ratio of the relabelled table's rows predicted as ``device`` (its preset's constants)."""
    rs = [fast_ratio({**e, "device": device}, constants(device))[0] for e in rows if e.get("device_label_conflict")]
    return statistics.median(rs)


def targets(ev: list[dict], halves: dict[str, str], ks: list[dict]) -> dict:
    """The issue's three targets on evaluated rows: each met or not, and the figures that say so."""
    rows = [r for r in ev if r["_id"] in halves]
    held = [r for r in rows if halves[r["_id"]] == "held"]
    classes = [c for c in CLASSES if any(r["_class"] == c for r in rows)]
    out15 = {c: sum(1 for r in rows if r["_class"] == c and not 1 / 1.5 <= r["_ratio"] <= 1.5) for c in classes}
    n15 = sum(1 for r in rows if 1 / 1.5 <= r["_ratio"] <= 1.5)
    h15 = sum(1 for r in held if 1 / 1.5 <= r["_ratio"] <= 1.5)
    med = {c: statistics.median([r["_ratio"] for r in held if r["_class"] == c]) for c in classes}
    kin = sum(1 for k in ks if abs(k["steps"]) <= 1)
    return {"rows_met": n15 == len(rows), "median_met": all(0.8 <= m <= 1.25 for m in med.values()),
            "knee_met": kin == len(ks),
            "rows": f"**{n15}/{len(rows)}** comparable rows ({h15}/{len(held)} held-out); outside: "
                    + (", ".join(f"{c} {n}" for c, n in out15.items() if n) or "none"),
            "median": ", ".join(f"{c} {m:.2f}" for c, m in med.items()),
            "knee": f"**{kin}/{len(ks)}** sweeps"}


def rms_log(rows: list[dict], halves: dict[str, str], half: str, cls: str | None = None) -> float:
    """Root mean square of ln(ratio) over a half's rows (of one class, or all)."""
    xs = [math.log(r["_ratio"]) ** 2 for r in rows if halves.get(r["_id"]) == half and cls in (None, r["_class"])]
    return math.sqrt(sum(xs) / len(xs)) if xs else float("nan")


def fill_section(ev_shipped: list[dict], ev_unscaled: list[dict], halves: dict[str, str], unscaled_fit: dict,
                 t_unscaled: dict) -> list[str]:
    """The page's contrast: the fill constant scaled above the fp16 rate (shipped) and not (refitted)."""
    classes = [c for c in CLASSES if any(r["_class"] == c for r in ev_unscaled if r["_id"] in halves)]
    L = ["", "## The fill constant above the fp16 rate (shipped: `half_rate_outputs`)", "",
         "A GEMM or convolution kernel reaches half its rate at `gpu.outputs_per_sm` output elements per SM at the "
         "fp16 tensor rate, times P / P_fp16 for a kernel at a faster peak P (int8 here; fp8, fp4), unchanged for a "
         "slower one (tf32): `onnxperf.predict.roofline.half_rate_outputs`. With one constant for every precision "
         "the int8 sweeps saturated at half the batch they do (A100 int8 ResNet-50 at batch 1 2.06x optimistic); "
         "scaled for tf32 too, the A100's tf32 ResNet-50 rows at batch 1 went from 1.01 to 1.48x optimistic. For "
         "contrast, the constants refitted on the same fit half with one fill constant for every precision "
         "(rms of ln ratio; lower is better):", "",
         "| class | fit rms: one constant | scaled (shipped) | held-out rms: one constant | scaled (shipped) |",
         "|---|---|---|---|---|"]
    f = lambda x: "-" if math.isnan(x) else f"{x:.3f}"  # noqa: E731
    for c in [*classes, None]:
        L.append(f"| {c or 'all'} | " + " | ".join(f(rms_log(e, halves, h, c)) for h in ("fit", "held")
                                                   for e in (ev_unscaled, ev_shipped)) + " |")
    ok = lambda x: "x" if x else " "  # noqa: E731
    L += ["", "The targets with one fill constant (those constants, fast path, every comparable row):", "",
          f"- [{ok(t_unscaled['rows_met'])}] within 1.5x: {t_unscaled['rows']}",
          f"- [{ok(t_unscaled['median_met'])}] median ratio within 0.8-1.25: {t_unscaled['median']}",
          f"- [{ok(t_unscaled['knee_met'])}] knee within one step: {t_unscaled['knee']}", "",
          "Constants refitted with one fill constant: "
          + "; ".join(f"{c} conv.compute {k['conv.compute']:g}, matmul.compute {k['matmul.compute']:g}, default.memory "
                      f"{k['default.memory']:g}, overhead_s {k['overhead_s'] * 1e6:g} us, gpu.outputs_per_sm "
                      f"{k['gpu.outputs_per_sm']:g}" for c, k in unscaled_fit.items() if c not in DONORS and k)]
    return L


def report(ev: list[dict], halves: dict[str, str], ks: list[dict], before: dict, after: dict, nol2_fit: dict,
           after_nol2: dict, sens: dict, shipped: dict, b: dict, preset_bands: dict, t_nol2: dict,
           fill_lines: list[str], mlperf_lines: list[str]) -> str:
    rows = [r for r in ev if r["_id"] in halves]
    apart = [r for r in ev if not_comparable(r) is not None]
    classes = [c for c in CLASSES if any(r["_class"] == c for r in rows)]
    t = targets(ev, halves, ks)
    ok = lambda x: "x" if x else " "  # noqa: E731
    L = [
        "# GPU realism: predictions beside published measurements, per GPU generation (issue 29, item 2)",
        "",
        "Made by `python benchmarks/gpu_realism.py` (no GPU needed; `--fit`, `--fit --write` and `--bands` redo the",
        "constants and the bands, see the script's docstring). Every prediction uses the device's preset as shipped",
        "(`onnxperf hw show <id>` lists its [efficiency] and their sources), the GPU kernel model",
        "(`onnxperf/predict/gpu_kernels.py`) and `--precision` of the published run. ratio = predicted / published",
        "throughput = measured / predicted time per item (above 1: onnxperf is optimistic). Rows: the `tensorrt` rows",
        "of `benchmarks/published/gpu_inference.json`, `bert_extra.json`, the ResNet-50 MLPerf Offline rows of",
        f"`llm_inference.json` and the MLPerf ResNet-50 rows of `mlperf_resnet.json`; the MLPerf rows (NVIDIA's "
        f"harness) are predicted under the `{HARNESS}` runtime profile (below). The `bert_extra.json` table with "
        "`device_label_conflict` (L4 at TensorRT 10.7, relabelled",
        "A30 later with the same numbers) is shown apart: it repeats the earlier L4 table within a few percent, so it",
        "adds no independent L4 point, and its label is too uncertain to make it an A30 one. Predicted as an L4 its "
        f"80 rows have a median ratio of {_as(apart, 'l4'):.2f} (the L4 rows of other releases are alike), as an A30 "
        f"{_as(apart, 'a30'):.2f} (the A30 rows of 8.6.1 are near 1): the numbers are an L4's.",
        "",
        "Each class's rows are split once into a fit half and a held-out half: in a batch sweep the even positions of",
        "the sorted batch grid are fitted, the odd ones held out (every release of a table alike, so no measurement",
        "repeated across releases sits on both sides); MLPerf points alternate within each class in (device, "
        "scenario, source) order and fit the harness profile, pooled over the classes, not the classes' constants.",
        "A class whose constants come from another (a donor) holds its other rows out. Statistics marked *held-out* "
        "use rows no constant was fitted on.",
        "",
        "## Targets (issue 29, item 2)",
        "",
        f"- [{ok(t['rows_met'])}] CNN and BERT rows within 1.5x everywhere: {t['rows']}",
        f"- [{ok(t['median_met'])}] every device class's median ratio within 0.8-1.25 (held-out rows): {t['median']}",
        f"- [{ok(t['knee_met'])}] the knee within one step of the batch grid: {t['knee']} (the smallest batch within "
        f"{1 - KNEE:.0%} of the sweep's best throughput, published and predicted)",
        "",
        "## Constants per generation (as shipped)",
        "",
        "| class | presets | rows fit / held-out (CNN, BERT; outside the MLPerf harness) | conv.compute | "
        "matmul.compute | default.memory | "
        "overhead_s | gpu.outputs_per_sm | from |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for c, ps in CLASSES.items():
        k = shipped[c]
        cnt = lambda h, f: sum(1 for r in rows if r["_class"] == c and halves[r["_id"]] == h and family(r) == f  # noqa: E731
                               and not harness(r))
        frm = (f"{DONORS[c][0]}'s: {DONORS[c][1]}" if c in DONORS else "fitted on the fit half"
               if cnt("fit", "CNN") + cnt("fit", "BERT") else
               "the A100 fit's values: no published row outside NVIDIA's MLPerf harness")
        L.append(f"| {c} | {', '.join(ps)} | {cnt('fit', 'CNN')}+{cnt('fit', 'BERT')} / {cnt('held', 'CNN')}+"
                 f"{cnt('held', 'BERT')} | {k['conv.compute']:g} | {k['matmul.compute']:g} | {k['default.memory']:g} | "
                 f"{k['overhead_s'] * 1e6:g} us | {k['gpu.outputs_per_sm']:g} | {frm} |")
    L += ["", "Before: every GPU preset had the constants fitted on the A100 rows alone "
          f"({', '.join(f'{k} {v:g}' for k, v in A100.items())}). `default.compute` stays 0.5 (pointwise and "
          "normalization kernels are memory-bound). `overhead_run_s` is 0 in every preset: no source gives a per-run "
          "figure (TensorRT demo/BERT times the engine alone, without host copies; MLPerf gives throughput and "
          "latency only). The search keeps `default.memory` at most 0.9 (a kernel streaming from DRAM attains no more "
          "of the data-sheet bandwidth; a fit that wants more asks for the L2 the model lacks, below) and the compute "
          "shares at most 0.9, the bounds of the A100 fit before; a constant at a bound is listed as at the grid edge "
          "by `--fit`. Every fit row weighs the same (weighing each family the same instead gave worse held-out "
          "statistics on Ampere and Ada, the two classes with both families).", ""]
    L += mlperf_lines + [""]
    L += ["## Held-out statistics: before (A100 constants) and after (as shipped)", "",
          "The A100 constants were fitted on every A100 row, the held-out half included: for the Ampere class the "
          "'before' columns are partly in-sample (flattering); for every other class both sides are out of sample.", "",
          "| class | family | before: median | P10 | P90 | in 1.25x | in 1.5x | in 2x | n | after: median | P10 | P90 | "
          "in 1.25x | in 1.5x | in 2x | n |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for c in classes:
        for f in ("CNN", "BERT", "all"):
            if (c, f) in after:
                L.append(f"| {c} | {f} | {_fmt(before.get((c, f), {}))} | {_fmt(after[(c, f)])} |")
    L += ["", "## Bands (written into every preset of the class: `band.p10`, `band.p90`, `band.points`)", "",
          "measured / predicted time on the held-out rows outside the MLPerf harness with the constants as shipped "
          "(the harness rows are the profile's band, above); `Band.around(t)` = t·p10 .. t·p90 bounds the measured "
          "time of a prediction t. Classes without such rows get none (their outputs say 'no error band').", "",
          "| class | presets | p10 | p90 | points | median | devices | in the presets |", "|---|---|---|---|---|---|---|---|"]
    for c in CLASSES:
        if c in b:
            x = b[c]
            cur = preset_bands.get(c)
            same = cur == (x["p10"], x["p90"], x["points"])
            L.append(f"| {c} | {', '.join(CLASSES[c])} | {x['p10']:g} | {x['p90']:g} | {x['points']} | {x['median']:.2f} | "
                     f"{', '.join(x['devices'])} | {'yes' if same else f'no: {cur} (run --bands)'} |")
        else:
            why = ("no held-out row outside the MLPerf harness: no band (under `:mlperf`, the profile's)"
                   if any(r["_class"] == c and harness(r) for r in rows) else "no held-out row: no band")
            L.append(f"| {c} | {', '.join(CLASSES[c])} | - | - | 0 | - | {why} | "
                     f"{'none' if preset_bands.get(c) is None else 'stale: run --bands'} |")
    L += ["", "## The L2 level (shipped: a `[[memory_levels]]` entry in every GPU preset with a stated capacity)", "",
          "The reuse model (`onnxperf/predict/reuse.py`) serves a read from L2 while the tensor is still there "
          "(BERT's activations and attention scores at small batch, ResNet-50's int8 weights in a 48-96 MB L2) and, "
          "for a GPU, when the tensor and the kernel's own output fit it; a GPU's writes go to DRAM (both measured on "
          "an H200: `benchmarks/results/gpu_l2.md`). The kernel model (`_as_kernels` in "
          "`onnxperf/predict/roofline.py`) charges a kernel's reads and writes at L2 and DRAM in the proportions "
          "`level_bytes_rw` gives the node's own: m = R·Σ_k (r_k/Σr)/(e_m·β_k) + W·Σ_k (w_k/Σw)/(e_m·β_k). The Hopper "
          "presets' L2 bandwidth is the per-SM rate measured on the H200, the H200's capacity the 60 MiB it reports. "
          "The fast path of this benchmark is the same formula (checked against the library on every row). For "
          "contrast, the constants refitted on the same fit half without the level:", "",
          "| class | family | without L2 (refitted): median | P10 | P90 | in 1.25x | in 1.5x | in 2x | n | with L2 "
          "(shipped): median | P10 | P90 | in 1.25x | in 1.5x | in 2x | n |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for c in classes:
        for f in ("CNN", "BERT", "all"):
            if (c, f) in after_nol2:
                L.append(f"| {c} | {f} | {_fmt(after_nol2[(c, f)])} | {_fmt(after[(c, f)])} |")
    L += ["", "The targets without the L2 level (those constants, fast path, every comparable row):", "",
          f"- [{ok(t_nol2['rows_met'])}] within 1.5x: {t_nol2['rows']}",
          f"- [{ok(t_nol2['median_met'])}] median ratio within 0.8-1.25: {t_nol2['median']}",
          f"- [{ok(t_nol2['knee_met'])}] knee within one step: {t_nol2['knee']}"]
    L += ["", "Constants refitted without the L2:", "",
          "| class | conv.compute | matmul.compute | default.memory | overhead_s | gpu.outputs_per_sm | at grid edge |",
          "|---|---|---|---|---|---|---|"]
    for c in CLASSES:
        if c not in DONORS and nol2_fit.get(c):
            k = nol2_fit[c]
            L.append(f"| {c} | {k['conv.compute']:g} | {k['matmul.compute']:g} | {k['default.memory']:g} | "
                     f"{k['overhead_s'] * 1e6:g} us | {k['gpu.outputs_per_sm']:g} | {', '.join(k['at_grid_edge']) or '-'} |")
    L += ["", "Sensitivity to the L2 bandwidth (held-out, every family; refitted each time): "
          + "; ".join(f"x{s:g}: " + ", ".join(f"{c} {st[(c, 'all')]['median']:.2f} ({st[(c, 'all')]['within_1.25']:.0%} "
                                               f"in 1.25x)" for c in classes if (c, "all") in st)
                      for s, st in sorted(sens.items())), "",
          "| preset | L2 | bandwidth | source |", "|---|---|---|---|"]
    for p in CLASS_OF:
        lv = l2_level(p)
        L.append(f"| {p} | " + (f"{lv[0] / MIB:g} MiB | {lv[1] / 1e12:.3g} TB/s | {lv[2]} |" if lv
                                else "- | - | no capacity stated that was checked: no level |"))
    L += fill_lines
    L += ["", "## Knee of the batch sweeps", "",
          "| model | seq | device | precision | runtime | batches | published knee | predicted knee | steps |",
          "|---|---|---|---|---|---|---|---|---|"]
    for k in ks:
        m, seq, dev, prec, rt = k["key"]
        L.append(f"| {m} | {seq or '-'} | {dev} | {prec} | {runtime_label(rt)} | "
                 f"{k['batches'][0]}..{k['batches'][-1]} | {k['published']} | {k['predicted']} | {k['steps']:+d} |")
    L += ["", "## Outside 1.5x", ""]
    L += [f"- {r['model']} {r.get('seq_len') or ''} {r['device']} {r['precision']} {r['scenario']} batch {r['batch']} "
          f"({halves[r['_id']]}, {runtime_label(r['runtime'])}): ratio {r['_ratio']:.2f}"
          for r in sorted(rows, key=lambda r: (r["_class"], r["device"], r["model"], r["_ratio"]))
          if not 1 / 1.5 <= r["_ratio"] <= 1.5] or ["- no row"]
    L += ["", "## Every comparable row", "",
          "| class | model | seq | device | precision | scenario | batch | half | runtime | published /s | predicted /s | "
          "ratio | source |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (r["_class"], r["model"], str(r.get("seq_len")), r["device"], r["precision"],
                                         r["scenario"], r["runtime"], r["batch"] or 0)):
        bt = r["batch"] if r["scenario"] != "mlperf_offline" else f"best ({r['_batch']})"
        L.append(f"| {r['_class']} | {r['model']} | {r.get('seq_len') or '-'} | {r['device']} | {r['precision']} | "
                 f"{r['scenario']} | {bt} | {halves[r['_id']]} | {runtime_label(r['runtime'])} | "
                 f"{r['_pub']:,.0f} | {r['_pred']:,.0f} | {r['_ratio']:.2f} | {_src(r)} |")
    L += ["", "## Shown apart: published rows that measure other work, or whose device is uncertain", "",
          "| model | seq | device | precision | scenario | batch | published /s | predicted /s | ratio | why apart |",
          "|---|---|---|---|---|---|---|---|---|---|"]
    for r in apart:
        L.append(f"| {r['model']} | {r.get('seq_len') or '-'} | {r['device']} | {r['precision']} | {r['scenario']} | "
                 f"{r['batch']} | {r['_pub']:,.0f} | {r['_pred']:,.0f} | {r['_ratio']:.2f} | {not_comparable(r)} |")
    L += [""]
    return "\n".join(L)


def runtime_label(runtime: str) -> str:
    """A published row's runtime as the page's tables name it: its first clause, at most 40 characters."""
    return runtime.split(" (")[0].split(",")[0][:40]


def mlperf_section(ev: list[dict], rows: list[dict], halves: dict[str, str], shipped_levels: dict,
                   l2: dict) -> list[str]:
    """The page's section on the :data:`HARNESS` profile: every MLPerf ResNet-50 row per device and scenario at
    its class's constants alone, under the profile as shipped, and under a profile refitted with the outputs
    charged at DRAM (the convolution share alone, for contrast); the profile's fit and held-out statistics."""
    hr = [r for r in ev if harness(r) and r["_id"] in halves]
    if not hr:
        return []
    prof = profiles()[HARNESS]
    sets = profile_sets()
    alone = fit_profile(rows, halves, lambda e: constants(e["device"]), l2, held=False)
    alone_sets = {"conv.compute": alone["conv.compute"]}
    hs = profile_held(rows, halves, sets, shipped_levels)
    hs_alone = profile_held(rows, halves, alone_sets, shipped_levels)
    n_fit = sum(1 for r in hr if halves[r["_id"]] == "fit")
    late = sum(1 for r in hr if r["_file"] == LATE)
    band = f"{prof.band[0]:g}-{prof.band[1]:g} on {prof.band[2]} points" if prof.band else "none (run --bands)"
    groups: dict[tuple, list[dict]] = {}
    for r in hr:
        groups.setdefault((r["_class"], r["device"], r["scenario"]), []).append(r)
    base_of = {k: statistics.median(fast_ratio(r, constants(k[1]), shipped_levels)[0] for r in rs)
               for k, rs in groups.items()}
    lo = min(v for k, v in base_of.items() if k[0] != "turing")
    hi = max(v for k, v in base_of.items() if k[0] != "turing")
    L = ["", f"## NVIDIA's MLPerf harness: the `{HARNESS}` runtime profile (`--hw ID:{HARNESS}`)", "",
         f"{len(hr)} comparable MLPerf ResNet-50 rows of single-GPU closed-division systems ({late} of them from "
         f"`{LATE}`: rounds v2.0-v4.0, run by NVIDIA, Dell, Lenovo, Supermicro, cTuning and others; the others from "
         "gpu_inference.json and llm_inference.json), every one NVIDIA's TensorRT harness. MIG slices, MaxQ "
         "(power-capped) systems, Jetson rows whose description does not rule out the DLAs and Server runs are shown "
         "apart below. The harness is not a framework's TensorRT integration: on one A100 80GB at int8 it runs "
         "ResNet-50 faster than the Paddle-TRT sweep the Ampere constants are fitted on (below), and at the class "
         f"constants alone its rows were {lo:.2f}-{hi:.2f} (median per device and scenario) on every device but the "
         "T4. So its rows are not fitted into the "
         f"classes' constants; they fit a runtime profile, as `:llama.cpp` is for decode: `{HARNESS}` sets "
         f"`conv.compute` = {sets['conv.compute']:g} (NVIDIA's own int8 convolution plugins) and `gpu.l2_writes` = 1 "
         "(an output that fits the L2 is charged there: the harness runs at a batch whose activations fit the L2, "
         f"and TensorRT reuses their buffers in place; {HARNESS_CONFIG}). Pooled over every class: fitted on "
         f"{n_fit} rows (every second of each class), scored on the other {len(hr) - n_fit}. Its band: {band}.", "",
         f"- held out, at the classes' constants alone: median ratio {hs['before']:.2f}",
         f"- held out, under the profile as shipped: median {hs['median']:.2f}, P10-P90 {hs['p10']:.2f}-{hs['p90']:.2f}, "
         f"within 1.25x {hs['within_1.25']:.0%}, within 1.5x {hs['within_1.5']:.0%} ({hs['n']} rows)",
         f"- for contrast, the convolution share alone refitted with every output at DRAM (`conv.compute` = "
         f"{alone['conv.compute']:g}{', at the grid edge' if alone['at_grid_edge'] else ''}; fit rms of ln ratio "
         f"{alone['rms_log_error']:.3f}, against {profile_fit_rms(rows, halves, l2):.3f} shipped): median "
         f"{hs_alone['median']:.2f}, P10-P90 {hs_alone['p10']:.2f}-{hs_alone['p90']:.2f}, within 1.5x "
         f"{hs_alone['within_1.5']:.0%}. The outputs held in the L2 move the Offline rows of the GPUs whose "
         "harness batch keeps the activations there (L4, RTX 4090: the table's last column against the one before "
         "its batch); the A100's and H100's Offline rows, at a batch beyond their L2, keep only the lower share. "
         "The batch the prediction picks for the L4's Offline rows is the one NVIDIA's configuration names (32)", "",
         "| class | device | scenario | rows (fit / held-out) | class constants alone | under the profile (shipped): "
         "median | min-max | Offline batch | conv share alone, writes at DRAM |", "|---|---|---|---|---|---|---|---|---|"]
    for (c, dev, sc), rs in sorted(groups.items()):
        alt = [fast_ratio(r, with_profile(r, constants(dev), alone_sets), shipped_levels)[0] for r in rs]
        xs = [r["_ratio"] for r in rs]
        nf = sum(1 for r in rs if halves[r["_id"]] == "fit")
        bt = ", ".join(str(b) for b in sorted({r["_batch"] for r in rs})) if sc == "mlperf_offline" else "-"
        L.append(f"| {c} | {dev} | {sc} | {nf} / {len(rs) - nf} | {base_of[(c, dev, sc)]:.2f} | "
                 f"{statistics.median(xs):.2f} | {min(xs):.2f}-{max(xs):.2f} | {bt} | {statistics.median(alt):.2f} |")
    a100 = [r for r in ev if r["device"] == "a100-80gb" and r["model"] == "resnet50" and r["precision"] == "int8"
            and r["_id"] in halves]
    mlperf = [r["_pub"] for r in a100 if r["scenario"] == "mlperf_offline"]
    other = [r for r in a100 if r["scenario"] == "fixed_batch"]
    if mlperf and other:
        best = max(other, key=lambda r: r["_pub"])
        L += ["", f"The same GPU and precision under two TensorRT integrations: the A100 80GB's int8 ResNet-50 runs "
              f"{statistics.median(mlperf):,.0f} images/s in MLPerf Offline (median of {len(mlperf)} rounds) and "
              f"{best['_pub']:,.0f} at batch {best['batch']} in the {runtime_label(best['runtime'])} sweep, "
              f"{statistics.median(mlperf) / best['_pub']:.2f}x apart. A preset as shipped describes the framework "
              f"integration (the classes' constants are fitted on rows outside the harness; a class with none, as "
              f"Hopper, keeps the A100 fit's values); `--hw ID:{HARNESS}` the harness. The T4 stays optimistic "
              "under the profile at batch 1 and 8: a 70 W card, whose clocks under sustained int8 load the preset's "
              "boost-clock peak does not describe."]
    return L


def preset_band(cls: str) -> tuple | None:
    eff = load_preset(CLASSES[cls][0]).efficiency
    if "band.p10" not in eff:
        return None
    return (float(eff["band.p10"]), float(eff["band.p90"]), int(eff["band.points"]))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "gpu_realism.md"))
    ap.add_argument("--fit", action="store_true", help="fit every generation on its fit half and print the constants")
    ap.add_argument("--no-l2", action="store_true", help="with --fit: fit without the GPUs' L2 levels (not written)")
    ap.add_argument("--write", action="store_true", help="with --fit: write the constants and the L2 levels into the "
                                                         "presets")
    ap.add_argument("--bands", action="store_true", help="recompute every class's band from its held-out rows and "
                                                         "write band.p10 / band.p90 / band.points into its presets")
    ap.add_argument("--date", default=datetime.date.today().isoformat(), help="the date the band sources name")
    args = ap.parse_args(argv)
    rows = entries()
    halves = split(rows)
    if args.fit:
        l2 = None if args.no_l2 else l2_table()
        fitted = fits(rows, halves, l2)
        prof = fit_profile(rows, halves, lambda e: fitted[e["_class"]], l2, held=not args.no_l2)
        print(json.dumps({**fitted, f"runtime profile {HARNESS}": prof}, indent=1))
        if args.write:
            if args.no_l2:
                print("not written: the presets ship the L2 levels, so their constants are fitted with them")
                return 1
            changed = write_constants(fitted) + write_levels()
            _spec.cache_clear()
            hs = profile_held(rows, halves, {k: prof[k] for k in ("conv.compute", "gpu.l2_writes")}, shipped_l2())
            if write_profile(prof, hs, args.date):
                changed.append(f"runtimes.toml [runtime.{HARNESS}]")
            print("changed:", ", ".join(sorted(set(changed))) or "nothing")
        return 0
    if args.bands:
        _spec.cache_clear()
        b = bands(rows, halves)
        hb = harness_band(rows, halves)
        print(json.dumps({**b, f"runtime profile {HARNESS}": hb}, indent=1))
        changed = write_bands(b, args.date) + ([f"runtimes.toml [runtime.{HARNESS}]"]
                                                if write_harness_band(hb, args.date) else [])
        print("changed:", ", ".join(changed) or "nothing")
        return 0
    shipped = {c: constants(ps[0]) for c, ps in CLASSES.items()}
    before = held_stats(rows, halves, lambda e: A100)
    after = held_stats(rows, halves, row_constants, shipped_l2())
    l2 = l2_table()
    nol2_fit = fits(rows, halves, None)
    after_nol2 = held_stats(rows, halves, lambda e: with_profile(e, nol2_fit[e["_class"]]))
    sens = {}
    for scale in (0.5, 2.0):
        t = l2_table(scale)
        f = fits(rows, halves, t)
        sens[scale] = held_stats(rows, halves, lambda e, f=f: with_profile(e, f[e["_class"]]), t)
    shipped_levels = shipped_l2()
    ev = evaluate(rows, lambda e, b: predict_latency(e["model"], b, _seq(e), e["device"], e["precision"],
                                                     runtime=HARNESS if harness(e) else None))
    for r in ev:  # the fast path the fit uses is the library's prediction
        fast = fast_ratio(r, row_constants(r), shipped_levels)[0]
        assert abs(fast / r["_ratio"] - 1) < 1e-9, (r["_id"], fast, r["_ratio"])
    ks = knees([r for r in ev if r["_id"] in halves])
    ev_l2 = []
    for r in ev:
        if r["_id"] in halves:
            ratio, thr, bt = fast_ratio(r, with_profile(r, nol2_fit[r["_class"]]))
            ev_l2.append({**r, "_pred": thr, "_ratio": ratio, "_batch": bt})
    unscaled_fit = fits(rows, halves, l2, scaled=False)
    ev_one = []
    for r in ev:
        if r["_id"] in halves:
            ratio, thr, bt = fast_ratio(r, with_profile(r, unscaled_fit[r["_class"]]), l2, scaled=False)
            ev_one.append({**r, "_pred": thr, "_ratio": ratio, "_batch": bt})
    fill_lines = fill_section([r for r in ev if r["_id"] in halves], ev_one, halves, unscaled_fit,
                              targets(ev_one, halves, knees(ev_one)))
    b = bands(rows, halves)
    text = report(ev, halves, ks, before, after, nol2_fit, after_nol2, sens, shipped, b,
                  {c: preset_band(c) for c in CLASSES}, targets(ev_l2, halves, knees(ev_l2)), fill_lines,
                  mlperf_section(ev, rows, halves, shipped_levels, l2))
    Path(args.out).write_text(text)
    print("\n".join(ln for ln in text.splitlines() if ln.startswith("- [")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
