"""Hardware specs: the worked figures, parts formulas, presets, dtype fallbacks, TOML files, the hw command."""

import argparse
import json
import math
import pickle
from importlib import resources

import pytest

from onnxperf.cli import hw
from onnxperf.base.errors import OptionError
from onnxperf.hardware import FALLBACKS, PEAK_KEYS, HardwareSpec, cpu_from_parts, cpu_peak_fp32, gpu_peak_fp32, list_presets, load_preset, load_spec, to_toml
from onnxperf.hardware.spec import MEMORY_KEYS, SOURCE_KEYS

GB = 1e9


# ---------------------------------------------------------------------------------------------- worked figures

def test_xeon_silver_4210x2_worked_figures():
    sockets, cores_per_socket, clock_hz, lanes, fma_units = 2, 10, 1.5e9, 16, 1  # AVX-512, 1 FMA unit
    channels, transfers_per_s, bytes_per_transfer = 4, 2400e6, 8                 # 4 x DDR4-2400
    spec = load_spec("xeon-silver-4210x2")
    assert spec.peak_flops_per_s["fp32"] == sockets * cores_per_socket * clock_hz * lanes * fma_units * 2 == 960e9
    assert spec.memory_bandwidth_bytes_per_s == channels * transfers_per_s * bytes_per_transfer == 76.8e9
    assert spec.ridge_point() == 960e9 / 76.8e9 == 12.5
    assert spec.kind == "cpu" and "computed from parts" in spec.sources["fp32"]


def test_rtx3090_worked_figures():
    cuda_cores, boost_hz = 10_496, 1.7e9
    spec = load_spec("rtx3090")
    assert spec.peak_flops_per_s["fp32"] == cuda_cores * 1.7 * 2 * 1e9 == 35.6864e12
    assert round(spec.peak_for("float32") / 1e12, 1) == 35.7
    assert spec.memory_bandwidth_bytes_per_s == 936e9
    assert round(spec.ridge_point("fp32"), 1) == 38.1
    assert spec.ridge_point() == pytest.approx(cuda_cores * boost_hz * 2 / 936e9)


# ---------------------------------------------------------------------------------------------- parts

def test_cpu_from_parts():
    cores, clock_ghz, lanes, fma_units, sockets = 10, 1.5, 16, 1, 2
    spec = cpu_from_parts(cores, clock_ghz, lanes, fma_units, sockets=sockets,
                          memory_bandwidth_bytes_per_s=76.8e9, id="my-xeon", source="my notes")
    assert spec.peak_for("float32") == sockets * cores * clock_ghz * 1e9 * lanes * fma_units * 2
    assert spec.ridge_point() == 12.5
    assert spec.sources["fp32"].startswith("computed from parts: 2 sockets x 10 cores x 1.5 GHz")
    assert spec.sources["fp32"].endswith("my notes")
    assert spec.peak_for("float64") == spec.peak_for("float32") / 2  # documented fallback
    assert cpu_peak_fp32(4, 2.4, 4, 2) == 4 * 2.4e9 * 4 * 2 * 2      # Raspberry Pi 5
    assert gpu_peak_fp32(16_384, 2.52) == pytest.approx(82.58e12, rel=1e-4)


@pytest.mark.parametrize("bad", [dict(cores=0), dict(cores=2.5), dict(clock_ghz=0), dict(clock_ghz=float("nan")),
                                 dict(fma_units=-1), dict(sockets=True)])
def test_cpu_from_parts_rejects_bad_parts(bad):
    args = dict(cores=8, clock_ghz=3.0, simd_fp32_lanes=8, fma_units=2, sockets=1) | bad
    with pytest.raises(OptionError):
        cpu_peak_fp32(**args)


# ---------------------------------------------------------------------------------------------- presets

REQUIRED = {"x86 server": "epyc-9654", "laptop": "ryzen-7840u", "arm board": "rpi5", "t4": "t4", "l4": "l4",
            "a10": "a10", "3090": "rtx3090", "4090": "rtx4090", "a100 40": "a100-40gb", "a100 80": "a100-80gb",
            "h100 sxm": "h100-sxm", "h100 pcie": "h100-pcie", "h200": "h200", "jetson": "jetson-orin",
            "apple": "apple-m1", "worked example": "xeon-silver-4210x2",
            # issue 29, item 4: the devices people deploy on
            "l40s": "l40s", "h100 nvl": "h100-nvl", "gh200 hbm3": "gh200-96gb", "gh200 hbm3e": "gh200-144gb",
            "h20": "h20", "b200": "b200", "a30": "a30", "a40": "a40", "v100": "v100-sxm2-32gb", "5090": "rtx5090",
            "rtx 6000 ada": "rtx6000-ada", "orin nx": "jetson-orin-nx-16gb", "orin nano": "jetson-orin-nano-8gb",
            "mi300x": "mi300x", "graviton3": "graviton3", "graviton4": "graviton4",
            "sapphire rapids": "xeon-8480plus", "granite rapids": "xeon-6980p", "turin": "epyc-9755"}


def test_required_presets_exist():
    assert set(REQUIRED.values()) <= set(list_presets())


@pytest.mark.parametrize("preset_id", list_presets())
def test_every_preset_loads_with_a_source_for_every_figure(preset_id):
    spec = load_preset(preset_id)
    assert spec.id == preset_id and spec.name and spec.kind in ("cpu", "gpu", "soc")
    figures = [*spec.peak_flops_per_s, "memory_bandwidth"]
    if spec.memory_capacity_bytes is not None:
        figures.append("memory_capacity")
    if spec.interconnect_bytes_per_s is not None:
        figures.append("interconnect")
    assert set(spec.sources) == set(figures)
    for k in figures:
        assert len(spec.sources[k]) > 20 and not spec.sources[k].startswith("not stated in"), (preset_id, k)
    for k, v in spec.peak_flops_per_s.items():
        assert k in PEAK_KEYS and math.isfinite(v) and v > 0
    assert spec.memory_bandwidth_bytes_per_s > 0
    # dense, not sparse: no low-precision figure is more than 16x fp32 except on tensor-core GPUs, and
    # low precision is never slower than fp32 except where a source says it runs at the fp32 rate
    assert spec.peak_for("fp16") >= spec.peak_for("fp32") or "fp32 rate" in spec.sources.get("fp16", "")


@pytest.mark.parametrize("preset_id,fp16_dense,int8_dense", [
    ("a100-40gb", 312e12, 624e12), ("a100-80gb", 312e12, 624e12), ("h100-sxm", 989.4e12, 1978.9e12),
    ("h200", 989.4e12, 1978.9e12), ("h100-pcie", 756.5e12, 1513e12), ("t4", 65e12, 130e12),
    ("l4", 121e12, 242.5e12), ("a10", 125e12, 250e12), ("rtx3090", 71e12, 284e12), ("rtx4090", 165.2e12, 660.6e12),
    ("jetson-orin", 42.5e12, 85e12),
    ("l40s", 362.05e12, 733e12), ("h100-nvl", 1671e12 / 2, 3341e12 / 2), ("gh200-96gb", 989.4e12, 1978.9e12),
    ("gh200-144gb", 989.4e12, 1978.9e12), ("h20", 148e12, 296e12), ("b200", 36e15 / 8 / 2, 72e15 / 8 / 2),
    ("a30", 165e12, 330e12), ("a40", 149.7e12, 299.3e12), ("rtx5090", 209.5e12, 838e12),
    ("rtx6000-ada", 1457e12 / 4, 1457e12 / 2), ("mi300x", 1307.4e12, 2614.9e12),
    ("jetson-orin-nano-8gb", 40e12 / 4, 40e12 / 2),
])
def test_gpu_presets_are_dense_figures(preset_id, fp16_dense, int8_dense):
    spec = load_preset(preset_id)
    assert spec.peak_for("float16") == fp16_dense
    assert spec.peak_for("int8") == int8_dense


def test_memory_figures_of_some_presets():
    assert load_spec("h100-sxm").memory_bandwidth_bytes_per_s == 3.35e12
    assert load_spec("a100-80gb").memory_capacity_bytes == 80 * 2 ** 30
    assert load_spec("t4").memory_bandwidth_bytes_per_s == 320 * GB
    assert load_spec("rpi5").memory_bandwidth_bytes_per_s == 4267e6 * 4  # LPDDR4X-4267, 32-bit
    assert load_spec("h100-nvl").memory_bandwidth_bytes_per_s == 3.9e12
    assert load_spec("mi300x").memory_bandwidth_bytes_per_s == 5.3e12
    assert load_spec("graviton3").memory_bandwidth_bytes_per_s == 8 * 4800e6 * 8   # 8 x DDR5-4800
    assert load_spec("xeon-6980p").memory_bandwidth_bytes_per_s == 12 * 6400e6 * 8  # 12 x DDR5-6400


def test_presets_ship_as_package_data():
    names = {f.name for f in resources.files("onnxperf.hardware.presets").iterdir()}
    assert {f"{i}.toml" for i in list_presets()} <= names


def test_unknown_preset_lists_the_available_ones():
    with pytest.raises(OptionError) as info:
        load_spec("rtx9999")
    msg = str(info.value)
    assert "rtx9999" in msg and "rtx3090" in msg and "h100-sxm" in msg and "\n" not in msg


def test_preset_ids_are_case_insensitive():
    assert load_spec("RTX3090") == load_spec("rtx3090")


# ---------------------------------------------------------------------------------------------- dtype fallbacks

def _spec(**peaks):
    return HardwareSpec(id="x", name="x", kind="gpu", peak_flops_per_s=peaks, memory_bandwidth_bytes_per_s=1e12,
                        memory_capacity_bytes=None, sources={})


def test_peak_for_uses_own_figures_and_onnx_names():
    s = _spec(fp64=1.0, fp32=2.0, tf32=3.0, fp16=4.0, bf16=5.0, fp8=6.0, int8=7.0, int4=8.0)
    for name, want in [("float64", 1.0), ("double", 1.0), ("float32", 2.0), ("tf32", 3.0), ("float16", 4.0),
                       ("bfloat16", 5.0), ("float8e4m3fn", 6.0), ("float8e5m2", 6.0), ("int8", 7.0),
                       ("uint8", 7.0), ("int4", 8.0), ("uint4", 8.0), ("int64", 2.0), ("bool", 2.0)]:
        assert s.peak_for(name) == want, name


def test_peak_for_fallbacks():
    only32 = _spec(fp32=10.0)
    assert only32.peak_for("float64") == 5.0            # fp32 / 2
    assert only32.peak_for("bfloat16") == 10.0          # bf16 -> fp16 -> fp32
    assert only32.peak_for("int4") == 10.0
    assert only32.peak_for("tf32") == 10.0
    with16 = _spec(fp32=10.0, fp16=40.0)
    assert with16.resolve_peak("bfloat16") == (40.0, "fp16")
    assert with16.resolve_peak("uint8") == (40.0, "fp16")
    assert with16.resolve_peak("float8e4m3fn") == (40.0, "fp16")
    with8 = _spec(fp32=10.0, fp16=40.0, int8=80.0)
    assert with8.resolve_peak("int4") == (80.0, "int8")
    assert with8.ridge_point("int8") == 80.0 / 1e12
    assert set(FALLBACKS) == set(PEAK_KEYS) and all(chain[-1] in ("fp32", "fp32/2") for chain in FALLBACKS.values())


def test_peak_for_unknown_dtype():
    with pytest.raises(OptionError, match="string"):
        _spec(fp32=1.0).peak_for("string")


def test_spec_validation():
    with pytest.raises(OptionError, match="fp32"):
        _spec(fp16=1.0)
    with pytest.raises(OptionError, match="fp33"):
        _spec(fp32=1.0, fp33=2.0)
    with pytest.raises(OptionError):
        _spec(fp32=-1.0)
    with pytest.raises(OptionError, match="kind"):
        HardwareSpec(id="x", name="x", kind="tpu", peak_flops_per_s={"fp32": 1.0}, memory_bandwidth_bytes_per_s=1.0,
                     memory_capacity_bytes=None, sources={})


def test_spec_is_immutable_hashable_and_pickles():
    s = load_spec("t4")
    with pytest.raises(TypeError):
        s.peak_flops_per_s["fp32"] = 1.0  # type: ignore[index]
    assert hash(s) == hash(load_spec("t4"))
    assert pickle.loads(pickle.dumps(s)) == s


# ---------------------------------------------------------------------------------------------- files

@pytest.mark.parametrize("preset_id", list_presets())
def test_toml_round_trip(preset_id, tmp_path):
    spec = load_preset(preset_id)
    p = tmp_path / "spec.toml"
    p.write_text(to_toml(spec), encoding="utf-8")
    again = load_spec(str(p))
    assert again == spec
    assert again.to_dict() == spec.to_dict()


def test_toml_round_trip_of_awkward_values(tmp_path):
    spec = HardwareSpec(id="odd.one_2", name='quote " backslash \\ tab \t newline \n ü', kind="soc",
                        peak_flops_per_s={"fp32": 1.2345678901234567e13, "int8": 3e14, "fp64": 0.5},
                        memory_bandwidth_bytes_per_s=123456789.123, memory_capacity_bytes=12345,
                        sources={"fp32": "a\u0001b", "memory_bandwidth": "x", "memory_capacity": "y"},
                        notes="multi\nline", efficiency={"matmul": 0.75, "odd key": 0.5})
    p = tmp_path / "odd.toml"
    p.write_text(to_toml(spec, header="first\nsecond"), encoding="utf-8")
    assert load_spec(p) == spec
    assert spec.sources["int8"] == "not stated"  # filled in, so a spec always names its figures' sources


def test_user_spec_file(tmp_path):
    p = tmp_path / "mybox.toml"
    p.write_text('''
id = "mybox"
name = "My box"
kind = "cpu"
memory_bandwidth_bytes_per_s = 50e9
memory_capacity_gib = 64

[cpu]
cores = 8
clock_ghz = 3.0
simd_fp32_lanes = 8
fma_units = 2
source = "my laptop's data sheet"

[peak_flops_per_s]
int8 = 3e12

[sources]
int8 = "VNNI"

[efficiency]
matmul = 0.8
''', encoding="utf-8")
    spec = load_spec(str(p))
    cores, clock_hz, lanes, fma_units = 8, 3e9, 8, 2
    assert spec.peak_for("float32") == cores * clock_hz * lanes * fma_units * 2
    assert spec.memory_capacity_bytes == 64 * 2 ** 30
    assert spec.sources["fp32"].endswith("my laptop's data sheet")
    assert spec.sources["memory_bandwidth"] == f"not stated in {p}"
    assert spec.efficiency == {"matmul": 0.8}
    assert spec.ridge_point() == pytest.approx(cores * clock_hz * lanes * fma_units * 2 / 50e9)


@pytest.mark.parametrize("text,match", [
    ("id = [", "not valid TOML"),
    ('id = "a"\nname = "a"\nkind = "cpu"\nmemory_bandwidth_bytes_per_s = 1e9\n', "fp32 peak is required"),
    ('id = "a"\nname = "a"\nkind = "cpu"\n[peak_flops_per_s]\nfp32 = 1e9\n', "memory_bandwidth_bytes_per_s"),
    ('id = "a"\nname = "a"\nkind = "npu"\n', "kind"),
    ('id = "A B"\nname = "a"\nkind = "cpu"\n', "id"),
    ('id = "a"\nname = "a"\nkind = "cpu"\nbandwidth = 1\n', "unknown key"),
    ('id = "a"\nname = "a"\nkind = "cpu"\nmemory_bandwidth_bytes_per_s = 1e9\n[peak_flops_per_s]\nfp32 = -1\n',
     "positive"),
    ('id = "a"\nname = "a"\nkind = "cpu"\nmemory_bandwidth_bytes_per_s = 1e9\n[peak_flops_per_s]\nfp32 = 1e9\n'
     '[cpu]\ncores = 1\nclock_ghz = 1\nsimd_fp32_lanes = 1\nfma_units = 1\n', "computed from"),
    ('id = "a"\nname = "a"\nkind = "cpu"\nmemory_bandwidth_bytes_per_s = 1e9\n[cpu]\ncores = 1\n', r"\[cpu\] takes"),
    ('id = "a"\nname = "a"\nkind = "cpu"\nmemory_bandwidth_bytes_per_s = 1e9\n[peak_flops_per_s]\nfp32 = 1e9\n'
     '[sources]\nint8 = "x"\n', "does not give"),
])
def test_bad_spec_files_give_one_line_option_errors(tmp_path, text, match):
    p = tmp_path / "bad.toml"
    p.write_text(text, encoding="utf-8")
    with pytest.raises(OptionError, match=match) as info:
        load_spec(str(p))
    assert "\n" not in str(info.value) and "bad.toml" in str(info.value)


def test_missing_spec_file(tmp_path):
    with pytest.raises(OptionError, match="no such file"):
        load_spec(str(tmp_path / "nope.toml"))


# ---------------------------------------------------------------------------------------------- the command

def _parse(argv):
    p = argparse.ArgumentParser(prog="onnxperf")
    sub = p.add_subparsers(dest="command")
    hw.add_parser(sub)
    return p.parse_args(argv)


def _run(argv):
    args = _parse(argv)
    return args.run(args)


def test_hw_list_text(capsys):
    assert _run(["hw", "list"]) == 0
    out = capsys.readouterr().out
    for preset_id in list_presets():
        assert preset_id in out
    assert "35.69" in out and "936.0" in out and "38.1" in out


def test_hw_list_json(capsys):
    assert _run(["hw", "list", "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert [p["id"] for p in d["presets"]] == list_presets()


def test_hw_show_formats(capsys, tmp_path):
    assert _run(["hw", "show", "xeon-silver-4210x2"]) == 0
    out = capsys.readouterr().out
    assert "960 GFLOP/s" in out and "76.8 GB/s" in out and "ridge 12.5" in out
    assert _run(["hw", "show", "rtx3090", "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["peak_flops_per_s"]["fp32"] == 35.6864e12 and d["sources"]["memory_bandwidth"]
    out_file = tmp_path / "copy.toml"
    assert _run(["hw", "show", "rtx3090", "-o", str(out_file)]) == 0  # .toml -> toml format
    assert load_spec(str(out_file)) == load_spec("rtx3090")
    assert _run(["hw", "show", str(out_file)]) == 0
    assert "rtx3090" in capsys.readouterr().out


def test_hw_show_unknown_is_an_option_error():
    with pytest.raises(OptionError, match="presets: "):
        _run(["hw", "show", "nope"])


def test_every_figure_key_is_known():
    assert set(MEMORY_KEYS) == {"memory_bandwidth", "memory_capacity"}
    assert SOURCE_KEYS == PEAK_KEYS + MEMORY_KEYS + ("interconnect",)
