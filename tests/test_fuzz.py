"""Fuzzing: mutated models (bytes and protobuf fields) through the loader, the analysis and check.

Any failure must be the tool's own error type (:class:`onnxperf.base.errors.OnnxPerfError`), never
another exception. Bounded by a fixed number of examples (no per-example deadline: a wall-clock
limit would make a loaded CI runner fail, not the code; a hang would show as the suite not
finishing), derandomized so CI is reproducible; set ``ONNXPERF_FUZZ_RANDOM=1`` (and ``ONNXPERF_FUZZ_EXAMPLES=5000``) to explore
further locally.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np
import onnx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper

import onnxperf
from onnxperf.products.check.budget import budget_from_mapping
from onnxperf.products.check.render import RENDERERS
from onnxperf.products.check.runner import ERROR, check_model
from onnxperf.base.errors import OnnxPerfError

from .util import const, model, vi

SETTINGS = settings(
    max_examples=int(os.environ.get("ONNXPERF_FUZZ_EXAMPLES", "400")),
    deadline=None,
    derandomize=not os.environ.get("ONNXPERF_FUZZ_RANDOM"),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    database=None,
)

#: every budget limit and every lint threshold set, so that check walks all of its code
EVERYTHING = budget_from_mapping({
    "hw": "t4", "max_params": 10, "max_model_size": 10, "max_macs": 10, "max_flops": 10,
    "max_activation_peak": 10, "max_total_memory": 10, "max_latency": "1ms", "min_throughput": 1,
    "min_opset": 13, "max_opset": 20, "allowed_op_types": ["Conv"], "allowed_domains": ["ai.onnx"],
    "static_shapes": True, "allowed_dtypes": ["float32"], "execution_provider": "CPUExecutionProvider",
    "lints": {"duplicate_min": 1, "large_constant": 1, "fp32_weights_min": 1},
}, "fuzz")


def _cnn() -> onnx.ModelProto:
    shape = onnx.numpy_helper.from_array(np.array([1, -1], dtype=np.int64), "shape")
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("Transpose", ["r"], ["t1"], perm=[0, 2, 3, 1]),
        helper.make_node("Transpose", ["t1"], ["t2"], perm=[0, 3, 1, 2]),
        helper.make_node("Reshape", ["t2", "shape"], ["f"], name="flat"),
        helper.make_node("Constant", [], ["k"], value=onnx.numpy_helper.from_array(np.ones((4,), np.float32))),
        helper.make_node("MatMul", ["f", "fc"], ["m"], name="fc"),
        helper.make_node("Add", ["m", "k"], ["y"], name="add"),
    ]
    inits = [const("w", [4, 3, 3, 3]), const("b", [4]), shape, const("fc", [4 * 8 * 8, 4])]
    return model(nodes, [vi("x", ["batch", 3, 8, 8])], [vi("y", None)], inits, opset=17)


def _control() -> onnx.ModelProto:
    then = helper.make_graph([helper.make_node("Relu", ["h"], ["o1"])], "then", [], [vi("o1", None)])
    other = helper.make_graph([helper.make_node("Neg", ["h"], ["o2"])], "else", [], [vi("o2", None)])
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"),
        helper.make_node("ReduceSum", ["h"], ["s"], keepdims=0),
        helper.make_node("Greater", ["s", "zero"], ["c"]),
        helper.make_node("If", ["c"], ["z"], name="branch", then_branch=then, else_branch=other),
        helper.make_node("Split", ["z"], ["a", "b"], axis=1, num_outputs=2),
        helper.make_node("FusedGemm", ["a", "w2"], ["g"], domain="com.microsoft", alpha=1.0),
        helper.make_node("Concat", ["g", "b"], ["y"], axis=1),
    ]
    inits = [const("w", [8, 8]), const("zero", []), const("w2", [4, 4])]
    return model(nodes, [vi("x", [1, 8])], [vi("y", None)], inits, opset=18, extra_opsets={"com.microsoft": 1})


def _attention() -> onnx.ModelProto:
    """Self-attention with the shape arithmetic exporters write (Shape -> Gather -> Concat -> Reshape)."""
    i64 = lambda name, v: onnx.numpy_helper.from_array(np.array(v, dtype=np.int64), name)  # noqa: E731
    nodes = [
        helper.make_node("LayerNormalization", ["x", "g", "bn"], ["n"], axis=-1, epsilon=1e-5),
        helper.make_node("MatMul", ["n", "wq"], ["q"]), helper.make_node("MatMul", ["n", "wk"], ["k"]),
        helper.make_node("MatMul", ["n", "wv"], ["v"]),
        helper.make_node("Shape", ["x"], ["xs"]), helper.make_node("Gather", ["xs", "one"], ["sl"], axis=0),
        helper.make_node("Unsqueeze", ["sl", "zero"], ["sl1"]),
        helper.make_node("Concat", ["lead", "sl1", "heads"], ["shp"], axis=0),
        helper.make_node("Reshape", ["q", "shp"], ["qh"]), helper.make_node("Reshape", ["k", "shp"], ["kh"]),
        helper.make_node("Transpose", ["kh"], ["kt"], perm=[0, 2, 3, 1]),
        helper.make_node("Einsum", ["qh", "kh"], ["s"], equation="bihd,bjhd->bhij"),
        helper.make_node("Div", ["s", "scale"], ["sd"]), helper.make_node("Softmax", ["sd"], ["p"], axis=-1),
        helper.make_node("Reshape", ["v", "shp"], ["vh"]),
        helper.make_node("Einsum", ["p", "vh"], ["o"], equation="bhij,bjhd->bihd"),
        helper.make_node("Reshape", ["o", "flat"], ["y"]),
    ]
    inits = [const("g", [16]), const("bn", [16]), const("wq", [16, 16]), const("wk", [16, 16]), const("wv", [16, 16]),
             i64("one", [1]), i64("zero", [0]), i64("lead", [1]), i64("heads", [2, 8]), const("scale", []),
             i64("flat", [1, -1, 16])]
    return model(nodes, [vi("x", [1, "seq", 16])], [vi("y", None)], inits, opset=17)


def _loop_and_sizes() -> onnx.ModelProto:
    """A counted Loop carrying a state through a MatMul, and the size ops a mutated constant turns
    into bombs (Range, ConstantOfShape, Expand, Tile, Pad, Cast, Resize)."""
    i64 = lambda name, v: onnx.numpy_helper.from_array(np.array(v, dtype=np.int64), name)  # noqa: E731
    body = helper.make_graph(
        [helper.make_node("MatMul", ["h_in", "wl"], ["h_out"]), helper.make_node("Identity", ["c_in"], ["c_out"])],
        "body", [vi("i", [], TensorProto.INT64), vi("c_in", [], TensorProto.BOOL), vi("h_in", [1, 8])],
        [vi("c_out", [], TensorProto.BOOL), vi("h_out", [1, 8])])
    nodes = [
        helper.make_node("Loop", ["trips", "cond", "x"], ["h"], body=body),
        helper.make_node("Range", ["r0", "rn", "r1"], ["r"]),
        helper.make_node("ConstantOfShape", ["cshape"], ["c"], value=helper.make_tensor("v", TensorProto.FLOAT, [1], [1])),
        helper.make_node("Expand", ["h", "eshape"], ["e"]), helper.make_node("Tile", ["e", "reps"], ["t"]),
        helper.make_node("Pad", ["t", "pads"], ["pd"]), helper.make_node("Cast", ["r"], ["rf"], to=TensorProto.FLOAT),
        helper.make_node("ReduceSum", ["rf"], ["rs"], keepdims=1), helper.make_node("Add", ["pd", "rs"], ["a"]),
        helper.make_node("Mul", ["a", "c"], ["y"]),
    ]
    inits = [i64("trips", 3), onnx.numpy_helper.from_array(np.array(True), "cond"), const("wl", [8, 8]),
             i64("r0", 0), i64("rn", 8), i64("r1", 1), i64("cshape", [2, 8]), i64("eshape", [2, 8]),
             i64("reps", [1, 1]), i64("pads", [0, 0, 0, 0])]
    return model(nodes, [vi("x", [1, 8])], [vi("y", None)], inits, opset=18)


SEEDS = [_cnn().SerializeToString(), _control().SerializeToString(), _attention().SerializeToString(),
         _loop_and_sizes().SerializeToString()]

BIG = st.sampled_from([0, -1, -7, 1, 3, 2**31, 2**40, 2**62, 2**63 - 1, -(2**63)])
NAMES = st.sampled_from(["", "x", "y", "h", "k", "<b>x</b>", "a\nb", "\x00\x1b[2J", "'\"", "\u202e", "w"])


def _run(data: bytes) -> None:
    """The property: analyze, then check and render, either succeed or raise OnnxPerfError."""
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "m.onnx"
        p.write_bytes(data)
        try:
            onnxperf.analyze(p)
        except OnnxPerfError as exc:
            assert str(exc) and "\n" not in str(exc)
            return
        v = check_model(str(p), EVERYTHING)  # OnnxPerfError becomes an error verdict here
        assert v.status != ERROR or v.error
        for render in RENDERERS.values():
            render([v], EVERYTHING)


#: byte edits: (kind, where in [0, 1), payload)
EDITS = st.lists(st.tuples(st.sampled_from(["flip", "insert", "delete", "truncate", "set"]),
                           st.floats(0, 1, exclude_max=True), st.binary(min_size=1, max_size=8)),
                 min_size=1, max_size=4)


def _edit(data: bytes, edits, keep_length: bool = False) -> bytes:
    """``data`` with ``edits`` applied; ``keep_length``: flips and sets only."""
    b = bytearray(data)
    for kind, where, payload in edits:
        if keep_length and kind not in ("flip", "set"):
            kind = "flip"
        if not b:
            if keep_length:
                break
            b[:] = payload
            continue
        i = int(where * len(b))
        if kind == "flip":
            b[i] ^= 1 << (payload[0] % 8)
        elif kind == "insert":
            b[i:i] = payload
        elif kind == "delete":
            del b[i:i + len(payload)]
        elif kind == "truncate":
            del b[i:]
        else:
            b[i] = payload[0]
    return bytes(b)


@SETTINGS
@given(seed=st.sampled_from(SEEDS), edits=EDITS)
def test_mutated_bytes_fail_only_with_the_tools_errors(seed, edits):
    _run(_edit(seed, edits))


# Raw byte edits mostly end at the protobuf parser (a length prefix no longer matches) or land in
# weights nobody reads. The test below edits the bytes of one field of one node and writes the
# length prefixes around it again, so the file still parses and the edit reaches the graph checks
# and the analysis: names and op types with odd bytes, attributes with flipped values.

#: NodeProto's length-delimited fields (their numbers in onnx.proto) that the node edits reach
NODE_FIELDS = {"input": 1, "output": 2, "name": 3, "op_type": 4, "attribute": 5, "domain": 7}


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    """One length-delimited protobuf field (wire type 2)."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _node_fields(n: onnx.NodeProto) -> dict[str, list[bytes]]:
    """The fields of NODE_FIELDS that ``n`` has, as bytes (a field not set: an empty list)."""
    one = {f: [getattr(n, f).encode()] if n.HasField(f) else [] for f in ("name", "op_type", "domain")}
    return {"input": [x.encode() for x in n.input], "output": [x.encode() for x in n.output],
            "name": one["name"], "op_type": one["op_type"],
            "attribute": [a.SerializeToString() for a in n.attribute], "domain": one["domain"]}


def _node_bytes(n: onnx.NodeProto, fields: dict[str, list[bytes]]) -> bytes:
    """``n`` serialized with ``fields`` (possibly invalid bytes) in place of its own; protobuf reads
    fields in any order, and repeated ones in the order written."""
    rest = onnx.NodeProto()
    rest.CopyFrom(n)
    for f in NODE_FIELDS:
        rest.ClearField(f)
    return b"".join(_field(NODE_FIELDS[f], v) for f, vs in fields.items() for v in vs) + rest.SerializeToString()


def _model_bytes(m: onnx.ModelProto, nodes: list[bytes]) -> bytes:
    """``m`` serialized with ``nodes`` as its graph's nodes (GraphProto.node is field 1, ModelProto.graph 7)."""
    g = onnx.GraphProto()
    g.CopyFrom(m.graph)
    g.ClearField("node")
    rest = onnx.ModelProto()
    rest.CopyFrom(m)
    rest.ClearField("graph")
    return rest.SerializeToString() + _field(7, b"".join(_field(1, x) for x in nodes) + g.SerializeToString())


def test_node_reframing_is_exact():
    for seed in SEEDS:
        m = onnx.load_from_string(seed)
        raw = _model_bytes(m, [_node_bytes(n, _node_fields(n)) for n in m.graph.node])
        assert onnx.load_from_string(raw) == m


@SETTINGS
@given(seed=st.sampled_from(SEEDS), data=st.data(), edits=EDITS)
def test_mutated_node_fields_fail_only_with_the_tools_errors(seed, data, edits):
    m = onnx.load_from_string(seed)
    j = data.draw(st.integers(0, len(m.graph.node) - 1), label="node")
    fields = _node_fields(m.graph.node[j])
    name = data.draw(st.sampled_from([f for f, v in fields.items() if v]), label="field")
    k = data.draw(st.integers(0, len(fields[name]) - 1), label="entry")
    # an attribute's bytes keep their length: its name, type and values change, its framing holds
    fields[name][k] = _edit(fields[name][k], edits, keep_length=name == "attribute")
    nodes = [n.SerializeToString() for n in m.graph.node]
    nodes[j] = _node_bytes(m.graph.node[j], fields)
    _run(_model_bytes(m, nodes))


def _mutate(m: onnx.ModelProto, data: st.DataObject) -> None:
    g = m.graph
    kind = data.draw(st.sampled_from([
        "input_dim", "init_dims", "init_type", "input_type", "empty_name", "attr", "opset", "cycle",
        "op_type", "ir", "raw_data", "rank", "dup_output", "name", "const_shape"]))
    def pick(seq):
        return seq[data.draw(st.integers(0, len(seq) - 1))]
    if kind == "input_dim" and g.input[0].type.tensor_type.shape.dim:
        d = pick(g.input[0].type.tensor_type.shape.dim)
        if data.draw(st.booleans()):
            d.dim_value = data.draw(BIG)
        else:
            d.dim_param = data.draw(NAMES)
    elif kind == "init_dims":
        t = pick(g.initializer)
        if data.draw(st.booleans()):  # weights stripped: dims alone must be trusted (or refused)
            for f in ("raw_data", "float_data", "int64_data"):
                t.ClearField(f)
        if t.dims:
            t.dims[data.draw(st.integers(0, len(t.dims) - 1))] = data.draw(BIG)
        else:
            t.dims.append(data.draw(BIG))
    elif kind == "init_type":
        pick(g.initializer).data_type = data.draw(st.sampled_from([0, 8, 16, 17, 23, 99, -1, 2**31 - 1]))
    elif kind == "input_type":
        g.input[0].type.tensor_type.elem_type = data.draw(st.sampled_from([0, 8, 99, -5, 16, 22]))
    elif kind == "empty_name":
        n = pick(g.node)
        if n.input and data.draw(st.booleans()):
            n.input[data.draw(st.integers(0, len(n.input) - 1))] = data.draw(NAMES)
        elif n.output:
            n.output[0] = data.draw(NAMES)
    elif kind == "attr":
        n = pick(g.node)
        name = data.draw(st.sampled_from(["axis", "group", "kernel_shape", "perm", "strides", "pads",
                                          "dilations", "num_outputs", "keepdims", "transB", "to", "blocksize",
                                          "epsilon", "equation", "dtype"]))
        if data.draw(st.booleans()):
            n.attribute.append(helper.make_attribute(name, data.draw(BIG)))
        else:
            n.attribute.append(helper.make_attribute(name, data.draw(st.lists(BIG, min_size=1, max_size=5))))
    elif kind == "opset":
        m.opset_import[0].version = data.draw(st.sampled_from([-1, 0, 1, 5, 7, 12, 24, 30, 1000, 2**62]))
    elif kind == "cycle":
        pick(g.node).input.append(g.output[0].name)
    elif kind == "op_type":
        n = pick(g.node)
        if data.draw(st.booleans()):
            n.op_type = data.draw(st.sampled_from(["Gemm", "Einsum", "Loop", "If", "Foo", "", "Conv", "Attention",
                                                  "Resize", "Slice", "TopK", "Pad", "LSTM", "Expand", "Range",
                                                  "ConstantOfShape", "Tile", "Softmax", "Concat", "PythonOp"]))
        else:
            n.domain = data.draw(st.sampled_from(["", "com.microsoft", "ai.onnx.ml", "evil", "ai.onnx"]))
    elif kind == "ir":
        m.ir_version = data.draw(st.sampled_from([-1, 0, 1, 3, 4, 12, 99, 2**62]))
    elif kind == "raw_data":
        pick(g.initializer).raw_data = data.draw(st.binary(max_size=40))
    elif kind == "rank":
        tt = g.input[0].type.tensor_type
        if data.draw(st.booleans()):
            tt.ClearField("shape")
        else:
            tt.shape.dim.add().dim_value = data.draw(BIG)
    elif kind == "dup_output":
        g.output.append(g.output[0])
    elif kind == "name":
        pick(g.node).name = data.draw(NAMES)
    elif kind == "const_shape":
        values = data.draw(st.lists(st.integers(0, 2**62), min_size=1, max_size=4))
        g.node.insert(0, helper.make_node("Constant", [], ["cs"], value=onnx.numpy_helper.from_array(
            np.array(values, np.int64))))
        op = data.draw(st.sampled_from(["ConstantOfShape", "Reshape", "Expand", "Range", "Tile"]))
        ins = ["cs"] if op == "ConstantOfShape" else [g.input[0].name, "cs"]
        g.node.insert(1, helper.make_node(op, ins, ["co"],
                                          value=onnx.numpy_helper.from_array(np.array([1], np.int64))))


@SETTINGS
@given(seed=st.sampled_from(SEEDS), data=st.data())
def test_mutated_protobuf_fields_fail_only_with_the_tools_errors(seed, data):
    m = onnx.ModelProto()
    m.ParseFromString(seed)
    for _ in range(data.draw(st.integers(1, 3))):
        _mutate(m, data)
    try:
        raw = m.SerializeToString()
    except Exception:  # the mutation made the proto unserializable: nothing to feed the tool
        return
    _run(raw)


@pytest.mark.parametrize("values", [[2**20, 2**20], [2**62], [1 << 40, 3]])
def test_huge_constant_of_shape_is_not_materialized(values, tmp_path):
    # onnxruntime's symbolic inference would build np.ones(values) for an int64 ConstantOfShape.
    nodes = [helper.make_node("Constant", [], ["s"], value=onnx.numpy_helper.from_array(np.array(values, np.int64))),
             helper.make_node("ConstantOfShape", ["s"], ["c"],
                              value=onnx.numpy_helper.from_array(np.array([1], np.int64))),
             helper.make_node("Shape", ["c"], ["y"]), helper.make_node("Relu", ["x"], ["z"])]
    m = model(nodes, [vi("x", ["n"])], [vi("y", None), vi("z", None)])
    a = onnxperf.analyze(m)
    assert a.nodes[1].outputs[0].shape == tuple(values)


def test_declared_rank_in_the_billions_is_refused_not_built():
    # a Reshape whose shape input declares 2^40 elements: a rank no runtime has; never enumerated
    nodes = [helper.make_node("Reshape", ["x", "s"], ["y"])]
    m = model(nodes, [vi("x", [2, 3]), vi("s", [2**40], TensorProto.INT64)], [vi("y", None)])
    a = onnxperf.analyze(m)
    assert a.nodes[0].outputs[0].shape is None
    assert any("skipped" in n and "declared length" in n for n in a.notes)


def test_integer_overflow_in_onnxruntime_inference_drops_its_result(recwarn):
    # Tile by 2^62: onnxruntime's int64 arithmetic would wrap into a wrong dim; it raises instead,
    # the result is dropped with a note, and the output stays unknown (never wrong).
    nodes = [helper.make_node("Constant", [], ["r"], value=onnx.numpy_helper.from_array(np.array([2**62], np.int64))),
             helper.make_node("Tile", ["x", "r"], ["y"])]
    a = onnxperf.analyze(model(nodes, [vi("x", [4])], [vi("y", None)]))
    assert a.nodes[1].outputs[0].shape is None
    assert any("symbolic shape inference could not run on this graph: its result is not used" in n for n in a.notes)
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]
