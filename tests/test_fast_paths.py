"""The speed-ups of the analysis path give what the slow, obvious code gives.

Each fast path (onnxperf/base/frozen.py, the loader's direct decoding of small constants, the in-place
Constant nodes of the shape-value rounds, the DAG ids made on demand) is checked against the
code it replaces: ``dataclass`` ``__init__``, ``numpy_helper.to_array``, ``make_node`` +
``from_array``, and ids spelled out."""



import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxperf
from onnxperf.base.frozen import record
from onnxperf.graph.loader import _small_value, load

from .util import model, vi


@record
class _Rec:
    a: int
    b: str
    c: tuple = ()

    @property
    def twice(self) -> int:
        return 2 * self.a


def test_record_keeps_a_frozen_dataclass_contract():
    r = _Rec(1, "x")
    assert (r.a, r.b, r.c, r.twice) == (1, "x", (), 2)
    assert _Rec(1, "x", (2,)) == _Rec(a=1, b="x", c=(2,)) and _Rec(1, "x") != _Rec(2, "x")
    assert _Rec(1, "x") != (1, "x", ())  # equal only to its own kind
    assert hash(_Rec(1, "x")) == hash(_Rec(1, "x"))
    assert repr(r) == "_Rec(a=1, b='x', c=())"
    assert r._replace(b="y") == _Rec(1, "y") and r.b == "x"
    with pytest.raises(AttributeError):
        r.a = 2  # type: ignore[misc]
    with pytest.raises(TypeError):
        _Rec(1)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        _Rec(1, "x", e=3)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        r._replace(e=3)
    import pickle

    assert pickle.loads(pickle.dumps(r)) == r


_ARRAYS = [
    np.array([1, -2, 3], np.int64), np.array(7, np.int64), np.array([[1, 2], [3, 4]], np.int32),
    np.array([1.5, -2.25], np.float32), np.array([0.1], np.float64), np.array([1, 2], np.int8),
    np.array([200, 3], np.uint8), np.array([1, 2], np.int16), np.array([1, 60000], np.uint16),
    np.array([1, 2**31], np.uint32), np.array([1, 2**40], np.uint64), np.array([0.5, -1], np.float16),
    np.array([True, False, True], np.bool_), np.zeros((0, 3), np.float32),
]


@pytest.mark.parametrize("arr", _ARRAYS, ids=lambda a: f"{a.dtype}{list(a.shape)}")
def test_small_constants_decode_as_numpy_helper_does(arr):
    t = numpy_helper.from_array(arr, "t")  # raw_data
    ours = _small_value(t, tuple(t.dims), t.raw_data)
    ref = numpy_helper.to_array(t)
    assert ours.dtype == ref.dtype and ours.shape == ref.shape and np.array_equal(ours, ref)


@pytest.mark.parametrize("data_type,fld,values,dims", [
    (TensorProto.INT64, "int64_data", [4, -5, 6], [3]), (TensorProto.INT32, "int32_data", [7, 8], [2, 1]),
    (TensorProto.FLOAT, "float_data", [1.5], []), (TensorProto.DOUBLE, "double_data", [2.5, 3.5], [2]),
    (TensorProto.FLOAT16, "int32_data", [15360], [1]), (TensorProto.BOOL, "int32_data", [1, 0], [2]),
])
def test_typed_field_constants_decode_as_numpy_helper_does(data_type, fld, values, dims):
    t = TensorProto(name="t", data_type=data_type, dims=dims)
    getattr(t, fld).extend(values)
    ours = _small_value(t, tuple(t.dims), t.raw_data)
    ref = numpy_helper.to_array(t)
    assert ours.dtype == ref.dtype and ours.shape == ref.shape and np.array_equal(ours, ref)


def test_malformed_small_constant_has_no_value():
    t = TensorProto(name="t", data_type=TensorProto.INT64, dims=[3])  # declares 3, holds none
    assert _small_value(t, (3,), t.raw_data) is None


def test_dag_ids_are_spelled_out_when_networkx_is_asked_for():
    init = numpy_helper.from_array(np.ones((3, 4), np.float32), "w")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"])]
    lm = load(model(nodes, [vi("x", [2, 3])], [vi("y", None)], [init]))
    g = lm.graph
    assert g.dag_nodes[:2] == [("initializer:w", {"kind": "initializer", "tensor": "w"}),
                               ("input:x", {"kind": "input", "tensor": "x"})]
    assert g.dag_nodes[2] == (0, {"kind": "op", "op_type": "MatMul", "domain": "", "name": ""})
    assert g.dag_nodes[3] == ("output:y", {"kind": "output", "tensor": "y"})
    assert sorted(g.dag_edges, key=str) == sorted([("input:x", 0, "x"), ("initializer:w", 0, "w"),
                                                   (0, "output:y", "y")], key=str)
    assert set(g.dag.edges(keys=True)) == set(g.dag_edges)


def test_subgraph_outer_references_keep_their_ids():
    then = helper.make_graph([helper.make_node("Relu", ["x"], ["t"])], "then", [], [vi("t", [3])])
    other = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [], [vi("e", [3])])
    nodes = [helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)]
    m = model(nodes, [vi("x", [3]), vi("c", [], TensorProto.BOOL)], [vi("y", None)])
    lm = load(m)
    sub = lm.graph.subgraphs[(0, "then_branch")]
    assert ("outer:x", {"kind": "outer", "tensor": "x"}) in sub.dag_nodes
    assert ("outer:x", 0, "x") in sub.dag_edges
    assert lm.graph.dag.has_edge("input:x", 0, key="x")  # the body's free variable feeds the If


def test_duplicate_producer_names_the_initializer_as_before():
    init = numpy_helper.from_array(np.ones((3,), np.float32), "w")
    nodes = [helper.make_node("Relu", ["x"], ["w"])]
    with pytest.raises(onnxperf.base.errors.GraphError, match=r"and 'initializer:w'\)"):
        load(model(nodes, [vi("x", [3])], [vi("w", None)], [init]))
