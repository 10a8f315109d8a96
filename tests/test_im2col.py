"""The im2col runs of onnxruntime's 8-bit convolution (issue 30, item 4: the QOperator models' stems):
runs = N · groups · H_out · W_out · k_H · k_W, none for a pointwise or depthwise convolution; the roofline
adds runs × ``conv.int8.run_s`` to each QLinearConv's time; calibration fits the cost of one run apart
from the convolutions' share of the peak."""

from __future__ import annotations

import dataclasses

import pytest

import onnxperf
from onnxperf.hardware import load_preset
from onnxperf.predict.im2col import RUN_KEY, im2col_runs
from onnxperf.predict.roofline import roofline
from onnxperf.products.calibration.fit import Sample, fit_efficiency, fit_runs
from onnxperf.products.calibration.suite import _qconv


def _node(c_in, c_out, hw, k, group=1, stride=1):
    case = _qconv("q", c_in, c_out, hw, k, group=group, stride=stride)
    a = onnxperf.analyze(case.model)
    return a, [n for n in a.main_nodes if n.op_type == "QLinearConv"]


@pytest.mark.parametrize("c_in, c_out, hw, k, group, stride, h_out", [
    (3, 64, 32, 7, 1, 2, 16),    # a stem: 16 x 16 outputs, 7 x 7 positions
    (8, 16, 20, 3, 1, 1, 20),    # 3x3, padded: the output is the input's size
    (8, 16, 20, 3, 2, 1, 20),    # two groups: each gathers its own runs
])
def test_runs_are_output_pixels_times_kernel_positions_times_groups(c_in, c_out, hw, k, group, stride, h_out):
    _, nodes = _node(c_in, c_out, hw, k, group=group, stride=stride)
    n_batch = 1
    assert nodes and all(im2col_runs(n) == n_batch * group * h_out * h_out * k * k for n in nodes)


def test_no_runs_for_a_pointwise_or_depthwise_convolution():
    _, pointwise = _node(16, 32, 12, 1)
    _, depthwise = _node(16, 16, 12, 3, group=16)
    _, strided = _node(16, 32, 12, 1, stride=2)  # a 1x1 kernel at stride 2 gathers: 6 x 6 runs
    assert all(im2col_runs(n) == 0 for n in pointwise + depthwise)
    assert all(im2col_runs(n) == 6 * 6 for n in strided)


def test_the_roofline_adds_runs_times_the_cost_of_one():
    """A spec with ``conv.int8.run_s`` = r: each QLinearConv's time and arithmetic grow by R·r, nothing else."""
    a, nodes = _node(3, 16, 24, 7, stride=2)
    base = load_preset("xeon-8480plus")
    r = 1e-9
    with_runs = dataclasses.replace(base, efficiency={**base.efficiency, RUN_KEY: r})
    before = {x.key: x for x in roofline(a, base).nodes}
    after = {x.key: x for x in roofline(a, with_runs).nodes}
    keys = {n.key for n in nodes}
    for k, x in after.items():
        if k in keys:
            runs = 12 * 12 * 49
            assert x.time_s == pytest.approx(before[k].time_s + runs * r, rel=1e-9)
            assert x.compute_s == pytest.approx(before[k].compute_s + runs * r, rel=1e-9)
        else:
            assert x.time_s == before[k].time_s


def test_the_fit_separates_the_cost_of_a_run_from_the_share_of_the_peak():
    """Three 8-bit convolutions timed as t = c / e + R·r + o (e = 0.9, r = 1 ns, o = 3 µs): a pointwise one
    (R = 0), a 3x3 one (28,224 runs), a stem (614,656): the fit gives r and e back."""
    o, e, r = 3e-6, 0.9, 1e-9
    samples = [Sample("add_tiny", "elementwise", 1e-9, 1e-9, o), Sample("relu_tiny", "activation", 1e-9, 1e-9, o)]
    for name, c, runs in (("q1x1", 120e-6, 0.0), ("q3x3", 270e-6, 28224.0), ("qstem", 275e-6, 614656.0)):
        samples.append(Sample(name, "conv.int8", c, c / 20, c / e + runs * r + o, im2col=runs))
    eff = fit_efficiency(samples)
    assert eff["conv.int8.run_s"] == pytest.approx(r, rel=1e-6)
    assert eff["conv.int8.compute"] == pytest.approx(e, rel=1e-6)


def test_runs_the_samples_cannot_tell_apart_are_not_fitted():
    """Every sample with the same runs per unit of arithmetic (or none): no cost per run."""
    s = [Sample(f"q{i}", "conv.int8", c, c / 20, c / 0.8, im2col=c * 1e8) for i, c in enumerate((1e-4, 2e-4))]
    assert fit_runs(s, 0.0) == 0.0
    assert "conv.int8.run_s" not in fit_efficiency(s)


def test_a_qdq_conv_that_runs_as_a_qlinearconv_gathers_the_same_runs():
    """The QDQ ResNet-18 (corpus): the 9 convs onnxruntime runs as QLinearConv (``roofline.fusions``) pay
    their runs; the float Convs it keeps between Q/DQ nodes do not (they run as float convs)."""
    from pathlib import Path

    from onnxperf.predict.roofline import fusions

    a = onnxperf.analyze(str(Path(__file__).resolve().parents[1] / "models" / "corpus" / "resnet18_qdq.onnx"),
                         dims={"batch": 1})
    base = load_preset("xeon-8480plus")
    eff = {**base.efficiency, "fusion.epilogue": 1.0}
    plain = dataclasses.replace(base, efficiency=eff)
    r = 1e-9
    with_runs = dataclasses.replace(base, efficiency={**eff, RUN_KEY: r})
    qlinear = {k for k, v in fusions(a).runs_as.items() if v[0] == "QLinearConv"}
    assert len(qlinear) == 9
    before = {x.key: x for x in roofline(a, plain).nodes}
    after = {x.key: x for x in roofline(a, with_runs).nodes}
    stem = min((n for n in a.main_nodes if n.key in qlinear), key=lambda n: n.inputs[1].shape[1])
    assert im2col_runs(stem, True) == 112 * 112 * 7 * 7  # the 7x7 stem over 3 channels, 112 x 112 outputs
    for n in a.main_nodes:
        if after[n.key].time_s is None:
            continue
        runs = im2col_runs(n, n.key in qlinear)
        assert after[n.key].time_s == pytest.approx(before[n.key].time_s + runs * r, rel=1e-9), n.op_type
        if n.op_type == "Conv" and n.key not in qlinear:
            assert runs == 0
