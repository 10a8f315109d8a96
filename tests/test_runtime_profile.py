"""Runtime profiles (issue 29): ``--hw ID:llama.cpp`` is the GPU spec under llama.cpp's kernels, whose
memory share is ``e_m = min(s, N_SM · b / β)`` (s: the share of the bandwidth its kernels stream at, b: the
bytes per second one SM of them streams, N_SM the preset's SMs, β its DRAM bandwidth), with the profile's
own error band; ``--hw ID:mlperf`` the spec under NVIDIA's MLPerf harness (its convolution share, outputs
held in the L2, a CNN band). Every output names the runtime through the spec's id."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from onnx import helper

import onnxperf
from onnxperf import cli
from onnxperf.analysis.compose import summarize
from onnxperf.base.errors import OptionError
from onnxperf.hardware import load_preset, load_spec
from onnxperf.hardware.runtimes import CNN_BAND, LLM_BAND, profiles, split_runtime
from onnxperf.insights.llm.section import LLMOptions
from onnxperf.predict.roofline import band_of, roofline

from .util import model, vi

ROOT = Path(__file__).resolve().parents[1]
LLAMA = str(ROOT / "models" / "corpus" / "llama_decode_legacy.onnx")


def test_an_hbm_gpu_is_held_by_the_per_sm_rate():
    """A100 80GB: 108 SMs, 2,039 GB/s; the profile's per-SM rate b sets its share below s."""
    prof = profiles()["llama.cpp"]
    sms, beta = 108, 2039e9
    spec = load_spec("a100-80gb:llama.cpp")
    expected = min(prof.memory_share, sms * prof.sm_bytes_per_s / beta)
    assert expected < prof.memory_share  # the per-SM side holds on this HBM part
    assert spec.efficiency["default.memory"] == pytest.approx(expected, rel=1e-12)
    assert spec.id == "a100-80gb:llama.cpp" and spec.name.endswith("under llama.cpp")
    assert "runtime profile" in spec.efficiency_sources["default.memory"]


def test_a_gddr_gpu_is_held_by_the_share():
    """RTX 4090: 128 SMs, 1,008 GB/s: N_SM · b is above s·β, so the share s holds."""
    prof = profiles()["llama.cpp"]
    assert 128 * prof.sm_bytes_per_s / 1008e9 > prof.memory_share
    assert load_spec("rtx4090:llama.cpp").efficiency["default.memory"] == pytest.approx(prof.memory_share)


def test_everything_else_is_the_presets():
    base, under = load_preset("h100-pcie"), load_spec("h100-pcie:llama.cpp")
    changed = {k for k in set(base.efficiency) | set(under.efficiency)
               if base.efficiency.get(k) != under.efficiency.get(k)}
    assert changed <= {"default.memory", "band.p10", "band.p90", "band.points", "band.llm.p10", "band.llm.p90",
                       "band.llm.points"}
    assert base.peak_flops_per_s == under.peak_flops_per_s and base.memory_levels == under.memory_levels


def test_the_band_is_the_profiles_and_the_cnn_band_is_dropped():
    prof = profiles()["llama.cpp"]
    spec = load_spec("a100-80gb:llama.cpp")
    assert band_of(spec) is None  # no published CNN / BERT row runs under llama.cpp
    b = band_of(spec, "llm")
    assert prof.band is not None and b is not None
    assert (b.p10, b.p90, b.points) == prof.band
    assert "llama.cpp" in b.source and "held-out" in b.source


def test_a_spec_file_takes_a_runtime_too(tmp_path):
    text = subprocess.run([sys.executable, "-m", "onnxperf", "hw", "show", "l40s", "--format", "toml"],
                          capture_output=True, text=True, check=True).stdout
    p = tmp_path / "mine.toml"
    p.write_text(text)
    assert load_spec(f"{p}:llama.cpp").efficiency["default.memory"] == \
        pytest.approx(load_spec("l40s:llama.cpp").efficiency["default.memory"])


@pytest.mark.parametrize("name, words", [
    ("xeon-8480plus:llama.cpp", "describes GPU kernels"),
    ("a100-80gb:llama.cpp:plain", ":plain removes"),
    ("a100-80gb:nosuch", "runtime profiles, appended as ID:RUNTIME: llama.cpp"),
    ("mi300x:mlperf", "runs on NVIDIA GPUs only"),
])
def test_what_a_profile_cannot_apply_to_is_refused(name, words):
    with pytest.raises(OptionError, match=words.replace(".", r"\.").replace("(", r"\(")):
        load_spec(name)


def test_a_name_without_a_profile_is_left_whole():
    assert split_runtime("a100-80gb") == ("a100-80gb", None)
    assert split_runtime("a100-80gb:plain") == ("a100-80gb:plain", None)
    assert split_runtime("a100-80gb:LLAMA.CPP")[1] is profiles()["llama.cpp"]


def test_every_memory_time_scales_by_the_share():
    """The kernel model charges memory at e_m·β: each node's memory time under the profile is the shipped one
    times e_m(preset) / e_m(profile), its arithmetic unchanged."""
    llm = LLMOptions(full=True, context=256, prompt=None, kv_runtime="in-place")
    base = summarize(LLAMA, hw="a100-80gb", llm=llm)
    under = summarize(LLAMA, hw="a100-80gb:llama.cpp", llm=llm)
    k = load_preset("a100-80gb").efficiency["default.memory"] / load_spec("a100-80gb:llama.cpp").efficiency["default.memory"]
    pairs = [(a, b) for a, b in zip(base.roofline.nodes, under.roofline.nodes) if a.memory_s]
    assert pairs
    for a, b in pairs:
        assert b.memory_s == pytest.approx(a.memory_s * k, rel=1e-9)
        assert b.compute_s == pytest.approx(a.compute_s, rel=1e-12)
    assert under.llm.figures.decode.latency_s > base.llm.figures.decode.latency_s


def test_the_command_line_names_the_runtime(capsys):
    rc = cli.main(["summary", LLAMA, "--llm", "--context", "256", "--kv-runtime", "in-place",
                   "--hw", "a100-80gb:llama.cpp", "--format", "json"])
    assert rc == 0
    d = json.loads(capsys.readouterr().out)
    assert d["roofline"]["hardware"] == "a100-80gb:llama.cpp"
    rc = cli.main(["summary", LLAMA, "--llm", "--context", "256", "--hw", "a100-80gb:llama.cpp"])
    out = capsys.readouterr().out
    assert rc == 0 and "under llama.cpp [a100-80gb:llama.cpp]" in out
    prof = profiles()["llama.cpp"]
    assert f"on {prof.band[2]} published points" in out  # the decode figure carries the profile's band


def test_a_cpu_under_a_gpu_runtime_exits_2(capsys):
    rc = cli.main(["summary", LLAMA, "--hw", "epyc-9654:llama.cpp"])
    err = capsys.readouterr().err
    assert rc == 2 and "describes GPU kernels" in err and "Traceback" not in err


def test_the_mlperf_profile_sets_its_figures_and_carries_a_cnn_band():
    """``l4:mlperf``: the profile's ``conv.compute`` and ``gpu.l2_writes`` as they are, its CNN band in place of
    the class's, no decoder band (no decoder row runs under the harness), every other figure the preset's."""
    prof = profiles()["mlperf"]
    assert set(prof.sets) == {"conv.compute", "gpu.l2_writes"} and prof.memory_share is None
    base, under = load_preset("l4"), load_spec("l4:mlperf")
    assert under.id == "l4:mlperf" and under.name.endswith("under NVIDIA's MLPerf harness")
    for k, v in prof.sets.items():
        assert under.efficiency[k] == v and "MLPerf harness runtime profile" in under.efficiency_sources[k]
    changed = {k for k in set(base.efficiency) | set(under.efficiency)
               if base.efficiency.get(k) != under.efficiency.get(k)}
    assert changed <= set(prof.sets) | set(CNN_BAND) | set(LLM_BAND)
    b = band_of(under)
    assert prof.band is not None and (b.p10, b.p90, b.points) == prof.band and "MLPerf" in b.source
    assert band_of(under, "llm") is None
    assert load_spec("jetson-orin:mlperf").efficiency["conv.compute"] == prof.sets["conv.compute"]  # an SoC's GPU


def test_under_the_harness_an_output_that_fits_the_l2_is_charged_there():
    """A chain of Relus on 4 MiB tensors on an L4 (48 MiB L2): as shipped every output is written to DRAM;
    under ``:mlperf`` (``gpu.l2_writes`` = 1) each lands in the L2, and no byte reaches DRAM (the graph
    input, last touched 16 MiB of tensors ago in the previous inference, is read from the L2 as before)."""
    n, elems = 4, 1 << 20
    names = ["x"] + [f"t{i}" for i in range(n)]
    m = model([helper.make_node("Relu", [names[i]], [names[i + 1]]) for i in range(n)],
              [vi("x", [elems])], [vi(names[-1], None)])
    a = onnxperf.analyze(m)
    shipped = dict(roofline(a, load_preset("l4")).bytes_by_level)
    held = dict(roofline(a, load_spec("l4:mlperf")).bytes_by_level)
    s = elems * 4
    assert shipped["DRAM"] == pytest.approx(n * s)  # every write at DRAM; every read from the L2
    assert held["DRAM"] == pytest.approx(0.0) and held["L2"] == pytest.approx(2 * n * s)
