"""The shortcuts taken for million-node graphs (issue 15, item 9) give what the plain code gives.

Each is checked against the rule it stands for, on tiny graphs built here: the loader's shared
tensor names and its DAG links made on demand, the static shape rules' memo (never for a rule
that reads an input's value), liveness on numbered buffers, the JSON rows' per-cost text, and
the record fields' C getter."""

from __future__ import annotations

import json

import numpy as np
import pytest
from onnx import TensorProto, helper

from onnxperf.cost.analysis import _node_dict
from onnxperf.cost.analysis import cost_analysis as analyze
from onnxperf.base.errors import GraphError
from onnxperf.base.frozen import getter, record
from onnxperf.graph.loader import load
from onnxperf.predict.memory import liveness
from onnxperf.ui.jsonrows import _ROW, node_rows
from onnxperf.shapes.infer import infer

from .util import F32, const, model, vi


def _chain(blocks: int) -> object:
    nodes, inits, prev = [], [], "x"
    for k in range(blocks):
        inits += [const(f"w{k}", [4, 4]), const(f"b{k}", [4])]
        nodes += [helper.make_node("MatMul", [prev, f"w{k}"], [f"m{k}"]),
                  helper.make_node("Add", [f"m{k}", f"b{k}"], [f"a{k}"]),
                  helper.make_node("Relu", [f"a{k}"], [f"r{k}"])]
        prev = f"r{k}"
    return model(nodes, [vi("x", ["batch", 4])], [vi(prev, None)], inits)


def test_a_tensor_name_is_one_string_for_its_producer_and_its_readers():
    g = load(_chain(3)).graph
    defined = {n: n for n in g.initializers}
    defined.update((n, n) for n in g.inputs)
    for ins, outs in g.io:
        for x in ins:
            assert x is defined[x]  # the very string that defined it
        defined.update((o, o) for o in outs)
    assert g.heads[0] is g.heads[3]  # unnamed nodes of one op type share their head


def _reference_links(g):
    """(source, target, tensor) as build_graph recorded them before they were made on demand."""
    producer = dict.fromkeys(g.initializers, "initializer")
    producer.update((n, "input") for n in g.inputs if n not in g.initializers)
    for i, (_, outs) in enumerate(g.io):
        producer.update((o, i) for o in outs if o)
    producer.update((r, "outer") for r in g.outer_refs if r not in producer)
    links = []
    for i, (ins, _) in enumerate(g.io):
        links += [(producer[x], i, x) for x in ins if x]
        for (j, _), sub in g.subgraphs.items():
            if j == i:
                links += [(producer[r], i, r) for r in sub.outer_refs if r in producer]
    return links + [(producer[o], f"output:{o}", o) for o in g.outputs]


def test_dag_links_made_on_demand_are_the_recorded_ones_out_of_order_and_with_bodies():
    then = helper.make_graph([helper.make_node("Add", ["y", "x"], ["t"])], "then", [], [vi("t", None)])
    other = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [], [vi("e", None)])
    nodes = [helper.make_node("If", ["c"], ["z"], then_branch=then, else_branch=other),
             helper.make_node("Relu", ["x"], ["y"]),  # read by the If above it in the file
             helper.make_node("Identity", ["z"], ["out"])]
    g = load(model(nodes, [vi("x", [2]), vi("c", [], TensorProto.BOOL)], [vi("out", None)])).graph
    assert g.dag_links == _reference_links(g)
    assert g.order == [1, 0, 2]
    body = g.subgraphs[(0, "then_branch")]
    assert body.outer_refs == ["y", "x"] and body.dag_links == _reference_links(body)


def test_out_of_order_graph_is_sorted_and_a_cycle_or_a_missing_tensor_still_refused():
    nodes = [helper.make_node("Relu", ["a"], ["b"]), helper.make_node("Neg", ["x"], ["a"])]
    g = load(model(nodes, [vi("x", [2])], [vi("b", None)])).graph
    assert g.order == [1, 0] and g.io[0][0][0] is g.io[1][1][0]
    with pytest.raises(GraphError, match="cycle"):
        load(model([helper.make_node("Relu", ["b"], ["a"]), helper.make_node("Neg", ["a"], ["b"])],
                   [vi("x", [2])], [vi("b", None)]))
    with pytest.raises(GraphError, match="reads tensor 'nope', which nothing produces"):
        load(model([helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Neg", ["nope"], ["z"])],
                   [vi("x", [2])], [vi("z", None)]))


@pytest.mark.parametrize("first, nodes, inits", [
    ("0", [helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Neg", ["x"], ["y"])], []),
    ("'input:x'", [helper.make_node("Relu", ["x"], ["x"])], []),
    ("'initializer:w'", [helper.make_node("Relu", ["x"], ["w"])], [const("w", [2])]),
])
def test_a_tensor_produced_twice_names_what_defined_it_first(first, nodes, inits):
    with pytest.raises(GraphError, match=f"produced twice \\(node {len(nodes) - 1} .* and {first}\\)"):
        load(model(nodes, [vi("x", [2])], [vi(nodes[-1].output[0], None)], inits))


def test_repeated_blocks_share_their_shapes_and_a_value_reading_rule_is_asked_each_time():
    sr = infer(load(_chain(4)), {"batch": 2})
    assert sr.tensors["r3"].shape == (2, 4) and sr.tensors["r3"].shape is sr.tensors["r0"].shape
    # two Reshapes of one input shape to different targets: the rule reads the target each time
    nodes = [helper.make_node("Reshape", ["x", "s1"], ["y1"]), helper.make_node("Reshape", ["x", "s2"], ["y2"])]
    inits = [const("s1", [2], TensorProto.INT64, [3, 4]), const("s2", [2], TensorProto.INT64, [2, 6])]
    sr = infer(load(model(nodes, [vi("x", [12])], [vi("y1", None), vi("y2", None)], inits)))
    assert (sr.tensors["y1"].shape, sr.tensors["y2"].shape) == ((3, 4), (2, 6))


def test_liveness_on_numbered_buffers():
    nodes = [helper.make_node("Relu", ["x"], ["a"]),
             helper.make_node("Reshape", ["a", "s"], ["v"]),  # a view of a: its buffer, no bytes of its own
             helper.make_node("Reshape", ["w", "s"], ["wv"]),  # a view of a weight: a buffer of its own
             helper.make_node("Add", ["v", "wv"], ["y"])]
    m = model(nodes, [vi("x", [2, 3]), vi("x", [2, 3])], [vi("y", None), vi("x", None)],
              [const("s", [2], TensorProto.INT64, [2, 3]), const("w", [2, 3])])
    mem = liveness(analyze(m))
    # x (24 B, an input listed twice and a graph output: lives to the end) + a (24) + wv (24) + y (24)
    assert mem.preallocated_bytes == 4 * 24 and mem.unknown_tensors == 0
    assert mem.timeline == (48, 48, 72, 96) and (mem.peak_bytes, mem.peak_step) == (96, 3)


def test_node_rows_with_equal_costs_and_different_tails():
    a = analyze(_chain(2), dims={"batch": 1})
    base = a.nodes[2]  # a Relu: same figures as the other Relu
    other = base._replace(note="a note", blocking=("batch",), name="n\u00e9")
    nodes = [base, other, a.nodes[5], base._replace(id=9, scope="3/body")]
    assert list(node_rows(nodes, _node_dict)) == [_ROW(_node_dict(n)) for n in nodes]
    assert json.loads("[" + ", ".join(node_rows(nodes, _node_dict)) + "]")[1]["blocking"] == ["batch"]


def test_getter_fields_are_read_only_items():
    @record
    class R:
        a: int
        b: float = 0.5

    r = R(3)
    assert (r.a, r.b) == (3, 0.5) and R.a.__doc__ == "field a"
    with pytest.raises(AttributeError):
        r.b = 1.0  # type: ignore[misc]

    class T(tuple):
        __slots__ = ()
        x = getter(1, "second")

    assert T((1, np.int64(2))).x == 2 and T.x.__doc__ == "second"
    assert F32 == TensorProto.FLOAT
