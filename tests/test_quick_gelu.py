"""SiLU written out, x · Sigmoid(x) (issue 30, item 4: EfficientNet-B0 predicted 20-27% slow): onnxruntime's
QuickGeluFusion runs it as one QuickGelu kernel that reads x once and writes the product, at a Sigmoid's cost
per element; the prediction charged a Sigmoid and a Mul, each through memory."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxperf
from onnxperf.hardware import load_spec
from onnxperf.predict.roofline import fusions, roofline

F = TensorProto.FLOAT
C, H, W = 8, 6, 5


def _silu(alpha=None, extra_reader=False):
    nodes, inits = [], []
    src = "x"
    if alpha is not None:
        inits.append(numpy_helper.from_array(np.array(alpha, np.float32), "alpha"))
        nodes.append(helper.make_node("Mul", ["x", "alpha"], ["ax"], name="scale"))
        src = "ax"
    nodes += [helper.make_node("Sigmoid", [src], ["s"], name="sig"), helper.make_node("Mul", ["x", "s"], ["y"], name="mul")]
    outs = [helper.make_tensor_value_info("y", F, [1, C, H, W])]
    if extra_reader:
        nodes.append(helper.make_node("Relu", ["s"], ["r"], name="other"))
        outs.append(helper.make_tensor_value_info("r", F, [1, C, H, W]))
    m = helper.make_model(helper.make_graph(nodes, "silu", [helper.make_tensor_value_info("x", F, [1, C, H, W])],
                                            outs, inits), opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


@pytest.mark.parametrize("alpha", [None, 1.702])
def test_silu_runs_as_one_quick_gelu_kernel(alpha):
    a = onnxperf.analyze(_silu(alpha))
    by = {n.name: n for n in a.main_nodes}
    fu = fusions(a)
    op, nbytes, ops, idt = fu.runs_as[by["mul"].key]
    members = ["sig"] + (["scale"] if alpha is not None else [])
    assert op == "QuickGelu" and idt is None
    assert nbytes == 2 * 4 * C * H * W  # x read once, y written
    assert ops == sum(by[k].flops for k in ["mul", *members])
    assert {by[k].key for k in members} <= fu.inside


def test_a_sigmoid_read_elsewhere_is_not_fused():
    a = onnxperf.analyze(_silu(extra_reader=True))
    assert not any(v[0] == "QuickGelu" for v in fusions(a).runs_as.values())


def test_the_kernel_is_timed_at_the_sigmoid_efficiency():
    """c = W / (e · π) with e = op.Sigmoid.compute; the Sigmoid inside takes no time."""
    a = onnxperf.analyze(_silu())
    spec = dataclasses.replace(load_spec("xeon-silver-4210x2"), efficiency={
        "fusion.epilogue": 1.0, "op.Sigmoid.compute": 0.05, "elementwise.memory": 1.0}, efficiency_sources={})
    by = {n.name: n for n in a.main_nodes}
    rows = {r.key: r for r in roofline(a, spec).nodes}
    ops = by["mul"].flops + by["sig"].flops
    assert rows[by["mul"].key].compute_s == pytest.approx(ops / (0.05 * spec.peak_for("float32")))
    assert rows[by["sig"].key].time_s == 0.0
