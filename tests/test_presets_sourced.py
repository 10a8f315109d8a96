"""Every preset figure has a source, and the new presets' figures follow from what their sources state
(issue 29, item 4): peaks, bandwidth, capacity, the interconnect and a GPU's SM count; the optional
``interconnect_bytes_per_s`` is checked like a bandwidth (a one-line refusal for inf, NaN, 0, -1).
"""

from __future__ import annotations

import json
import math
import pickle
import re

import pytest

from onnxperf import cli
from onnxperf.base.errors import OptionError
from onnxperf.hardware import HardwareSpec, list_presets, load_preset, load_spec, to_toml
from onnxperf.hardware.render import show_text

PRESETS = list_presets()
#: presets that carry the GPU kernel model (every kind="gpu" preset and the Jetsons)
KERNEL_MODEL = [p for p in PRESETS if "fusion.gpu" in load_preset(p).efficiency]
#: the GPU presets the interconnect was filled in for (existing and new)
WITH_LINK = ["a100-40gb", "a100-80gb", "h100-sxm", "h100-pcie", "h100-nvl", "h200", "gh200-96gb", "gh200-144gb",
             "h20", "b200", "l4", "l40s", "t4", "a10", "a30", "a40", "v100-sxm2-32gb", "rtx3090", "rtx4090",
             "rtx5090", "rtx6000-ada", "mi300x"]


def _figures(spec) -> list[str]:
    keys = [*spec.peak_flops_per_s, "memory_bandwidth"]
    keys += ["memory_capacity"] if spec.memory_capacity_bytes is not None else []
    keys += ["interconnect"] if spec.interconnect_bytes_per_s is not None else []
    return keys


# ---------------------------------------------------------------------------------------------- every preset

@pytest.mark.parametrize("pid", PRESETS)
def test_every_figure_has_a_stated_source(pid):
    spec = load_preset(pid)
    for key in _figures(spec):
        src = spec.sources.get(key, "")
        assert src.strip() and not src.startswith("not stated"), (pid, key)
    # a derived figure shows its arithmetic: the source says "derived:" and gives at least one operation
    for key in _figures(spec):
        src = spec.sources[key]
        if src.startswith("derived"):
            assert any(op in src for op in (" / ", " x ", "x the", "/ 2", "half")), (pid, key, src)
    # dense figures only: a source quoting a sparse figure gives the dense one beside it ("62.5 (125 with
    # sparsity)", "183 | 366 (dense | with sparsity)") or says how the dense one was had ("dense is half")
    for key, src in spec.sources.items():
        if "with sparsity" in src:
            assert "dense" in src or re.search(r"\([\d,.]+ with sparsity\)", src), (pid, key, src)


@pytest.mark.parametrize("pid", KERNEL_MODEL)
def test_kernel_model_presets_state_their_own_sm_count(pid):
    spec = load_preset(pid)
    sms = spec.efficiency["gpu.sms"]
    assert sms >= 1 and sms == int(sms)
    src = spec.efficiency_sources["gpu.sms"]
    assert str(int(sms)) in src and len(src) > 20, (pid, src)


@pytest.mark.parametrize("pid", WITH_LINK)
def test_gpu_presets_give_the_interconnect_per_direction(pid):
    spec = load_preset(pid)
    link = spec.interconnect_bytes_per_s
    assert link is not None and math.isfinite(link) and link > 0
    src = spec.sources["interconnect"]
    assert "one direction" in src or "per direction" in src, src
    # NVLink on SXM / NVL parts, Infinity Fabric on the MI300X, PCIe otherwise
    if "sxm" in pid or pid in ("h100-nvl", "h200", "gh200-96gb", "gh200-144gb", "h20", "b200", "a100-40gb",
                               "a100-80gb"):
        assert "NVLink" in src
    elif pid == "mi300x":
        assert "Infinity Fabric" in src
    else:
        assert "PCI" in src, src


def test_cpus_and_socs_give_no_interconnect():
    for pid in PRESETS:
        spec = load_preset(pid)
        if spec.kind != "gpu":
            assert spec.interconnect_bytes_per_s is None and "interconnect" not in spec.sources, pid


# ---------------------------------------------------------------------------------------------- spot checks

def test_h100_nvl_figures_follow_the_data_sheet():
    s = load_spec("h100-nvl")
    sparse_fp16, sparse_fp8, nvlink_both_ways = 1671e12, 3341e12, 600e9
    assert s.memory_bandwidth_bytes_per_s == 3.9e12
    assert s.peak_for("float16") == sparse_fp16 / 2 and s.peak_for("float8e4m3fn") == sparse_fp8 / 2
    assert s.interconnect_bytes_per_s == nvlink_both_ways / 2
    assert s.memory_capacity_bytes == 94 * 2 ** 30


def test_mi300x_figures_follow_the_rocm_table():
    s = load_spec("mi300x")
    cus, fp16_flops_per_clock_per_cu, links, link_both_ways = 304, 2048, 7, 128e9
    assert s.memory_bandwidth_bytes_per_s == 5.3e12
    assert s.efficiency["gpu.sms"] == cus
    # the table's 1307.4 TFLOP/s is 304 CUs x 2048 FLOP/clock x the 2.1 GHz peak engine clock
    assert s.peak_for("float16") == pytest.approx(cus * fp16_flops_per_clock_per_cu * 2.1e9, rel=1e-4)
    assert s.interconnect_bytes_per_s == links * link_both_ways / 2


def test_b200_is_one_eighth_of_the_hgx_board():
    s = load_spec("b200")
    gpus, fp8_sparse_board, bf16_sparse_board, fp32_board = 8, 72e15, 36e15, 600e12
    assert s.peak_for("float8e4m3fn") == fp8_sparse_board / gpus / 2
    assert s.peak_for("bfloat16") == bf16_sparse_board / gpus / 2
    assert s.peak_for("float32") == fp32_board / gpus
    assert s.memory_bandwidth_bytes_per_s == 64e12 / gpus and s.interconnect_bytes_per_s == 1.8e12 / 2


def test_gh200_variants_differ_only_in_memory():
    small, large = load_spec("gh200-96gb"), load_spec("gh200-144gb")
    assert small.peak_flops_per_s == large.peak_flops_per_s == load_spec("h100-sxm").peak_flops_per_s
    assert (small.memory_bandwidth_bytes_per_s, large.memory_bandwidth_bytes_per_s) == (4e12, 4.9e12)
    assert (small.memory_capacity_bytes, large.memory_capacity_bytes) == (96 * 2 ** 30, 144 * 2 ** 30)


def test_gpu_parts_agree_with_the_sm_count():
    for pid, cores_per_sm in (("rtx5090", 128), ("jetson-orin-nx-16gb", 128), ("jetson-orin-nano-8gb", 128)):
        s = load_spec(pid)
        cores = int(s.efficiency["gpu.sms"]) * cores_per_sm
        assert f"{cores}-core" in s.sources["fp32"] or f"{cores:,}" in s.sources["fp32"], pid
    rtx5090 = load_spec("rtx5090")
    assert rtx5090.peak_for("float32") == 21_760 * 2.407e9 * 2
    assert rtx5090.memory_bandwidth_bytes_per_s == 28e9 * 512 / 8  # 28 Gbps on 512 bits


def test_jetson_dense_int8_from_the_data_sheets():
    nano, nx = load_spec("jetson-orin-nano-8gb"), load_spec("jetson-orin-nx-16gb")
    assert nano.peak_for("int8") == 40e12 / 2                     # 40 sparse TOPS, all on the GPU
    sms, clock_hz, ops_per_sm_per_clock = 8, 0.918e9, 4096
    assert nx.peak_for("int8") == sms * clock_hz * ops_per_sm_per_clock
    assert nx.peak_for("float16") == nx.peak_for("int8") / 2


def test_amx_peaks_are_cores_x_clock_x_ops_per_cycle():
    for pid, cores, clock_hz in (("xeon-8480plus", 56, 2.0e9), ("xeon-6980p", 128, 2.0e9)):
        s = load_spec(pid)
        bf16_per_cycle, int8_per_cycle = 1024, 2048                   # Intel AMX, per core
        assert s.peak_for("bfloat16") == cores * clock_hz * bf16_per_cycle
        assert s.peak_for("int8") == cores * clock_hz * int8_per_cycle
        assert "1,024 BF16" in s.sources["bf16"] and "2,048 INT8" in s.sources["int8"]
        assert s.peak_for("float32") == cores * clock_hz * 16 * 2 * 2  # AVX-512, 2 FMA units


def test_arm_and_turin_parts():
    assert load_spec("graviton3").peak_for("float32") == 64 * 2.6e9 * 4 * 4 * 2
    assert load_spec("graviton4").peak_for("float32") == 96 * 2.8e9 * 4 * 4 * 2
    turin = load_spec("epyc-9755")
    assert turin.peak_for("float32") == 128 * 2.7e9 * 16 * 2 * 2
    assert turin.memory_bandwidth_bytes_per_s == 12 * 6000e6 * 8


def test_pcie_interconnects():
    assert load_spec("t4").interconnect_bytes_per_s == 32e9 / 2       # PCIe Gen3 x16
    for pid in ("l4", "a10", "l40s", "rtx4090"):
        assert load_spec(pid).interconnect_bytes_per_s == 64e9 / 2    # PCIe Gen4 x16
    assert load_spec("h100-pcie").interconnect_bytes_per_s == 128e9 / 2  # PCIe Gen5 x16
    assert load_spec("h100-sxm").interconnect_bytes_per_s == load_spec("h200").interconnect_bytes_per_s == 900e9 / 2


# ---------------------------------------------------------------------------------------------- the field

def _spec(**kw) -> HardwareSpec:
    return HardwareSpec(id="x", name="x", kind="gpu", peak_flops_per_s={"fp32": 1e12},
                        memory_bandwidth_bytes_per_s=1e12, memory_capacity_bytes=None, sources={}, **kw)


@pytest.mark.parametrize("bad", [float("inf"), float("nan"), 0, -1, 1e-320, 1e31])
def test_interconnect_is_checked_like_a_bandwidth(bad):
    with pytest.raises(OptionError, match="interconnect"):
        _spec(interconnect_bytes_per_s=bad)


def test_interconnect_round_trips():
    s = _spec(interconnect_bytes_per_s=450e9)
    assert s.sources["interconnect"] == "not stated"
    assert pickle.loads(pickle.dumps(s)) == s
    d = s.to_dict()
    assert d["interconnect_bytes_per_s"] == 450e9 and d["sources"]["interconnect"]
    assert _spec().to_dict()["interconnect_bytes_per_s"] is None
    assert "interconnect_bytes_per_s = 450e9" in to_toml(s)


def test_hw_show_prints_the_interconnect(capsys):
    text = show_text(load_spec("h100-nvl"))
    assert "interconnect      300 GB/s per direction  NVIDIA H100 Tensor Core GPU data sheet" in text
    assert "interconnect" not in show_text(load_spec("epyc-9654"))
    assert cli.main(["hw", "show", "mi300x", "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["interconnect_bytes_per_s"] == 448e9 and "Infinity Fabric" in d["sources"]["interconnect"]


SPEC = 'id = "box"\nname = "Box"\nkind = "gpu"\nmemory_bandwidth_bytes_per_s = 1e12\n[peak_flops_per_s]\nfp32 = 1e12\n'


@pytest.mark.parametrize("value", ["inf", "nan", "0", "-1", "5e-324", "1" + "0" * 400, '"fast"'])
def test_a_spec_file_with_a_bad_interconnect_is_refused_in_one_line(tmp_path, capsys, value):
    path = tmp_path / "box.toml"
    path.write_text(f"interconnect_bytes_per_s = {value}\n" + SPEC, encoding="utf-8")
    out = tmp_path / "out.json"
    code = cli.main(["hw", "show", str(path), "--format", "json", "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("onnxperf: error: ") and err.count("\n") == 1 and "Traceback" not in err
    assert f"hardware spec {path}: interconnect_bytes_per_s" in err and len(err) < 400, err
    assert not out.exists()


def test_an_interconnect_source_needs_the_figure(tmp_path):
    path = tmp_path / "box.toml"
    path.write_text(SPEC + '[sources]\ninterconnect = "a data sheet"\n', encoding="utf-8")
    with pytest.raises(OptionError, match="does not give: interconnect"):
        load_spec(str(path))
    path.write_text("interconnect_bytes_per_s = 32e9\n" + SPEC + '[sources]\ninterconnect = "PCIe Gen4 x16"\n',
                    encoding="utf-8")
    spec = load_spec(str(path))
    assert spec.interconnect_bytes_per_s == 32e9 and spec.sources["interconnect"] == "PCIe Gen4 x16"
    path.write_text("interconnect_bytes_per_s = 32e9\n" + SPEC, encoding="utf-8")
    assert load_spec(str(path)).sources["interconnect"] == f"not stated in {path}"
