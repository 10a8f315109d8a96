"""Loader (DAG, order, safety) and shape binding: unknown is never zero."""

import os

import networkx as nx
import onnx
import pytest
from onnx import TensorProto, helper

import onnxperf
from onnxperf.base.errors import DimBindingError, ExternalDataError, GraphError, ModelFileError
from onnxperf.graph.loader import load

from .util import F32, const, model, single, vi


def _two_tensors_between_same_nodes():
    # Split produces two tensors that both feed the same Add: a plain DiGraph would merge them.
    nodes = [helper.make_node("Split", ["x"], ["a", "b"], axis=0, num_outputs=2),
             helper.make_node("Add", ["a", "b"], ["y"])]
    return model(nodes, [vi("x", [4, 3])], [vi("y", None)], opset=18)


def test_dag_is_multidigraph_keyed_by_tensor_with_sources_and_sinks():
    lm = load(_two_tensors_between_same_nodes())
    g = lm.graph.dag
    assert isinstance(g, nx.MultiDiGraph)
    assert set(g.get_edge_data(0, 1).keys()) == {"a", "b"}
    assert g.has_edge("input:x", 0, key="x")
    assert g.has_edge(1, "output:y", key="y")
    assert lm.graph.order == [0, 1]


def test_initializers_are_source_nodes():
    m = single("MatMul", {"a": [2, 3], "w": None}, inits=[const("w", [3, 4])])
    m.graph.node[0].input[1] = "w"
    g = load(m).graph.dag
    assert g.has_edge("initializer:w", 0, key="w")


def test_order_is_topological_even_if_file_is_not():
    nodes = [helper.make_node("Relu", ["t"], ["y"]), helper.make_node("Neg", ["x"], ["t"])]
    m = model(nodes, [vi("x", [3])], [vi("y", None)])
    assert load(m).graph.order == [1, 0]


def test_cycle_is_a_graph_error():
    nodes = [helper.make_node("Add", ["x", "b"], ["a"]), helper.make_node("Relu", ["a"], ["b"])]
    with pytest.raises(GraphError, match="cycle"):
        load(model(nodes, [vi("x", [3])], [vi("b", None)]))


def test_dangling_input_and_duplicate_producer():
    with pytest.raises(GraphError, match="nothing produces"):
        load(model([helper.make_node("Relu", ["nope"], ["y"])], [vi("x", [3])], [vi("y", None)]))
    nodes = [helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Neg", ["x"], ["y"])]
    with pytest.raises(GraphError, match="produced twice"):
        load(model(nodes, [vi("x", [3])], [vi("y", None)]))


def test_bad_files(tmp_path):
    with pytest.raises(ModelFileError, match="no such file"):
        load(tmp_path / "missing.onnx")
    with pytest.raises(ModelFileError, match="directory"):
        load(tmp_path)
    (tmp_path / "empty.onnx").write_bytes(b"")
    with pytest.raises(ModelFileError, match="empty"):
        load(tmp_path / "empty.onnx")
    (tmp_path / "text.onnx").write_text("hello, I am not a model\n" * 10)
    with pytest.raises(ModelFileError):
        load(tmp_path / "text.onnx")


def _external_model(tmp_path, location):
    w = const("w", [64, 64])
    m = single("MatMul", {"a": [2, 64], "w": None}, inits=[w])
    m.graph.node[0].input[1] = "w"
    t = m.graph.initializer[0]
    t.ClearField("raw_data")
    t.ClearField("float_data")
    t.data_location = TensorProto.EXTERNAL
    e = t.external_data.add()
    e.key, e.value = "location", location
    p = tmp_path / "m.onnx"
    onnx.save(m, str(p))
    return p


def test_missing_external_weights_still_analyzed(tmp_path):
    p = _external_model(tmp_path, "weights.bin")
    a = onnxperf.analyze(p)
    assert a.model.missing_external_files == ("weights.bin",)
    assert a.totals.params == 64 * 64
    assert a.totals.macs == 2 * 64 * 64


@pytest.mark.parametrize("location", ["../../etc/passwd", "/etc/passwd", "sub/../../x.bin"])
def test_external_data_outside_folder_is_refused(tmp_path, location):
    p = _external_model(tmp_path, location)
    with pytest.raises(ExternalDataError, match="leaves the model's folder|absolute"):
        load(p)


def test_external_symlink_out_of_folder_is_refused(tmp_path):
    outside = tmp_path / "outside.bin"
    outside.write_bytes(b"\0" * 16)
    sub = tmp_path / "model"
    sub.mkdir()
    os.symlink(outside, sub / "w.bin")
    p = _external_model(sub, "w.bin")
    with pytest.raises(ExternalDataError, match="leaves the model's folder"):
        load(p)


def test_small_external_shape_constant_is_read_for_shape_inference(tmp_path):
    # Reshape target stored as external data inside the folder: read (4 int64s), used for shapes.
    target = onnx.numpy_helper.from_array(__import__("numpy").array([3, 8], dtype="int64"), "shape")
    (tmp_path / "shape.bin").write_bytes(target.raw_data)
    target.ClearField("raw_data")
    target.data_location = TensorProto.EXTERNAL
    for k, v in (("location", "shape.bin"), ("offset", "0"), ("length", "16")):
        e = target.external_data.add()
        e.key, e.value = k, v
    nodes = [helper.make_node("Reshape", ["x", "shape"], ["r"]), helper.make_node("Relu", ["r"], ["y"])]
    m = model(nodes, [vi("x", [2, 12])], [vi("y", None)], [target])
    onnx.save(m, str(tmp_path / "m.onnx"))
    a = onnxperf.analyze(tmp_path / "m.onnx")
    relu = a.main_nodes[1]
    assert relu.outputs[0].shape == (3, 8)
    assert relu.flops == 3 * 8


def _symbolic_mlp():
    h, f = 16, 64
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"]), helper.make_node("Relu", ["h"], ["y"])]
    return model(nodes, [vi("x", ["batch", "seq", h])], [vi("y", None)], [const("w1", [h, f])]), h, f


def test_unbound_dims_are_unknown_not_zero_and_listed():
    m, h, f = _symbolic_mlp()
    a = onnxperf.analyze(m, default_batch=False)
    assert [n.status for n in a.main_nodes] == ["unknown_shape", "unknown_shape"]
    assert a.coverage.dims_to_bind == ("batch", "seq")
    assert a.main_nodes[0].blocking == ("batch", "seq")
    assert a.totals.macs is None and a.coverage.unknown_shape == 2


def test_binding_dims_and_input_shapes():
    m, h, f = _symbolic_mlp()
    batch, seq = 3, 7
    a = onnxperf.analyze(m, dims={"batch": batch, "seq": seq})
    assert a.totals.macs == batch * seq * h * f
    assert a.coverage.complete
    a2 = onnxperf.analyze(m, input_shapes={"x": f"{batch}x{seq}x{h}"})
    assert a2.totals.macs == a.totals.macs


def test_partial_binding_reports_remaining_dim():
    m, _, _ = _symbolic_mlp()
    a = onnxperf.analyze(m, dims={"batch": 2})
    assert a.coverage.dims_to_bind == ("seq",)


def test_a_dim_the_model_lacks_is_a_note_not_an_error():
    m, h, f = _symbolic_mlp()
    a = onnxperf.analyze(m, dims={"batch": 2, "seq": 3, "nope": 7})
    assert a.dims == (("batch", 2), ("seq", 3))  # as applied
    assert a.totals.macs == 2 * 3 * h * f
    assert any(n.startswith("--dim nope=7 not applied: the model's inputs have no dim named 'nope' "
                            "(symbolic dims: batch, seq)") for n in a.notes)


def test_default_batch_binds_the_batch_dim_to_1_with_a_note_and_leaves_the_rest_unknown():
    m, h, f = _symbolic_mlp()
    a = onnxperf.analyze(m, default_batch=True)
    assert a.dims == (("batch", 1),)
    assert a.coverage.dims_to_bind == ("seq",)  # other unbound dims stay unknown: totals partial
    assert "unbound batch dim 'batch' set to 1; pass --dim batch=N for another batch" in a.notes
    b = onnxperf.analyze(m, dims={"seq": 5}, default_batch=True)
    assert b.totals.macs == 1 * 5 * h * f
    c = onnxperf.analyze(m, dims={"batch": 4, "seq": 5}, default_batch=True)  # bound: left alone
    assert c.totals.macs == 4 * 5 * h * f and not any("set to 1" in n for n in c.notes)
    assert onnxperf.analyze(m).dims == (("batch", 1),)  # on by default, as on the command line
    assert onnxperf.analyze(m, default_batch=False).dims == ()  # off when asked


@pytest.mark.parametrize("inputs,want", [
    ([("a", ["N", 3]), ("b", [5])], "N"),                     # named N, whatever the position
    ([("a", ["B", 3]), ("b", ["B", 7])], "B"),                # the leading dim every input shares
    ([("a", ["unk__12", 3])], "unk__12"),                     # one input: its leading dim
    ([("a", ["B", 3]), ("b", ["C", 7])], None),               # inputs disagree: no batch
    ([("a", ["seq_len", 3])], None),                          # a length, not a batch
    ([("a", [2, "batch_size"])], "batch_size"),
    ([("a", [2, 3])], None),                                  # static
])
def test_which_dim_is_the_batch(inputs, want):
    from onnxperf.graph.loader import load
    from onnxperf.shapes.infer import batch_dim

    nodes = [helper.make_node("Identity", [n], [n + "_out"]) for n, _ in inputs]
    m = model(nodes, [vi(n, s) for n, s in inputs], [vi(n + "_out", None) for n, _ in inputs], [])
    assert batch_dim(load(m), {}) == want


def test_a_named_dim_in_an_input_shape_is_bound_by_dims():
    """A static export made symbolic by --input-shape: swept by batch."""
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["y"])]
    m = model(nodes, [vi("x", [1, 16])], [vi("y", None)], [const("w1", [16, 8])])
    a = onnxperf.analyze(m, input_shapes={"x": "Bx16"}, dims={"B": 6})
    assert a.totals.macs == 6 * 16 * 8 and a.dims == (("B", 6),)
    free = onnxperf.analyze(m, input_shapes={"x": "Bx16"}, default_batch=False)
    assert free.coverage.dims_to_bind == ("B",) and not free.totals.complete


@pytest.mark.parametrize("kw,msg", [
    ({"input_shapes": {"zz": (1, 2, 3)}}, "no input named 'zz'"),
    ({"input_shapes": {"x": (1, 2)}}, "rank 2 given"),
])
def test_bad_bindings(kw, msg):
    m, _, _ = _symbolic_mlp()
    with pytest.raises(DimBindingError, match=msg):
        onnxperf.analyze(m, **kw)


def test_huge_dims_stay_exact_integers():
    m, h, f = _symbolic_mlp()
    batch = 2 ** 40
    a = onnxperf.analyze(m, dims={"batch": batch, "seq": 1})
    assert a.totals.macs == batch * h * f
    assert isinstance(a.totals.macs, int)


def test_unknown_domain_is_unsupported_and_named():
    nodes = [helper.make_node("Relu", ["x"], ["t"]),
             helper.make_node("Frobnicate", ["t"], ["y"], domain="com.example")]
    m = model(nodes, [vi("x", [3])], [vi("y", [3])], extra_opsets={"com.example": 1})
    a = onnxperf.analyze(m)
    assert a.main_nodes[1].status == "unsupported"
    assert "com.example" in a.main_nodes[1].note
    assert dict(a.coverage.unsupported_op_types) == {"com.example::Frobnicate": 1}
    assert a.main_nodes[0].status == "counted"


def test_shared_initializer_counted_once_in_params():
    w = const("w", [8, 8])
    nodes = [helper.make_node("MatMul", ["x", "w"], ["a"]), helper.make_node("MatMul", ["a", "w"], ["y"])]
    a = onnxperf.analyze(model(nodes, [vi("x", [2, 8])], [vi("y", None)], [w]))
    assert a.totals.params == 8 * 8
    assert [n.params for n in a.main_nodes] == [64, 64]
    assert a.totals.param_bytes == 64 * 4


def test_int64_constants_are_not_parameters():
    shape = const("shape", [2], TensorProto.INT64, [4, 3])
    nodes = [helper.make_node("Reshape", ["x", "shape"], ["y"])]
    a = onnxperf.analyze(model(nodes, [vi("x", [12])], [vi("y", None)], [shape]))
    assert a.totals.params == 0


def test_model_local_functions_are_inlined():
    fn = helper.make_function("local", "Twice", ["a"], ["b"],
                              [helper.make_node("Add", ["a", "a"], ["b"])], [helper.make_opsetid("", 17)])
    node = helper.make_node("Twice", ["x"], ["y"], domain="local")
    g = helper.make_graph([node], "g", [vi("x", [5, 5])], [vi("y", None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("local", 1)],
                          functions=[fn])
    m.ir_version = 10
    a = onnxperf.analyze(m)
    assert a.model.inlined_functions == 1
    assert [n.op_type for n in a.main_nodes] == ["Add"]
    assert a.totals.flops == 25


def test_same_model_same_options_byte_identical_json():
    m, _, _ = _symbolic_mlp()
    one = onnxperf.analyze(m, dims={"batch": 2, "seq": 3}).to_json()
    two = onnxperf.analyze(m, dims={"batch": 2, "seq": 3}).to_json()
    assert one == two


def test_model_with_over_2gb_of_external_weights(tmp_path):
    # 65536 x 16384 float32 = 4 GiB of weights, referenced, never written nor read.
    k, n = 65536, 16384
    w = onnx.TensorProto()
    w.name, w.data_type = "w", TensorProto.FLOAT
    w.dims.extend([k, n])
    w.data_location = TensorProto.EXTERNAL
    for key, v in (("location", "w.bin"), ("offset", "0"), ("length", str(4 * k * n))):
        e = w.external_data.add()
        e.key, e.value = key, v
    m = model([helper.make_node("MatMul", ["x", "w"], ["y"])], [vi("x", ["batch", k])], [vi("y", None)], [w])
    onnx.save(m, str(tmp_path / "big.onnx"))
    a = onnxperf.analyze(tmp_path / "big.onnx", dims={"batch": 2})
    assert a.totals.param_bytes == 4 * k * n > 2 ** 31
    assert a.totals.macs == 2 * k * n
    assert a.main_nodes[0].bytes_read == 4 * (2 * k + k * n)


def test_analysis_writes_nothing_into_the_working_directory(tmp_path, monkeypatch):
    # onnxruntime's symbolic inference would save sym_shape_infer_temp.onnx into the cwd when it
    # cannot complete; an op of an unknown domain in the middle makes it incomplete.
    nodes = [helper.make_node("Relu", ["x"], ["t"]),
             helper.make_node("Mystery", ["t"], ["u"], domain="com.example"),
             helper.make_node("Relu", ["u"], ["y"])]
    m = model(nodes, [vi("x", ["batch", 3])], [vi("y", None)], extra_opsets={"com.example": 1})
    monkeypatch.chdir(tmp_path)
    a = onnxperf.analyze(m, dims={"batch": 2})
    assert list(tmp_path.iterdir()) == []
    assert a.main_nodes[1].status == "unsupported"
    assert a.main_nodes[2].status == "unknown_shape"


def test_one_op_is_registered_by_one_module():
    from onnxperf.cost.ops.registry import Registry, RuleEntry
    reg = Registry()
    reg.add(RuleEntry("", "Foo", 1, "misc", lambda n: None, module="a"))
    reg.add(RuleEntry("", "Foo", 7, "misc", lambda n: None, module="a"))
    with pytest.raises(ValueError, match="one op, one module"):
        reg.add(RuleEntry("", "Foo", 9, "misc", lambda n: None, module="b"))


def test_own_shape_rules_fill_ml_outputs_onnx_leaves_open():
    n, f, t = 5, 4, 3
    node = helper.make_node("LinearRegressor", ["x"], ["y"], domain="ai.onnx.ml", coefficients=[0.1] * (f * t),
                            intercepts=[0.0] * t, targets=t)
    m = model([node], [vi("x", [n, f])], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
              extra_opsets={"ai.onnx.ml": 1})
    a = onnxperf.analyze(m)
    r = a.main_nodes[0]
    assert r.outputs[0].shape == (n, t)
    assert "onnxperf" in a.shape_engines
    assert r.status == "counted" and r.exact
    assert r.bytes_written == 4 * n * t


def test_dag_is_built_on_first_access_and_analyze_does_not_need_it():
    lm = load(_two_tensors_between_same_nodes())
    assert lm.graph._dag is None  # recorded as lists; networkx only when asked for
    onnxperf.analyze(lm.proto)
    g = lm.graph.dag
    assert g is lm.graph.dag  # built once
    assert sorted(g.nodes, key=str) == [0, 1, "input:x", "output:y"]
    assert g.number_of_edges() == 4  # x, a, b, y
    assert g.nodes[0] == {"kind": "op", "op_type": "Split", "domain": "", "name": ""}


def test_analyze_restores_the_garbage_collector():
    import gc

    assert gc.isenabled()
    onnxperf.analyze(_two_tensors_between_same_nodes())
    assert gc.isenabled()
    with pytest.raises(GraphError):
        onnxperf.analyze(model([helper.make_node("Relu", ["nope"], ["y"])], [vi("x", [3])], [vi("y", None)]))
    assert gc.isenabled()
    gc.disable()
    try:
        onnxperf.analyze(_two_tensors_between_same_nodes())
        assert not gc.isenabled()  # left as the caller had it
    finally:
        gc.enable()
