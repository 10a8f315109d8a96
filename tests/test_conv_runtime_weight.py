"""A float Conv whose weight is computed at run time (issue 30, item 4: ResNet-18 QDQ -25%).

onnxruntime does not fold a DequantizeLinear, so a QDQ model's conv that stays float has a weight that is
not a constant when the NCHWc transformer looks: it runs in NCHW (FusedConv) at ~2/3 of the NCHWc rate.
Such a conv looks up ``op.Conv.nchw.*`` (onnxperf.predict.roofline.RUNTIME_WEIGHT_CONV), which the
calibration suite's ``conv3x3_64_dq_weight`` fits."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxperf
from onnxperf.hardware import load_spec
from onnxperf.predict.roofline import DYNAMIC_INT8_MATMUL, RUNTIME_WEIGHT_CONV, op_keys, roofline
from onnxperf.products.calibration.suite import suite

F = TensorProto.FLOAT


def _convs(c=8, hw=10, k=3):
    """Three convs on one input: weight an initializer, weight from DequantizeLinear, and a depthwise
    conv whose weight comes from DequantizeLinear."""
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.standard_normal((c, c, k, k)).astype(np.float32), "w_init"),
             numpy_helper.from_array(rng.integers(-127, 128, (c, c, k, k)).astype(np.int8), "wq"),
             numpy_helper.from_array(rng.integers(-127, 128, (c, 1, k, k)).astype(np.int8), "wq_dw"),
             numpy_helper.from_array(np.array(0.01, np.float32), "s"), numpy_helper.from_array(np.array(0, np.int8), "z")]
    nodes = [helper.make_node("DequantizeLinear", ["wq", "s", "z"], ["w_dq"]),
             helper.make_node("DequantizeLinear", ["wq_dw", "s", "z"], ["w_dw"]),
             helper.make_node("Conv", ["x", "w_init"], ["y0"], pads=[1] * 4, name="init"),
             helper.make_node("Conv", ["x", "w_dq"], ["y1"], pads=[1] * 4, name="dq"),
             helper.make_node("Conv", ["x", "w_dw"], ["y2"], pads=[1] * 4, group=c, name="dw")]
    g = helper.make_graph(nodes, "convs", [helper.make_tensor_value_info("x", F, [1, c, hw, hw])],
                          [helper.make_tensor_value_info(f"y{i}", F, [1, c, hw, hw]) for i in range(3)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def test_a_dequantized_weight_sends_the_conv_to_its_own_key():
    a = onnxperf.analyze(_convs())
    keys = {n.name: op_keys(a).get(n.key) for n in a.main_nodes if n.op_type == "Conv"}
    assert keys == {"init": None, "dq": RUNTIME_WEIGHT_CONV, "dw": None}


def test_its_arithmetic_runs_at_the_fitted_nchw_efficiency():
    """c = W / (e · π) with e = op.Conv.nchw.compute for that conv, conv.compute for the other."""
    c, hw, k = 8, 10, 3
    a = onnxperf.analyze(_convs(c, hw, k))
    spec = dataclasses.replace(load_spec("xeon-silver-4210x2"), efficiency={
        "conv.compute": 1.0, "op.Conv.nchw.compute": 0.5, "conv.memory": 1.0}, efficiency_sources={})
    rows = {n.name: r for n, r in zip(a.main_nodes, roofline(a, spec).nodes)}
    flops = 2 * c * c * k * k * hw * hw  # MACs x 2 (no bias)
    peak = spec.peak_for("float32")
    assert rows["init"].compute_s == pytest.approx(flops / peak)
    assert rows["dq"].compute_s == pytest.approx(flops / (0.5 * peak))


def test_the_suite_measures_it():
    (case,) = [c for c in suite(1 / 8) if c.family == "op." + RUNTIME_WEIGHT_CONV]
    ops = [n.op_type for n in case.model.graph.node]
    assert ops == ["DequantizeLinear", "Conv"] * 4


def _qlinear_matmuls():
    """QLinearMatMul of an input by a weight, and of two inputs (a quantized attention's scores)."""
    u8 = TensorProto.UINT8
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(np.array(0.02, np.float32), "s"), numpy_helper.from_array(np.array(128, np.uint8), "z"),
             numpy_helper.from_array(rng.integers(0, 255, (4, 64, 32)).astype(np.uint8), "w")]
    nodes = [helper.make_node("QLinearMatMul", ["a", "s", "z", "w", "s", "z", "s", "z"], ["y0"], name="weight"),
             helper.make_node("QLinearMatMul", ["a", "s", "z", "b", "s", "z", "s", "z"], ["y1"], name="dynamic")]
    g = helper.make_graph(nodes, "qmm", [helper.make_tensor_value_info("a", u8, [4, 16, 64]),
                                        helper.make_tensor_value_info("b", u8, [4, 64, 32])],
                          [helper.make_tensor_value_info(f"y{i}", u8, [4, 16, 32]) for i in range(2)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def test_an_int8_matmul_of_two_computed_tensors_takes_its_own_key():
    """Issue 30, item 4 (QOperator ViT-B/16 -28%): its attention QLinearMatMuls ran at 120-140 Gop/s, its
    weight products at 620-710; c = W_i / (e · π_int8) + W_f / (e · π_fp32) (its requantization) with
    e = op.MatMul.int8.dynamic.compute."""
    a = onnxperf.analyze(_qlinear_matmuls())
    keys = {n.name: op_keys(a).get(n.key) for n in a.main_nodes}
    assert keys == {"weight": None, "dynamic": DYNAMIC_INT8_MATMUL}
    spec = dataclasses.replace(load_spec("xeon-silver-4210x2"), efficiency={
        "matmul.int8.compute": 0.8, "op.MatMul.int8.dynamic.compute": 0.2}, efficiency_sources={})
    rows = {n.name: (n, r) for n, r in zip(a.main_nodes, roofline(a, spec).nodes)}
    peak, fpeak = spec.peak_for("int8"), spec.peak_for("float32")
    for name, e in (("weight", 0.8), ("dynamic", 0.2)):
        n, r = rows[name]
        assert n.int_ops and r.compute_s == pytest.approx(n.int_ops / (e * peak) + n.flops / (e * fpeak))
    (case,) = [c for c in suite(1 / 8) if c.family == "op." + DYNAMIC_INT8_MATMUL]
    assert {n.op_type for n in case.model.graph.node} == {"QLinearMatMul"}
