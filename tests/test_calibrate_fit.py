"""The calibration suite is valid ONNX and costed by onnxperf; the fit recovers known efficiencies."""

import onnx
import pytest

import onnxperf
from onnxperf.calibration.fit import Sample, fit_efficiency
from onnxperf.calibration.suite import suite


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


def test_fit_finds_the_overlap_of_compute_and_memory_per_family():
    """A family whose measured time is compute + memory gets overlap 1; one whose time is the
    greater of the two keeps the pure roofline (no overlap key); efficiencies are recovered."""
    o = 1e-6
    samples = [Sample("add_tiny", "elementwise", 1e-9, 1e-9, o)]
    # conv: time = c/0.8 + m (the weights' traffic is not hidden)
    samples += [Sample(f"conv{i}", "conv", c, m, c / 0.8 + m + o)
                for i, (c, m) in enumerate([(1e-3, 1e-4), (1e-3, 4e-4), (2e-3, 2e-4), (5e-4, 3e-4)])]
    # matmul: time = max(c/0.9, m)
    samples += [Sample(f"mm{i}", "matmul", c, m, max(c / 0.9, m) + o)
                for i, (c, m) in enumerate([(1e-3, 1e-4), (1e-3, 6e-4), (2e-3, 1e-3)])]
    eff = fit_efficiency(samples)
    assert eff["conv.overlap"] == 1.0 and eff["conv.compute"] == pytest.approx(0.8)
    assert "matmul.overlap" not in eff and eff["matmul.compute"] == pytest.approx(0.9)
    from onnxperf.calibration.fit import predict
    for s in samples[1:5]:
        assert predict(s, eff, 1.0, o) == pytest.approx(s.measured_s)


def test_suite_cases_hold_independent_copies():
    """Each suite model runs its op several times with its own inputs and weights, so the
    runtime's common-subexpression elimination cannot merge the copies."""
    for c in suite(scale=1 / 16):
        nodes = c.model.graph.node
        assert len(nodes) == c.copies >= 2, c.name
        ins = [tuple(n.input) for n in nodes]
        assert len(set(ins)) == len(ins) and not set(ins[0]) & set(ins[1]), c.name
        assert len({n.op_type for n in nodes}) == 1


def test_a_case_faster_than_the_roof_is_capped_at_the_roof():
    """A one-op suite case served from the cache can beat the DRAM roof (a time below Q/β); the
    fitted efficiency stays at 1: calibration only ever lowers the roof."""
    o = 1e-6
    samples = [Sample("add_tiny", "elementwise", 1e-9, 1e-9, o)]
    # pool reads from cache at 3x the DRAM bandwidth; movement attains 60% of it
    samples += [Sample(f"pool{i}", "pool", 0.0, m, m / 3.0 + o) for i, m in enumerate([1e-4, 2e-4])]
    samples += [Sample(f"mv{i}", "movement", 0.0, m, m / 0.6 + o) for i, m in enumerate([1e-4, 3e-4])]
    eff = fit_efficiency(samples)
    assert eff["pool.memory"] == 1.0
    assert eff["movement.memory"] == pytest.approx(0.6)
    assert eff["default.memory"] == 1.0  # the median of 3, 3, 0.6, 0.6 capped
