"""``hw probe`` in short mode: positive finite figures and a spec that round-trips (no wall-clock assertions)."""

import argparse
import json
import math

import pytest

from onnxperf.commands import hw
from onnxperf.hardware import load_spec, to_toml
from onnxperf.hardware.probe import detect_cpu, run_probe


@pytest.fixture(scope="module")
def result():
    return run_probe(short=True)


def test_short_probe_figures_are_positive_and_finite(result):
    assert [m.key for m in result.measurements] == ["fma", "sgemm", "copy", "triad"]
    for m in result.measurements:
        assert m.work > 0 and len(m.seconds) == 2
        assert math.isfinite(m.best) and m.best > 0 and math.isfinite(m.median) and m.median > 0
        assert m.best >= m.median
    spec = result.spec
    assert spec.kind == "cpu" and spec.id.startswith("probed-")
    assert spec.peak_for("float32") > 0 and spec.memory_bandwidth_bytes_per_s > 0
    assert spec.ridge_point() > 0
    assert spec.peak_for("float32") == pytest.approx(max(result.get("fma").best, result.get("sgemm").best), rel=1e-3)
    assert spec.memory_bandwidth_bytes_per_s == pytest.approx(result.get("triad").best, rel=1e-3)
    assert "measured by onnxperf hw probe" in spec.sources["fp32"]
    assert "short mode" in spec.sources["memory_bandwidth"]


def test_short_probe_spec_round_trips(result, tmp_path):
    p = tmp_path / "probed.toml"
    p.write_text(to_toml(result.spec), encoding="utf-8")
    assert load_spec(str(p)) == result.spec
    json.dumps(result.to_dict())  # serializable


def test_detect_cpu_is_consistent():
    cpu = detect_cpu()
    assert cpu.logical_cpus >= cpu.physical_cores >= 1 and cpu.sockets >= 1
    theory = cpu.theoretical_fp32_flops_per_s
    if theory is not None:
        assert theory == pytest.approx(cpu.physical_cores * cpu.clock_ghz * 1e9 * cpu.simd_fp32_lanes
                                       * cpu.fma_units * 2)
    assert cpu.theoretical_text()


def test_hw_probe_command_writes_a_spec_file(tmp_path, capsys):
    p = argparse.ArgumentParser(prog="onnxperf")
    hw.add_parser(p.add_subparsers(dest="command"))
    out = tmp_path / "spec.toml"
    args = p.parse_args(["hw", "probe", "--short", "--repeats", "1", "-o", str(out)])
    assert args.run(args) == 0
    table = capsys.readouterr().out
    assert "theoretical" in table and "triad" in table
    spec = load_spec(str(out))
    assert spec.kind == "cpu" and spec.peak_for("float32") > 0
