"""RMSNorm written out runs as one SimplifiedLayerNormalization kernel (issue 30, item 4: T5 predicted
+13-16%; onnxruntime's SimplifiedLayerNormFusion, checked on 1.32 against its optimized graphs: T5's 22
norms and Llama's 9 fuse, the Reciprocal form of the dynamo exports does not)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxperf
from onnxperf.hardware import load_spec
from onnxperf.predict.roofline import fusions, roofline

F = TensorProto.FLOAT
T, D = 16, 32


def _rms(form: str):
    """form: "div" (Div(x, s)), "recip_div" (Mul(x, Div(1, s)), with Casts as Llama's), "reciprocal"."""
    c = lambda name, v: numpy_helper.from_array(np.array(v, np.float32), name)  # noqa: E731
    inits = [c("two", 2.0), c("eps", 1e-6), c("one", 1.0),
             numpy_helper.from_array(np.ones(D, np.float32), "gamma")]
    nodes = [helper.make_node("Cast", ["x"], ["xc"], to=F, name="cast_in"),
             helper.make_node("Pow", ["xc", "two"], ["sq"], name="pow"),
             helper.make_node("ReduceMean", ["sq"], ["v"], axes=[-1], keepdims=1, name="mean"),
             helper.make_node("Add", ["v", "eps"], ["ve"], name="add_eps"),
             helper.make_node("Sqrt", ["ve"], ["s"], name="sqrt")]
    if form == "div":
        nodes.append(helper.make_node("Div", ["xc", "s"], ["n"], name="div"))
    elif form == "recip_div":
        nodes += [helper.make_node("Div", ["one", "s"], ["inv"], name="div"),
                  helper.make_node("Mul", ["xc", "inv"], ["n0"], name="scale"),
                  helper.make_node("Cast", ["n0"], ["n"], to=F, name="cast_out")]
    else:
        nodes += [helper.make_node("Reciprocal", ["s"], ["inv"], name="recip"),
                  helper.make_node("Mul", ["xc", "inv"], ["n"], name="scale")]
    nodes.append(helper.make_node("Mul", ["gamma", "n"], ["y"], name="gamma_mul"))
    g = helper.make_graph(nodes, "rms", [helper.make_tensor_value_info("x", F, [T, D])],
                          [helper.make_tensor_value_info("y", F, [T, D])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


@pytest.mark.parametrize("form,inside", [
    ("div", {"cast_in", "pow", "mean", "add_eps", "sqrt", "div"}),
    ("recip_div", {"cast_in", "pow", "mean", "add_eps", "sqrt", "div", "scale", "cast_out"})])
def test_rms_norm_runs_as_one_kernel(form, inside):
    a = onnxperf.analyze(_rms(form))
    by = {n.name: n for n in a.main_nodes}
    fu = fusions(a)
    op, nbytes, ops, idt = fu.runs_as[by["gamma_mul"].key]
    assert op == "SimplifiedLayerNormalization" and idt is None
    assert nbytes == 4 * T * D + 4 * D + 4 * T * D  # x read once, γ, y written
    assert ops == sum(n.flops for n in a.main_nodes)
    assert {n.name for n in a.main_nodes if n.key in fu.inside} == inside


def test_the_reciprocal_form_is_not_fused():
    assert not any(v[0] == "SimplifiedLayerNormalization" for v in fusions(onnxperf.analyze(_rms("reciprocal"))).runs_as.values())


def test_the_kernel_is_timed_as_a_normalization():
    """m = Q / (e · β) with e = norm.memory (the host is an elementwise Mul; the kernel a normalization)."""
    a = onnxperf.analyze(_rms("div"))
    spec = dataclasses.replace(load_spec("xeon-silver-4210x2"), efficiency={
        "fusion.epilogue": 1.0, "norm.memory": 0.25, "elementwise.memory": 1.0}, efficiency_sources={})
    by = {n.name: n for n in a.main_nodes}
    row = {r.key: r for r in roofline(a, spec).nodes}[by["gamma_mul"].key]
    assert row.memory_s == pytest.approx((8 * T * D + 4 * D) / (0.25 * spec.memory_bandwidth_bytes_per_s))
