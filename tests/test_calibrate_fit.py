"""The calibration suite is valid ONNX and costed by onnxperf; the fit recovers known efficiencies."""

import onnx
import pytest

import onnxperf
from onnxperf.calibrate import Sample, fit_efficiency, suite


def test_suite_models_are_valid_and_fully_costed():
    cases = suite(scale=1 / 16)
    assert len({c.name for c in cases}) == len(cases)
    families = {c.family for c in cases}
    assert {"conv", "matmul", "elementwise", "activation", "reduce", "norm", "movement", "pool"} <= families
    for c in cases:
        onnx.checker.check_model(c.model)
        a = onnxperf.analyze(c.model)
        assert a.coverage.complete, c.name
        assert a.totals.bytes_read > 0


def test_fit_recovers_synthetic_efficiencies():
    o = 2e-6
    samples = [Sample("add_tiny", "elementwise", 1e-9, 1e-9, o), Sample("relu_tiny", "activation", 1e-9, 1e-9, o)]
    # conv attains 40% of peak when compute-bound, matmul 80%; movement 50% of bandwidth
    samples += [Sample(f"conv{i}", "conv", c, c / 10, c / 0.4 + o) for i, c in enumerate([1e-3, 2e-3, 5e-3])]
    samples += [Sample(f"mm{i}", "matmul", c, c / 10, c / 0.8 + o) for i, c in enumerate([1e-3, 4e-3])]
    samples += [Sample(f"mv{i}", "movement", 0.0, m, m / 0.5 + o) for i, m in enumerate([1e-4, 3e-4])]
    eff = fit_efficiency(samples)
    assert eff["overhead_s"] == pytest.approx(o)
    assert eff["conv.compute"] == pytest.approx(0.4)
    assert eff["matmul.compute"] == pytest.approx(0.8)
    assert eff["movement.memory"] == pytest.approx(0.5)
    assert "conv.memory" not in eff and eff["default.memory"] == pytest.approx(0.5)
