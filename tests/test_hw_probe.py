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


def test_kernels_do_the_work_they_are_credited_with():
    """The figures divide a work count by a time: the kernels must do that work. The FMA
    kernel's result equals the same recurrence computed by numpy (so LLVM did not fold the
    chains away), and copy and triad write what STREAM defines."""
    import numpy as np

    from onnxperf.hardware.probe import FMA_CHAINS, FMA_STEPS, _fma_kernel, _stream_kernels

    rng = np.random.default_rng(0)
    buf = rng.random((2, 16), dtype=np.float32)
    a, b, inv = np.float32(0.5), np.float32(0.25), np.float32(1.0 / FMA_CHAINS)
    want = buf.astype(np.float64)
    for _ in range(3):  # reps
        xs = [want]
        for c in range(1, FMA_CHAINS):
            xs.append(xs[-1] + b)
        for _ in range(FMA_STEPS):
            xs = [x * a + b for x in xs]
        want = sum(xs) * inv
    _fma_kernel()(buf, 3, a, b, inv)
    np.testing.assert_allclose(buf, want, rtol=1e-5)
    fill, copy, triad = _stream_kernels()
    xa, xb, xc = np.empty(1000), np.empty(1000), np.empty(1000)
    fill(xa, xb, xc)
    assert (xa == 1).all() and (xb == 2).all() and (xc == 0).all()
    xa[:] = rng.random(1000)
    copy(xa, xc)
    np.testing.assert_array_equal(xc, xa)
    triad(xa, xb, xc, 3.0)
    np.testing.assert_allclose(xa, xb + 3.0 * xc)
