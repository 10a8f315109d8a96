"""A GPU's L2 measured (issue 29, item 2): the H200's file is sound, the Hopper presets' L2 level is what
it gives (the device-reported capacity on the H200, the measured per-SM rate scaled to each device), and
the page is what ``benchmarks/gpu_l2.py report`` writes from it."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from onnxperf.hardware.files import load_preset

from .util import benchmark

ROOT = Path(__file__).resolve().parents[1]


def _load(name: str, path: str):
    return benchmark(Path(path).name, name)


L2 = _load("onnxperf_bench_gpu_l2", "benchmarks/gpu_l2.py")
G = _load("onnxperf_bench_gpu_realism_l2", "benchmarks/gpu_realism.py")
M = json.loads(L2.MEASURED.read_text())


def test_the_measurement_sees_an_l2_and_dram():
    """Reads over footprints within the L2 run faster than DRAM's data-sheet bandwidth, reads over 4x
    its capacity at most at it; the consumer of a just-written tensor is faster hot than cold up to
    16 MiB and the same from 64 MiB."""
    cap = M["l2_cache_size_bytes"]
    dram = load_preset("h200").memory_bandwidth_bytes_per_s
    small = [r["bytes_per_s"] for r in M["read"] if r["bytes"] <= cap // 2]
    big = [r["bytes_per_s"] for r in M["read"] if r["bytes"] >= 4 * cap]
    assert len(small) >= 5 and min(small) > 1.5 * dram
    assert big and max(big) <= dram
    for p in M["pairs"]:
        if p["bytes"] <= 16 * 2**20:
            assert p["cold_s"] > 1.3 * p["hot_s"]
        if p["bytes"] >= 64 * 2**20:
            assert p["cold_s"] == pytest.approx(p["hot_s"], rel=0.05)


def test_the_hopper_presets_carry_the_measured_l2():
    cap, per_sm_clk, _ = G.measured_l2()
    small = [r["bytes_per_s"] for r in M["read"] if r["bytes"] <= cap // 2]
    clock = float(M["smi_after"]["clocks.sm"].split()[0]) * 1e6
    assert per_sm_clk == pytest.approx(statistics.median(small) / (M["sms"] * clock))
    h200 = load_preset("h200")
    (lv,) = h200.memory_levels
    assert lv.capacity_bytes == cap == M["l2_cache_size_bytes"]
    for p in ("h200", "h100-sxm", "h100-pcie"):
        spec = load_preset(p)
        sms = spec.efficiency["gpu.sms"]
        clock = spec.peak_flops_per_s["fp32"] / (2 * 128 * sms)  # 128 FP32 lanes per Hopper SM
        assert spec.memory_levels[0].bandwidth_bytes_per_s == pytest.approx(per_sm_clk * sms * clock, rel=1e-3)
        assert "measured" in spec.memory_levels[0].source


@pytest.mark.slow
def test_the_page_is_what_report_writes():
    assert L2.report(M) == L2.OUT.read_text()
