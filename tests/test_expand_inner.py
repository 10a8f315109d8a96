"""An Expand that broadcasts its innermost dim (issue 30, item 4: Swin V2-T's Expand nodes, 11 ms measured
where 1.5 were predicted): onnxruntime copies it one input element at a time, so it looks up
``op.Expand.inner.*`` (onnxperf.predict.roofline.INNER_EXPAND), fitted by the suite's ``expand_inner_x32``."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxperf
from onnxperf.hardware import load_spec
from onnxperf.predict.roofline import INNER_EXPAND, op_keys, roofline
from onnxperf.products.calibration.suite import suite

F = TensorProto.FLOAT


def _expands():
    """[8, 1] -> [8, 32] (innermost broadcast), [1, 32] -> [8, 32] (an outer one), [8, 32] -> [2, 8, 32]."""
    nodes, inits, outs = [], [], []
    for i, (src, dst) in enumerate([((8, 1), (8, 32)), ((1, 32), (8, 32)), ((8, 32), (2, 8, 32))]):
        inits.append(numpy_helper.from_array(np.array(dst, np.int64), f"s{i}"))
        nodes.append(helper.make_node("Expand", [f"x{i}", f"s{i}"], [f"y{i}"], name=f"e{i}"))
        outs.append(helper.make_tensor_value_info(f"y{i}", F, list(dst)))
    ins = [helper.make_tensor_value_info(f"x{i}", F, list(src))
           for i, (src, _) in enumerate([((8, 1), 0), ((1, 32), 0), ((8, 32), 0)])]
    m = helper.make_model(helper.make_graph(nodes, "expands", ins, outs, inits),
                          opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def test_only_an_innermost_broadcast_takes_the_key():
    a = onnxperf.analyze(_expands())
    keys = {n.name: op_keys(a).get(n.key) for n in a.main_nodes}
    assert keys == {"e0": INNER_EXPAND, "e1": None, "e2": None}


def test_it_moves_its_bytes_at_the_fitted_efficiency():
    """m = Q / (e · β), Q = 4·8 (x) + 8·2 (the int64 shape) read + 4·8·32 written, e = op.Expand.inner.memory."""
    a = onnxperf.analyze(_expands())
    spec = dataclasses.replace(load_spec("xeon-silver-4210x2"), efficiency={
        "movement.memory": 1.0, "op.Expand.inner.memory": 0.02}, efficiency_sources={})
    rows = {n.name: r for n, r in zip(a.main_nodes, roofline(a, spec).nodes)}
    bw = spec.memory_bandwidth_bytes_per_s
    assert rows["e0"].memory_s == pytest.approx((4 * 8 + 8 * 2 + 4 * 8 * 32) / (0.02 * bw))
    assert rows["e1"].memory_s == pytest.approx((4 * 32 + 8 * 2 + 4 * 8 * 32) / bw)


def test_the_suite_measures_it():
    (case,) = [c for c in suite(1 / 8) if c.family == "op." + INNER_EXPAND]
    assert {n.op_type for n in case.model.graph.node} == {"Expand"}
