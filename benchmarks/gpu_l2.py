"""A GPU's L2, measured: its capacity as the device reports it, its read bandwidth, and whether a kernel
reading what the kernel before it wrote is served from it (issue 29, item 2: the L2 level the GPU presets
carry derives its bandwidth from the A100 whitepaper's bytes per clock per SM; NVIDIA states none for Ada or
Hopper).

    python benchmarks/gpu_l2.py measure --out l2.json       # on the GPU machine (PyTorch, Triton)
    python benchmarks/gpu_l2.py report benchmarks/measured/gpu_l2_h200.json \
        [--out benchmarks/results/gpu_l2.md]                  # here

What is measured (``measure``):

- **read bandwidth by footprint**: a Triton kernel whose programs read a buffer of S bytes again and
  again, each pass a different block per program, with loads that bypass L1 (``cache_modifier=".cg"``),
  summing into registers (nothing written but one block per program): bytes read over time, for S from
  1 MiB to 4 GiB. Below the L2's capacity the reads hit L2; far above it they come from DRAM.
- **producer then consumer**: ``y = x·2`` then ``z = y + 1`` on tensors of S bytes, and the same with a
  512 MiB buffer written between the two (the L2 flushed of y): the consumer's kernel time from the
  profiler (device time of the kernel alone), hot and cold, for S from 2 MiB to 256 MiB.

Timing: CUDA events around each read kernel after 3 warm-ups, the median of 20; kernel device times from
``torch.profiler`` (medians over 20 pairs).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

MIB = 2 ** 20
READ_SIZES = tuple(x * MIB for x in (1, 2, 4, 8, 12, 16, 24, 32, 40, 48, 56, 64, 96, 128, 256, 1024, 4096))
PAIR_SIZES = tuple(x * MIB for x in (2, 4, 8, 16, 24, 32, 48, 64, 128, 256))
BYTES_PER_RUN = 8 * 2 ** 30  # each read measurement moves 8 GiB


def _smi() -> dict:
    """The GPU's clocks, power and temperature: ``benchmarks/gpu_decode.py``'s reading, loaded by path."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("onnxperf_bench_gpu_decode", Path(__file__).with_name("gpu_decode.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod._smi()


def measure() -> dict:
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def read_kernel(x_ptr, out_ptr, nblocks, passes, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        nprog = tl.num_programs(0)
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for p in range(passes):
            blk = (pid + p * nprog) % nblocks
            offs = blk.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
            acc += tl.load(x_ptr + offs, cache_modifier=".cg").to(tl.float32)
        tl.store(out_ptr + pid * BLOCK + tl.arange(0, BLOCK), acc)

    props = torch.cuda.get_device_properties(0)
    res = {"what": "L2 capacity, read bandwidth by footprint, producer->consumer reuse (benchmarks/gpu_l2.py)",
           "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "torch": torch.__version__,
           "triton": triton.__version__, "device": torch.cuda.get_device_name(0), "sms": props.multi_processor_count,
           "l2_cache_size_bytes": int(getattr(props, "L2_cache_size", 0)), "smi_before": _smi(), "read": [], "pairs": []}
    block = 4096  # fp16 elements per block: 8 KiB
    grid = props.multi_processor_count * 16
    out = torch.empty(grid * block, device="cuda", dtype=torch.float32)
    try:
        _reads(torch, read_kernel, res, grid, block, out)
    except Exception:  # noqa: BLE001  (recorded; the pairs are measured anyway)
        import traceback
        res["read_error"] = traceback.format_exc()[-1500:]
        print(res["read_error"], flush=True)
    torch.cuda.empty_cache()
    try:
        _pairs(torch, res)
    except Exception:  # noqa: BLE001
        import traceback
        res["pairs_error"] = traceback.format_exc()[-1500:]
        print(res["pairs_error"], flush=True)
    res["smi_after"] = _smi()
    return res


def _reads(torch, read_kernel, res, grid, block, out) -> None:
    for size in READ_SIZES:
        n = size // 2
        x = torch.randn(n, device="cuda", dtype=torch.float16)
        nblocks = n // block
        passes = max(1, BYTES_PER_RUN // (grid * block * 2))
        run = lambda: read_kernel[(grid,)](x, out, nblocks, passes, BLOCK=block)  # noqa: E731
        for _ in range(3):
            run()
        torch.cuda.synchronize()
        ts = []
        for _ in range(20):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            run()
            b.record()
            b.synchronize()
            ts.append(a.elapsed_time(b) / 1e3)
        t = statistics.median(ts)
        moved = grid * passes * block * 2
        res["read"].append({"bytes": size, "moved": moved, "median_s": t, "bytes_per_s": moved / t})
        print(f"read {size / MIB:7.0f} MiB: {moved / t / 1e12:6.2f} TB/s", flush=True)
        del x


def _pairs(torch, res) -> None:
    from torch.profiler import ProfilerActivity, profile

    flush = torch.empty(512 * MIB // 4, device="cuda", dtype=torch.float32)
    for size in PAIR_SIZES:
        x = torch.randn(size // 2, device="cuda", dtype=torch.float16)
        y, z = torch.empty_like(x), torch.empty_like(x)
        got = {}
        for mode in ("hot", "cold"):
            for _ in range(3):
                torch.mul(x, 2, out=y)
                torch.add(y, 1, out=z)
            torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                for _ in range(20):
                    torch.mul(x, 2, out=y)
                    if mode == "cold":
                        flush.fill_(1.0)
                    torch.add(y, 1, out=z)
                torch.cuda.synchronize()
            adds = [e for e in prof.key_averages() if "add" in e.key.lower() and "fill" not in e.key.lower()
                    and "mul" not in e.key.lower() and not e.key.startswith("cuda")
                    and (getattr(e, "device_time_total", 0) or 0) > 0]
            times = [e.device_time_total / e.count for e in adds]
            got[mode] = max(times) / 1e6 if times else None
            got[mode + "_kernels"] = [e.key[:120] for e in adds]
        res["pairs"].append({"bytes": size, "hot_s": got["hot"], "cold_s": got["cold"], "kernels": got["hot_kernels"],
                             "hot_bytes_per_s": 2 * size / got["hot"] if got["hot"] else None,
                             "cold_bytes_per_s": 2 * size / got["cold"] if got["cold"] else None})
        print(f"pair {size / MIB:5.0f} MiB: consumer hot {got['hot'] and got['hot'] * 1e6} us, cold "
              f"{got['cold'] and got['cold'] * 1e6} us", flush=True)
        del x, y, z


# ---------------------------------------------------------------------------------------------------
# report (here)

ROOT = Path(__file__).resolve().parent.parent
MEASURED = ROOT / "benchmarks" / "measured" / "gpu_l2_h200.json"
OUT = ROOT / "benchmarks" / "results" / "gpu_l2.md"
PRESETS = {"NVIDIA H200": "h200"}


def consumer_model(size: int, preset: str) -> dict:
    """onnxperf's memory time for the consumer of the pair: ``y = x·2; z = y + 1`` on fp16 tensors of
    ``size`` bytes. The Add's bytes (y read, z written) at the levels the reuse model gives a GPU's L2
    (:func:`onnxperf.predict.reuse.level_bytes` with ``gpu=True``: the kernel model's), each over
    ``default.memory`` x that level's bandwidth; and the same at DRAM alone. Node by node, as measured
    (the kernel model would fuse the two into one kernel)."""
    import onnxperf
    from onnx import TensorProto, helper

    from onnxperf.hardware import load_spec
    from onnxperf.predict.reuse import level_bytes

    n = size // 2
    g = helper.make_graph(
        [helper.make_node("Mul", ["x", "two"], ["y"]), helper.make_node("Add", ["y", "one"], ["z"])], "pair",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [n])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT16, [n])],
        [helper.make_tensor("two", TensorProto.FLOAT16, [], [2.0]), helper.make_tensor("one", TensorProto.FLOAT16, [], [1.0])])
    a = onnxperf.analyze(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))
    spec = load_spec(preset)
    (lv,) = spec.memory_levels
    e_m = float(spec.efficiency["default.memory"])
    add = next(nd for nd in a.main_nodes if nd.op_type == "Add")
    per = level_bytes(a, (lv.capacity_bytes,), gpu=True)[add.key]
    bws = (lv.bandwidth_bytes_per_s, spec.memory_bandwidth_bytes_per_s)
    return {"l2_s": sum(b / (e_m * bw) for b, bw in zip(per, bws)), "l2_share": per[0] / sum(per),
            "dram_s": sum(per) / (e_m * spec.memory_bandwidth_bytes_per_s)}


def report(m: dict) -> str:
    import numpy as np

    preset = PRESETS[m["device"]]
    from onnxperf.hardware import load_spec

    spec = load_spec(preset)
    (lv,) = spec.memory_levels
    cap = m["l2_cache_size_bytes"]
    small = [r["bytes_per_s"] for r in m["read"] if r["bytes"] <= cap // 2]
    big = [r["bytes_per_s"] for r in m["read"] if r["bytes"] >= 4 * cap]
    L = ["# The L2 of a GPU, measured (issue 29, item 2)", "",
         f"`python benchmarks/gpu_l2.py measure` on one {m['device']} ({m['sms']} SMs, PyTorch {m['torch']}, "
         f"Triton {m['triton']}), {m['date']}; `python benchmarks/gpu_l2.py report` wrote this page from "
         f"`{MEASURED.relative_to(ROOT)}`. SM clock after the run {m['smi_after'].get('clocks.sm')} (max "
         f"{m['smi_after'].get('clocks.max.sm')}).", "",
         f"- capacity the device reports: **{cap / MIB:g} MiB** (the `{preset}` preset: {lv.capacity_bytes / MIB:g} MiB, "
         f"`[[memory_levels]]`)",
         f"- read bandwidth, footprints of at most half of it: median **{np.median(small) / 1e12:.2f} TB/s** "
         f"({min(small) / 1e12:.2f}-{max(small) / 1e12:.2f}); the preset's L2 level: {lv.bandwidth_bytes_per_s / 1e12:.2f} TB/s",
         f"- footprints of 4x the L2 and more (DRAM): {np.median(big) / 1e12:.2f} TB/s, "
         f"{np.median(big) / spec.memory_bandwidth_bytes_per_s:.2f} of the data sheet's "
         f"{spec.memory_bandwidth_bytes_per_s / 1e12:g} TB/s (the preset's `default.memory`: "
         f"{spec.efficiency['default.memory']:g})", "",
         "The Hopper presets' L2 bandwidth is this per-SM-per-clock rate scaled to each device's SMs and clock "
         "(`benchmarks/gpu_realism.py`, `measured_l2`); it replaced the Ampere whitepaper's rate (12.4 TB/s on this "
         "device), and the H200's capacity is the reported 60 MiB (the H100 whitepaper's 50 MB before).", "",
         "## Read bandwidth by footprint", "",
         "A Triton kernel reads a buffer of the footprint again and again (8 GiB in all; loads bypass L1), "
         "summing into registers.", "", "| footprint | TB/s |", "|---:|---:|"]
    L += [f"| {r['bytes'] / MIB:g} MiB | {r['bytes_per_s'] / 1e12:.2f} |" for r in m["read"]]
    L += ["", "## A kernel reading what the one before wrote", "",
          "`y = x·2` then `z = y + 1` (fp16, two kernels); hot: as is, cold: a 512 MiB buffer written between the "
          "two. The consumer's device time (profiler) beside onnxperf's memory time for the Add, node by node on the "
          f"`{preset}` preset: with its L2 level (the reuse model for a GPU: y read from L2 when y and the kernel's "
          "own output z fit it, z written to DRAM) and at DRAM alone. The model has no launch or tail cost inside "
          "a kernel's time; the measured times include the kernel's ramp (about 1-2 µs).", "",
          "| size | measured hot µs | measured cold µs | cold / hot | onnxperf with the L2 µs | share of its bytes in L2 | "
          "onnxperf, DRAM µs | hot / L2 model | cold / DRAM model |", "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in m["pairs"]:
        mod = consumer_model(r["bytes"], preset)
        L.append(f"| {r['bytes'] / MIB:g} MiB | {r['hot_s'] * 1e6:.2f} | {r['cold_s'] * 1e6:.2f} | "
                 f"{r['cold_s'] / r['hot_s']:.2f} | {mod['l2_s'] * 1e6:.2f} | {mod['l2_share']:.0%} | {mod['dram_s'] * 1e6:.2f} | "
                 f"{r['hot_s'] / mod['l2_s']:.2f} | {r['cold_s'] / mod['dram_s']:.2f} |")
    L += ["", "What it says: a tensor the kernel before wrote is read faster while it and the consumer's own output "
          "fit the L2 (cold / hot about 1.5 up to 16 MiB, 1.24 at 24 MiB, 1.0 from 48 MiB), and the written half "
          "costs DRAM bandwidth either way (hot times match a read from L2 plus a write to DRAM). The reuse model "
          "charged both halves at the L2 before (2.3-2.9x optimistic at 16-48 MiB); it now charges GPU writes at "
          "DRAM and counts a kernel's own writes in its reads' reuse distance (`onnxperf/predict/reuse.py`)."]
    return "\n".join(L) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("measure")
    m.add_argument("--out", required=True)
    r = sub.add_parser("report")
    r.add_argument("measured", nargs="?", default=str(MEASURED))
    r.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    if a.cmd == "report":
        text = report(json.loads(Path(a.measured).read_text()))
        if a.out:
            Path(a.out).write_text(text)
        print(text)
        return 0
    if a.cmd == "measure":
        res = measure()
        Path(a.out).write_text(json.dumps(res, indent=1, sort_keys=True) + "\n")
        return 0
    return 2


if __name__ == "__main__":
    sys.exit(main())
