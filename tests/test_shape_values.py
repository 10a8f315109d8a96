"""Shape arithmetic computed before inference (onnxperf.shapes.values): each evaluator agrees with
ONNX's reference implementation, a torch-style graph ONNX leaves unknown is resolved without
onnxruntime, and nothing large is ever computed."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import onnxperf
from onnxperf.shapes.values import EVALUATORS, MAX_ELEMENTS

from .util import const, model, vi

I64 = np.int64


def _i(*v):
    return np.array(v, dtype=I64)


CASES = [
    ("Gather", [_i(1, 128, 768), np.array(1, I64)], {"axis": 0}),
    ("Gather", [_i(1, 128, 768), _i(-1, 0)], {}),
    ("GatherElements", [_i(5, 6, 7, 8).reshape(2, 2), _i(1, 0, 0, 1).reshape(2, 2)], {"axis": 1}),
    ("Unsqueeze", [np.array(128, I64), _i(0)], {}),
    ("Unsqueeze", [_i(3, 4), _i(-1, 0)], {}),
    ("Squeeze", [_i(7).reshape(1, 1), _i(0)], {}),
    ("Concat", [_i(1), _i(-1, 12, 64)], {"axis": 0}),
    ("Slice", [np.arange(512, dtype=I64).reshape(1, 512), _i(0), _i(128), _i(1), _i(1)], {}),
    ("Slice", [np.arange(10, dtype=I64), _i(-1), _i(-(2**63) + 1), _i(0), _i(-2)], {}),
    ("Slice", [_i(2, 3, 4), _i(-2), _i(9223372036854775807)], {}),
    ("Reshape", [_i(1, 2, 3, 4, 5, 6), _i(0, -1)], {}),
    ("Reshape", [_i(1, 2, 3, 4, 5, 6).reshape(2, 3), _i(3, 2)], {"allowzero": 1}),
    ("Flatten", [np.arange(24, dtype=I64).reshape(2, 3, 4)], {"axis": -1}),
    ("Transpose", [np.arange(6, dtype=I64).reshape(2, 3)], {"perm": [1, 0]}),
    ("Expand", [_i(1, 2).reshape(1, 2), _i(3, 1)], {}),
    ("Tile", [_i(1, 2), _i(3)], {}),
    ("ConstantOfShape", [_i(2, 3)], {"value": numpy_helper.from_array(np.array([1], I64))}),
    ("ConstantOfShape", [_i(4)], {}),
    ("Range", [np.array(0, I64), np.array(128, I64), np.array(1, I64)], {}),
    ("Range", [np.array(10, I64), np.array(1, I64), np.array(-3, I64)], {}),
    ("Cast", [_i(1, 0, 3)], {"to": TensorProto.BOOL}),
    ("Cast", [np.array([1.7, -2.5], np.float32)], {"to": TensorProto.INT64}),
    ("Add", [_i(1, 2), np.array(3, I64)], {}),
    ("Sub", [_i(1, 2), _i(5, 5)], {}),
    ("Mul", [_i(12), _i(64)], {}),
    ("Div", [_i(7, -7, 768), _i(2, 2, 12)], {}),
    ("Div", [np.array([7.0], np.float32), np.array([2.0], np.float32)], {}),
    ("Mod", [_i(7, -7), _i(3, 3)], {}),
    ("Mod", [_i(7, -7), _i(3, 3)], {"fmod": 1}),
    ("Neg", [_i(3)], {}),
    ("Min", [_i(3, 9), _i(5, 1), _i(4, 4)], {}),
    ("Max", [_i(3, 9), _i(5, 1)], {}),
    ("Equal", [_i(1, 2), _i(1, 3)], {}),
    ("Less", [_i(1, 2), _i(2, 2)], {}),
    ("GreaterOrEqual", [_i(1, 2), _i(2, 2)], {}),
    ("Not", [np.array([True, False])], {}),
    ("And", [np.array([True, False]), np.array([True, True])], {}),
    ("Where", [np.array([True, False]), _i(1, 2), _i(3, 4)], {}),
    ("ReduceProd", [_i(2, 3, 4)], {"keepdims": 0}),
    ("ReduceSum", [np.arange(6, dtype=I64).reshape(2, 3), _i(1)], {"keepdims": 1}),
    ("ReduceMax", [np.arange(6, dtype=I64).reshape(2, 3), _i(0)], {"keepdims": 0}),
    ("Identity", [_i(4, 5)], {}),
    ("ScatterND", [np.zeros((4, 3), I64), np.array([[1], [3]], I64), np.array([[1, 2, 3], [4, 5, 6]], I64)], {}),
    ("ScatterND", [np.arange(4, dtype=I64), np.array([[0], [0]], I64), _i(5, 6)], {"reduction": "add"}),
    ("GatherND", [np.arange(12, dtype=I64).reshape(3, 4), np.array([[0, 1], [2, 3]], I64)], {}),
    ("GatherND", [np.arange(12, dtype=I64).reshape(3, 4), np.array([[2], [0]], I64)], {}),
    ("CumSum", [_i(1, 2, 3, 4), np.array(0, I64)], {}),
    ("Clip", [_i(-5, 3, 9), np.array(0, I64), np.array(6, I64)], {}),
    ("Pow", [_i(2, 3), _i(3, 2)], {}),
    ("Pow", [np.array([2.0, 4.0], np.float32), np.array(0.5, np.float32)], {}),
    ("Reciprocal", [np.array([2.0, 4.0], np.float32)], {}),
]


@pytest.mark.parametrize("op,ins,attrs", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_evaluator_agrees_with_the_onnx_reference(op, ins, attrs):
    names = [f"in{i}" for i in range(len(ins))]
    node = helper.make_node(op, names, ["out"], **attrs)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
                                        for n, v in zip(names, ins)],
                          [helper.make_tensor_value_info("out", TensorProto.UNDEFINED, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    expected = ReferenceEvaluator(m).run(None, dict(zip(names, ins)))[0]
    got = EVALUATORS[op](list(ins), {k: v for k, v in attrs.items()}, 18)
    assert got.dtype == expected.dtype and got.shape == expected.shape and np.array_equal(got, expected)


def _torch_style_slice(with_huge=False):
    """position_ids[:, :seq] with seq = Shape(x)[1], as PyTorch exports it, then an Add that needs
    the sliced shape; ONNX's data propagation leaves the Slice's output unknown."""
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Gather", ["s", "one"], ["seq"], axis=0),
             helper.make_node("Unsqueeze", ["seq", "zero"], ["end"]),
             helper.make_node("Slice", ["pos", "start", "end", "one_v", "one_v"], ["p"]),
             helper.make_node("Cast", ["p"], ["pf"], to=TensorProto.FLOAT),
             helper.make_node("Add", ["xf", "pf"], ["y"])]
    inits = [numpy_helper.from_array(np.arange(512, dtype=I64).reshape(1, 512), "pos"),
             numpy_helper.from_array(np.array(1, I64), "one"), numpy_helper.from_array(_i(0), "zero"),
             numpy_helper.from_array(_i(0), "start"), numpy_helper.from_array(_i(1), "one_v")]
    inputs = [vi("x", ["batch", "sequence"]), vi("xf", ["batch", "sequence"])]
    if with_huge:
        nodes.append(helper.make_node("ConstantOfShape", ["big"], ["z"]))
        inits.append(numpy_helper.from_array(_i(2**20, 2**20), "big"))
    return model(nodes, inputs, [vi("y", None)], inits)


def test_torch_style_shape_arithmetic_is_resolved_without_onnxruntime():
    a = onnxperf.analyze(_torch_style_slice(), dims={"batch": 2, "sequence": 128})
    assert "onnxperf" in a.shape_engines and "onnxruntime-symbolic" not in a.shape_engines
    add = [n for n in a.nodes if n.op_type == "Add"][0]
    assert add.inputs[1].shape == (1, 128) and add.status == "counted" and add.flops == 2 * 128
    assert a.coverage.complete


def test_with_free_dims_nothing_is_computed_from_them():
    a = onnxperf.analyze(_torch_style_slice())
    add = [n for n in a.nodes if n.op_type == "Add"][0]
    assert add.status == "unknown_shape"


def test_large_values_are_never_computed():
    """A ConstantOfShape of 2^40 elements stays a shape for inference, never an array."""
    a = onnxperf.analyze(_torch_style_slice(with_huge=True), dims={"batch": 1, "sequence": 16})
    z = [n for n in a.nodes if n.op_type == "ConstantOfShape"][0]
    assert z.outputs[0].shape == (2**20, 2**20) and MAX_ELEMENTS < 2**40


def test_analysis_leaves_the_loaded_model_as_it_was():
    """Analysis prepares the loaded proto in place (bound inputs, hidden Ranges, unfused ops) and
    puts every node and input back afterwards: the same loaded model analyzed again, with other
    bindings, gives what a fresh load gives."""
    from onnxperf.graph.loader import load

    m = _torch_style_slice()
    before = m.SerializeToString()
    loaded = load(m)
    a = onnxperf.analyze(loaded, dims={"batch": 2, "sequence": 128})
    assert "onnxperf" in a.shape_engines
    assert loaded.proto.SerializeToString() == load(_torch_style_slice()).proto.SerializeToString()
    assert m.SerializeToString() == before
    again = onnxperf.analyze(loaded, dims={"batch": 3, "sequence": 64})
    fresh = onnxperf.analyze(_torch_style_slice(), dims={"batch": 3, "sequence": 64})
    assert [n.outputs for n in again.nodes] == [n.outputs for n in fresh.nodes]
    assert [n.inputs[1].shape for n in again.nodes if n.op_type == "Add"] == [(1, 64)]
