"""onnxruntime gives every reader of a DequantizeLinear its own copy (EnsureUniqueDQForNodeUnit, before any
optimization level): the roofline of a calibrated onnxruntime spec charges a DequantizeLinear read by e inputs
e kernels, and validate maps the copies' time back to it (issue 30, item 4: the ViT-B/16 QOperator export ran
18 copies, 1.6 ms of 88 ms, that the prediction had not counted, and their time landed on their readers)."""

from __future__ import annotations

import dataclasses

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxperf
from onnxperf.hardware import load_spec
from onnxperf.insights.advice import node_why
from onnxperf.predict.roofline import roofline
from onnxperf.predict.unique_dq import dq_copies
from onnxperf.products.validate import make_inputs, map_groups, run_session

U8 = TensorProto.UINT8
F32 = TensorProto.FLOAT
MS = "com.microsoft"
#: the quantized tensor each DequantizeLinear reads: C channels of H x W
C, H, W = 64, 56, 56


def _model(readers: int, *, graph_output: bool = False, twice: bool = False, ms: bool = False) -> onnx.ModelProto:
    """x (uint8, C x H x W) -> DequantizeLinear -> ``readers`` Softmax nodes (``twice``: one Mul reading it
    twice instead); ``graph_output``: the float tensor is also an output of the graph; ``ms``: the
    com.microsoft DequantizeLinear."""
    inits = [numpy_helper.from_array(np.array(0.02, np.float32), "s"), numpy_helper.from_array(np.array(128, np.uint8), "z")]
    nodes = [helper.make_node("DequantizeLinear", ["x", "s", "z"], ["d"], name="dq", domain=MS if ms else "")]
    outs = []
    if twice:
        nodes.append(helper.make_node("Mul", ["d", "d"], ["y0"], name="sq"))
        outs.append("y0")
    else:
        for i in range(readers):
            nodes.append(helper.make_node("Softmax", ["d"], [f"y{i}"], name=f"sm{i}", axis=-1))
            outs.append(f"y{i}")
    if graph_output:
        outs.append("d")
    g = helper.make_graph(nodes, "dq", [helper.make_tensor_value_info("x", U8, [1, C, H, W])],
                          [helper.make_tensor_value_info(o, F32, [1, C, H, W]) for o in outs], inits)
    opsets = [helper.make_opsetid("", 17)] + ([helper.make_opsetid(MS, 1)] if ms else [])
    m = helper.make_model(g, opset_imports=opsets)
    m.ir_version = 8
    return m


def _copies(model: onnx.ModelProto) -> dict[str, int]:
    a = onnxperf.analyze(model)
    by_key = dq_copies(a.main_nodes, {o.name for o in a.model.outputs})
    return {n.name: by_key[n.key] for n in a.main_nodes if n.key in by_key}


def test_one_kernel_per_reader_edge_and_one_more_for_a_graph_output():
    """k = e + g: e the input edges the DequantizeLinear feeds, g = 1 when its output is a graph output too;
    only k > 1 is listed."""
    assert _copies(_model(3)) == {"dq": 3}
    assert _copies(_model(1)) == {}
    assert _copies(_model(1, graph_output=True)) == {"dq": 1 + 1}
    assert _copies(_model(2, graph_output=True)) == {"dq": 2 + 1}
    assert _copies(_model(0, twice=True)) == {"dq": 2}  # one node, two input edges
    assert _copies(_model(2, ms=True)) == {"dq": 2}


@pytest.mark.parametrize("opt", ["disable", "all"])
@pytest.mark.parametrize("kw", [{"readers": 3}, {"readers": 1, "graph_output": True}, {"readers": 0, "twice": True},
                                {"readers": 2, "ms": True}])
def test_onnxruntime_runs_as_many_dequantize_kernels(kw, opt, tmp_path):
    """The DequantizeLinear kernels of the optimized graph (the original and its ``/duplicated`` copies), at
    no optimization and at all, are the k the roofline charges; validate maps every one to the original
    node's group, and its readers' groups hold their own kernel alone."""
    m = _model(**kw)
    p = tmp_path / "dq.onnx"
    onnx.save(m, str(p))
    a = onnxperf.analyze(p)
    want = _copies(m).get("dq", 1)
    r = run_session(p, make_inputs(a), runs=2, warmup=1, opt=opt, progress=False)
    opt_graph = r.optimized_model if r.optimized_model is not None else m
    if r.optimized_model is None:  # opt=disable runs the file as written: the profile names the kernels
        names = [t.name for t in r.node_timings if t.op_type == "DequantizeLinear"]
    else:
        names = [n.name for n in opt_graph.graph.node if n.op_type == "DequantizeLinear"]
    assert len(names) == want
    assert all(n == "dq" or n.startswith("dq/duplicated") for n in names)
    mp = map_groups(a.loaded, r.optimized_model, r.node_timings)
    index = {n.name: i for i, n in enumerate(m.graph.node)}
    dq = mp.group_of(index["dq"])
    assert dq.original_node_ids == (index["dq"],)
    timed = {t.name: t.typical_s_per_run for t in r.node_timings if t.parent is None}
    assert dq.measured_s_per_run == pytest.approx(sum(timed[n] for n in names)) and dq.measured_s_per_run > 0
    if r.optimized_model is not None:
        assert sorted(dq.measured_names) == sorted(names)
    for name, i in index.items():
        if name != "dq":
            assert mp.group_of(i).original_node_ids == (i,) and mp.group_of(i).measured_s_per_run == \
                pytest.approx(timed[name])
    assert not mp.unmapped


def _spec(fused: bool):
    eff = {"default.compute": 0.5, "default.memory": 0.5, "overhead_s": 2e-6}
    if fused:
        eff["fusion.epilogue"] = 1.0  # onnxruntime's CPU provider, as a calibration writes it
    return dataclasses.replace(load_spec("xeon-silver-4210x2"), efficiency=eff, efficiency_sources={})


def _dq_row(model, spec):
    a = onnxperf.analyze(model)
    res = roofline(a, spec)
    (key,) = [n.key for n in a.main_nodes if n.op_type == "DequantizeLinear"]
    return res, next(r for r in res.nodes if r.key == key)


def test_the_roofline_charges_every_copy_on_a_calibrated_onnxruntime_spec():
    """W' = k·W, Q' = k·Q and every part of t k times the one-reader node's; a plain roofline (no
    ``fusion.epilogue``: the graph as written) charges one."""
    _, one = _dq_row(_model(1), _spec(True))
    res, three = _dq_row(_model(3), _spec(True))
    assert one.copies == 1 and three.copies == 3
    assert one.bytes == C * H * W * (1 + 4) + 4 + 1  # uint8 read, float32 written; the scale and zero point
    assert three.bytes == 3 * one.bytes and three.ops == 3 * one.ops
    for part in ("time_s", "compute_s", "memory_s", "dispatch_s"):
        assert getattr(three, part) == pytest.approx(3 * getattr(one, part))
    assert three.intensity == one.intensity and three.peak_share == pytest.approx(one.peak_share)
    row = next(n for n in res.to_dict()["nodes"] if n["key"] == three.key)
    assert row["copies"] == 3
    why = node_why(three, _spec(True))
    assert why.startswith("runs 3 times") and "EnsureUniqueDQForNodeUnit" in why
    _, plain = _dq_row(_model(3), _spec(False))
    assert plain.copies == 1 and plain.time_s == pytest.approx(one.time_s)
