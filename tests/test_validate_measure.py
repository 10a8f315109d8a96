"""Measurement layer of ``onnxperf validate``: inputs, weights, runner, profile parser, mapping.

Models are built here with onnx.helper. onnxruntime runs in a child process (about 0.2 s each);
no assertion looks at a wall-clock value, only at counts, names and structure.
"""

from __future__ import annotations

import io
import json
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxperf
from onnxperf.base.errors import ExternalDataError, InputError, OptionError
from onnxperf.products.validate import NodeTiming, RuntimeRunError, latency_stats, make_inputs, map_groups, memory_needed_bytes, missing_weights, parse_profile, run_session, with_random_weights
from onnxperf.products.validate import runner
from onnxperf.products.validate.runner import SPREAD_CV_THRESHOLD

F32, I64 = TensorProto.FLOAT, TensorProto.INT64
RNG = np.random.default_rng(0)


def _init(name, shape, dtype=np.float32, values=None):
    arr = RNG.standard_normal(shape).astype(dtype) if values is None else np.asarray(values, dtype).reshape(shape)
    return numpy_helper.from_array(arr, name)


def _model(nodes, inputs, outputs, inits, opset=17):
    g = helper.make_graph(nodes, "g", inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 9
    return m


def _chain() -> onnx.ModelProto:
    """x -> Conv -> Relu -> Add(const) -> MatMul -> y; node ids 0..3."""
    c, k, h = 8, 3, 8
    nodes = [
        helper.make_node("Conv", ["x", "W", "B"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("Add", ["r", "A"], ["a"], name="add"),
        helper.make_node("MatMul", ["a", "M"], ["y"], name="matmul"),
    ]
    inits = [_init("W", (c, k, 3, 3)), _init("B", (c,)), _init("A", (1, c, h, h)), _init("M", (h, 4))]
    return _model(nodes, [helper.make_tensor_value_info("x", F32, [1, k, h, h])],
                  [helper.make_tensor_value_info("y", F32, [1, c, h, 4])], inits)


V, D = 50, 8


def _embedding() -> onnx.ModelProto:
    """input_ids -> Unsqueeze -> Cast -> Gather(E[V, D]); attention_mask -> Cast -> Unsqueeze -> Mul."""
    nodes = [
        helper.make_node("Unsqueeze", ["input_ids", "ax0"], ["ids_u"], name="unsq_ids"),
        helper.make_node("Cast", ["ids_u"], ["ids_c"], name="cast_ids", to=TensorProto.INT32),
        helper.make_node("Gather", ["E", "ids_c"], ["emb"], name="embed"),
        helper.make_node("Cast", ["attention_mask"], ["m_f"], name="cast_mask", to=F32),
        helper.make_node("Unsqueeze", ["m_f", "axm1"], ["m_u"], name="unsq_mask"),
        helper.make_node("Mul", ["emb", "m_u"], ["y0"], name="mul"),
        helper.make_node("Where", ["keep", "y0", "zero"], ["y"], name="where"),
    ]
    inits = [_init("E", (V, D)), _init("ax0", (1,), np.int64, [0]), _init("axm1", (1,), np.int64, [-1]),
             _init("zero", (), np.float32, 0.0)]
    inputs = [helper.make_tensor_value_info("input_ids", I64, ["batch", "sequence"]),
              helper.make_tensor_value_info("attention_mask", I64, ["batch", "sequence"]),
              helper.make_tensor_value_info("keep", TensorProto.BOOL, [1]),
              helper.make_tensor_value_info("segment", I64, ["batch", "sequence"]),
              helper.make_tensor_value_info("x", F32, [3, 4])]
    return _model(nodes, inputs, [helper.make_tensor_value_info("y", F32, [1, "batch", "sequence", D])], inits)


@pytest.fixture(scope="module")
def chain_path(tmp_path_factory):
    p = tmp_path_factory.mktemp("chain") / "chain.onnx"
    onnx.save(_chain(), str(p))
    return p


def _assert_partition(mapping, n_nodes):
    ids = [i for g in mapping.groups for i in g.original_node_ids]
    assert sorted(ids) == list(range(n_nodes)), "every original node in exactly one group"


# --- runner + mapping on real onnxruntime runs ------------------------------------------------

def test_chain_disable_names_match_graph_one_to_one(chain_path):
    a = onnxperf.analyze(chain_path)
    r = run_session(chain_path, make_inputs(a), runs=3, warmup=1, opt="disable", progress=False)
    assert len(r.latencies_s) == 3 and r.runs == 3 and r.warmup == 1
    assert r.optimized_model is None and r.optimized_model_path is None
    assert r.providers[0] == "CPUExecutionProvider" and r.ort_version
    assert [t.name for t in r.node_timings] == [n.name for n in _chain().graph.node]
    assert all(t.calls_per_run == 1 for t in r.node_timings)
    m = map_groups(a.loaded, None, r.node_timings)
    assert [g.original_node_ids for g in m.groups] == [(0,), (1,), (2,), (3,)]
    assert [g.measured_names for g in m.groups] == [("conv",), ("relu",), ("add",), ("matmul",)]
    assert m.unmapped == () and not any(g.folded for g in m.groups)


def test_chain_all_conv_relu_is_one_group(chain_path, tmp_path):
    a = onnxperf.analyze(chain_path)
    r = run_session(chain_path, make_inputs(a), runs=3, warmup=1, opt="all", workdir=tmp_path, progress=False)
    assert len(r.latencies_s) == 3
    assert r.optimized_model is not None
    assert r.optimized_model_path and (tmp_path / "optimized.onnx").is_file()
    assert r.profile_path and json.loads(open(r.profile_path).read())
    m = map_groups(a.loaded, r.optimized_model, r.node_timings)
    _assert_partition(m, 4)
    conv_group = m.group_of(0)
    assert conv_group.original_node_ids == (0, 1)  # FusedConv or NCHWc Conv with fused Relu
    assert not conv_group.folded and len(conv_group.measured_names) == 1
    # nothing dropped: groups + unmapped (Reorder nodes on NCHWc machines) = every timing
    assert m.measured_s_per_run == pytest.approx(sum(t.typical_s_per_run for t in r.node_timings))
    assert all(u.op_type.startswith("Reorder") for u in m.unmapped)


def test_embedding_model_runs_with_generated_inputs(tmp_path):
    p = tmp_path / "emb.onnx"
    onnx.save(_embedding(), str(p))
    a = onnxperf.analyze(p, dims={"batch": 2, "sequence": 8})
    r = run_session(p, make_inputs(a), runs=3, warmup=1, opt="all", progress=False)
    m = map_groups(a.loaded, r.optimized_model, r.node_timings)
    _assert_partition(m, len(_embedding().graph.node))
    assert m.group_of(2).measured_names  # the Gather ran (indices in range, else onnxruntime fails)


def test_timeout_kills_the_child_with_one_line(chain_path):
    a = onnxperf.analyze(chain_path)
    with pytest.raises(RuntimeRunError) as exc:
        run_session(chain_path, make_inputs(a), runs=3, warmup=1, timeout_s=0.001, progress=False)
    msg = str(exc.value)
    assert "time limit" in msg and "\n" not in msg and exc.value.exit_code == 2


def test_runtime_error_is_one_line(chain_path):
    with pytest.raises(RuntimeRunError) as exc:
        run_session(chain_path, {"x": np.zeros((1, 3, 8, 8), np.int64)}, runs=1, warmup=0, progress=False)
    assert str(exc.value).startswith("onnxruntime failed: ") and "\n" not in str(exc.value)


@pytest.mark.parametrize("script, expect", [
    ("import os, resource, signal, sys\nresource.setrlimit(resource.RLIMIT_CORE, (0, 0))\n"
     "sys.stderr.write('noise\\nError: bad kernel\\n'); sys.stderr.flush()\n"
     "os.kill(os.getpid(), signal.SIGSEGV)\n", "onnxruntime crashed (SIGSEGV): Error: bad kernel"),
    ("import sys\nsys.stderr.write('last words\\n'); sys.exit(7)\n", "exited with code 7: last words"),
])
@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_child_crash_is_one_line(chain_path, tmp_path, monkeypatch, script, expect):
    fake = tmp_path / "fake_child.py"  # stands in for onnxruntime dying in native code
    fake.write_text(script)
    monkeypatch.setattr(runner, "_CHILD", fake)
    with pytest.raises(RuntimeRunError) as exc:
        run_session(chain_path, {"x": np.zeros((1, 3, 8, 8), np.float32)}, runs=1, warmup=0, progress=False)
    assert expect in str(exc.value) and "\n" not in str(exc.value)


def test_bad_options_are_refused_before_running(chain_path):
    for kw in ({"opt": "max"}, {"runs": 0}, {"warmup": -1}, {"threads": 0}, {"timeout_s": 0}):
        with pytest.raises(OptionError):
            run_session(chain_path, {}, **kw)


# --- inputs ---------------------------------------------------------------------------------

def test_input_ranges_and_determinism():
    a = onnxperf.analyze(_embedding(), dims={"batch": 4, "sequence": 16})
    x = make_inputs(a, seed=3)
    ids = x["input_ids"]
    assert ids.dtype == np.int64 and ids.shape == (4, 16)
    assert ids.min() >= 0 and ids.max() < V and ids.max() >= 2  # the table's range, not [0, 2)
    assert (x["attention_mask"] == 1).all() and x["attention_mask"].dtype == np.int64
    assert x["keep"].dtype == np.bool_ and x["keep"].all()
    assert set(np.unique(x["segment"])) <= {0, 1}
    assert x["x"].dtype == np.float32 and (x["x"] >= -1).all() and (x["x"] < 1).all()
    again = make_inputs(a, seed=3)
    assert all(np.array_equal(x[k], again[k]) for k in x)
    other = make_inputs(a, seed=4)
    assert not np.array_equal(x["input_ids"], other["input_ids"])


def test_unbound_dims_are_named():
    a = onnxperf.analyze(_embedding(), default_batch=False)
    with pytest.raises(OptionError, match=r"input_ids.*batch"):
        make_inputs(a)


def test_memory_refused_before_allocating():
    big = _model([helper.make_node("Relu", ["x"], ["y"])], [helper.make_tensor_value_info("x", F32, ["n", "n"])],
                 [helper.make_tensor_value_info("y", F32, ["n", "n"])], [])
    n = 1 << 20
    a = onnxperf.analyze(big, dims={"n": n})
    assert memory_needed_bytes(a) == n * n * 4  # 4 TiB: allocating would fail long before the check
    with pytest.raises(OptionError, match="limit"):
        make_inputs(a)
    small = onnxperf.analyze(big, dims={"n": 4})
    with pytest.raises(OptionError):
        make_inputs(small, max_bytes=63)
    x = make_inputs(small, max_bytes=64)
    assert memory_needed_bytes(x) == 64


# --- weights --------------------------------------------------------------------------------

def test_random_weights_for_missing_external_data(tmp_path):
    m = _chain()
    onnx.save(m, str(tmp_path / "m.onnx"), save_as_external_data=True, all_tensors_to_one_file=True,
              location="m.onnx.data", size_threshold=0)
    (tmp_path / "m.onnx.data").unlink()
    assert missing_weights(tmp_path / "m.onnx") == ["m.onnx.data"]
    out = with_random_weights(tmp_path / "m.onnx", tmp_path / "copy" / "m.onnx", seed=1)
    assert missing_weights(out) == []
    full = onnx.load(str(out))
    w = {t.name: numpy_helper.to_array(t) for t in full.graph.initializer}
    assert w["W"].shape == (8, 3, 3, 3) and w["W"].dtype == np.float32 and np.abs(w["W"]).max() < 0.2
    again = with_random_weights(tmp_path / "m.onnx", tmp_path / "copy2" / "m.onnx", seed=1)
    w2 = {t.name: numpy_helper.to_array(t) for t in onnx.load(str(again)).graph.initializer}
    assert all(np.array_equal(w[k], w2[k]) for k in w)


def test_external_data_outside_the_folder_is_refused(tmp_path):
    m = _chain()
    t = m.graph.initializer[0]
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    e = t.external_data.add()
    e.key, e.value = "location", "../secret.bin"
    onnx.save(m, str(tmp_path / "m.onnx"))
    with pytest.raises(ExternalDataError):
        missing_weights(tmp_path / "m.onnx")
    with pytest.raises(ExternalDataError):
        with_random_weights(tmp_path / "m.onnx", tmp_path / "out" / "m.onnx")


# --- profile parser on a canned trace -------------------------------------------------------

def _node(name, op, ts, dur, idx):
    return {"cat": "Node", "ph": "X", "name": f"{name}_kernel_time", "ts": ts, "dur": dur,
            "args": {"op_name": op, "provider": "CPUExecutionProvider", "node_index": str(idx)}}


def _run(ts, dur):
    return {"cat": "Session", "ph": "X", "name": "model_run", "ts": ts, "dur": dur, "args": {}}


CANNED = [
    {"cat": "Session", "ph": "X", "name": "session_initialization", "ts": 0, "dur": 90, "args": {}},
    # warm-up run: slow first kernels, must not count
    _node("conv", "Conv", 100, 500, 0), _node("gate", "If", 610, 40, 1), _node("neg", "Neg", 620, 20, 0),
    _run(100, 560),
    # timed run 1
    _node("conv", "Conv", 1000, 10, 0),
    {"cat": "Node", "ph": "X", "name": "conv_fence_before", "ts": 999, "dur": 1, "args": {"op_name": "Conv"}},
    _node("neg", "Neg", 1020, 4, 0),  # If body, written before its parent
    {"cat": "Session", "ph": "X", "name": "SequentialExecutor::Execute", "ts": 1019, "dur": 6, "args": {}},
    _node("gate", "If", 1015, 30, 1),
    _run(995, 60),
    # timed run 2
    _node("conv", "Conv", 2000, 20, 0), _node("neg", "Neg", 2030, 6, 0), _node("gate", "If", 2025, 20, 1),
    _node("tail", "Relu", 2045, 0, 2),  # 0 µs right when the If ends: not in its body
    _run(1995, 60),
]


def test_profile_parser_excludes_warmup_and_if_parent(tmp_path):
    p = tmp_path / "profile.json"
    p.write_text(json.dumps(CANNED))
    got = {t.name: t for t in parse_profile(p, runs=2)}
    assert set(got) == {"conv", "neg", "tail"}  # the If's own event is dropped
    assert got["conv"].mean_s_per_run == pytest.approx((10 + 20) / 2 * 1e-6)  # 500 µs warm-up excluded
    assert got["conv"].op_type == "Conv" and got["conv"].provider == "CPUExecutionProvider"
    assert got["conv"].calls_per_run == 1 and got["conv"].parent is None and got["conv"].node_index == 0
    assert got["neg"].parent == "gate" and got["neg"].mean_s_per_run == pytest.approx(5e-6)
    assert got["tail"].parent is None and got["tail"].calls_per_run == 0.5
    assert [t.name for t in parse_profile(CANNED, runs=3)][:2] == ["conv", "neg"]
    # over 3 runs the 500 µs one is an outlier: the mean follows it, the median (compared with
    # predictions) does not; a node that ran in one run of two has median half its time
    three = {t.name: t for t in parse_profile(CANNED, runs=3)}
    assert three["conv"].mean_s_per_run == pytest.approx((500 + 10 + 20) / 3 * 1e-6)
    assert three["conv"].median_s_per_run == pytest.approx(20e-6) == three["conv"].typical_s_per_run
    with pytest.raises(InputError):
        parse_profile(CANNED, runs=4)


def test_body_time_goes_to_the_parent_group():
    then_g = helper.make_graph([helper.make_node("Neg", ["x"], ["t"], name="neg")], "then", [],
                               [helper.make_tensor_value_info("t", F32, [2])])
    else_g = helper.make_graph([helper.make_node("Abs", ["x"], ["e"], name="abs")], "else", [],
                               [helper.make_tensor_value_info("e", F32, [2])])
    m = _model([helper.make_node("ReduceSum", ["x"], ["s"], name="rs", keepdims=0),
                helper.make_node("Greater", ["s", "zero"], ["cond"], name="gt"),
                helper.make_node("If", ["cond"], ["y"], name="gate", then_branch=then_g, else_branch=else_g)],
               [helper.make_tensor_value_info("x", F32, [2])], [helper.make_tensor_value_info("y", F32, [2])],
               [_init("zero", (), np.float32, 0.0)])
    timings = [NodeTiming("rs", "ReduceSum", "cpu", 1e-6, 1), NodeTiming("gt", "Greater", "cpu", 2e-6, 1),
               NodeTiming("neg", "Neg", "cpu", 4e-6, 1, 0, "gate")]
    mp = map_groups(m, None, timings)
    assert mp.group_of(2).measured_s_per_run == pytest.approx(4e-6) and mp.unmapped == ()


# --- mapping on a hand-written NCHWc rewrite --------------------------------------------------

def test_mapping_nchwc_sum_fusion_reorders_and_folded_constant():
    """Original: c1 -> r1 -> c2 -> add(+r1 out) -> r2 -> mul(Constant). Optimized as onnxruntime
    writes NCHWc: nodes named '<original tensor>_nchwc', renamed tensors, Reorder nodes."""
    orig = _model([
        helper.make_node("Conv", ["x", "W1"], ["t1"], name="c1"),
        helper.make_node("Relu", ["t1"], ["a"], name="r1"),
        helper.make_node("Conv", ["a", "W2"], ["t2"], name="c2"),
        helper.make_node("Add", ["t2", "a"], ["s"], name="add"),
        helper.make_node("Relu", ["s"], ["y"], name="r2"),
        helper.make_node("Constant", [], ["sc"], name="cst", value=_init("v", (), np.float32, 2.0)),
        helper.make_node("Mul", ["y", "sc"], ["out"], name="mul"),
    ], [helper.make_tensor_value_info("x", F32, [1, 8, 4, 4])],
        [helper.make_tensor_value_info("out", F32, [1, 8, 4, 4])],
        [_init("W1", (8, 8, 1, 1)), _init("W2", (8, 8, 1, 1))])
    nchwc = "com.microsoft.nchwc"
    opt = _model([
        helper.make_node("ReorderInput", ["x"], ["rt0"], name="ReorderInput", domain=nchwc),
        helper.make_node("Conv", ["rt0", "W1r"], ["rt1"], name="a_nchwc", domain=nchwc, activation="Relu"),
        helper.make_node("Conv", ["rt1", "W2r", "", "rt1"], ["rt2"], name="t2_nchwc", domain=nchwc,
                         activation="Relu"),
        helper.make_node("ReorderOutput", ["rt2"], ["y"], name="ReorderOutput", domain=nchwc),
        helper.make_node("Mul", ["y", "sc"], ["out"], name="mul"),
    ], [helper.make_tensor_value_info("x", F32, [1, 8, 4, 4])],
        [helper.make_tensor_value_info("out", F32, [1, 8, 4, 4])],
        [_init("W1r", (8, 8, 1, 1)), _init("W2r", (8, 8, 1, 1)), _init("sc", (), np.float32, 2.0)])
    us = 1e-6
    timings = [NodeTiming("ReorderInput", "ReorderInput", "cpu", 1 * us, 1),
               NodeTiming("a_nchwc", "Conv", "cpu", 10 * us, 1), NodeTiming("t2_nchwc", "Conv", "cpu", 20 * us, 1),
               NodeTiming("ReorderOutput", "ReorderOutput", "cpu", 2 * us, 1),
               NodeTiming("mul", "Mul", "cpu", 3 * us, 1), NodeTiming("ghost", "Memcpy", "cpu", 4 * us, 1)]
    m = map_groups(orig, opt, timings)
    _assert_partition(m, 7)
    by_ids = {g.original_node_ids: g for g in m.groups}
    assert set(by_ids) == {(0, 1), (2, 3, 4), (5,), (6,)}
    assert by_ids[(0, 1)].measured_names == ("a_nchwc",) and by_ids[(0, 1)].measured_s_per_run == pytest.approx(10 * us)
    assert by_ids[(2, 3, 4)].original_op_types == ("Conv", "Add", "Relu")
    assert by_ids[(2, 3, 4)].measured_s_per_run == pytest.approx(20 * us)
    assert by_ids[(5,)].folded and by_ids[(5,)].measured_s_per_run == 0
    assert {u.name for u in m.unmapped} == {"ReorderInput", "ReorderOutput", "ghost"}
    assert m.unmapped_s_per_run == pytest.approx(7 * us)
    assert m.measured_s_per_run == pytest.approx(40 * us)


def test_mapping_layout_transformer_tokens():
    """onnxruntime's layout transformer moves QLinearConv/MaxPool to NHWC: it renames the nodes it
    rewrites '<original name>_token_<N>', renames their output tensors and those of the
    layout-agnostic QLinearAdd between them (which keeps its name), and inserts Transposes. Each
    measured node still maps to its own original node (a QOperator ResNet-18 was one group of 30)."""
    u8 = TensorProto.UINT8
    q = ["xs", "xz", "ws", "wz", "ys", "yz"]
    orig = _model([
        helper.make_node("QLinearConv", ["x", "xs", "xz", "W1", "ws", "wz", "ys", "yz"], ["c1"], name="conv1"),
        helper.make_node("MaxPool", ["c1"], ["p"], name="pool", kernel_shape=[2, 2]),
        helper.make_node("QLinearConv", ["p", "xs", "xz", "W2", "ws", "wz", "ys", "yz"], ["c2"], name="conv2"),
        helper.make_node("QLinearAdd", ["c2", "xs", "xz", "p", "xs", "xz", "ys", "yz"], ["y"], name="add",
                         domain="com.microsoft"),
    ], [helper.make_tensor_value_info("x", u8, [1, 8, 4, 4])], [helper.make_tensor_value_info("y", u8, None)],
        [_init(n, (), np.float32 if n.endswith("s") else np.uint8, 1) for n in q]
        + [_init("W1", (8, 8, 1, 1), np.uint8, np.ones(64)), _init("W2", (8, 8, 1, 1), np.uint8, np.ones(64))])
    orig.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    opt = _model([
        helper.make_node("Transpose", ["x"], ["x_nhwc"], name="Transpose", perm=[0, 2, 3, 1]),
        helper.make_node("QLinearConv", ["x_nhwc", "xs", "xz", "W1", "ws", "wz", "ys", "yz"], ["t1"],
                         name="conv1_token_3", domain="com.microsoft", channels_last=1),
        helper.make_node("NhwcMaxPool", ["t1"], ["t2"], name="pool_token_7", domain="com.microsoft",
                         kernel_shape=[2, 2]),
        helper.make_node("QLinearConv", ["t2", "xs", "xz", "W2", "ws", "wz", "ys", "yz"], ["t3"],
                         name="conv2_token_9", domain="com.microsoft", channels_last=1),
        helper.make_node("QLinearAdd", ["t3", "xs", "xz", "t2", "xs", "xz", "ys", "yz"], ["t4"], name="add",
                         domain="com.microsoft"),
        helper.make_node("Transpose", ["t4"], ["y"], name="Transpose_1", perm=[0, 3, 1, 2]),
    ], [helper.make_tensor_value_info("x", u8, [1, 8, 4, 4])], [helper.make_tensor_value_info("y", u8, None)],
        [_init(n, (), np.float32 if n.endswith("s") else np.uint8, 1) for n in q]
        + [_init("W1", (8, 8, 1, 1), np.uint8, np.ones(64)), _init("W2", (8, 8, 1, 1), np.uint8, np.ones(64))])
    us = 1e-6
    timings = [NodeTiming(n, op, "cpu", t * us, 1) for n, op, t in (
        ("Transpose", "Transpose", 1), ("conv1_token_3", "QLinearConv", 10), ("pool_token_7", "NhwcMaxPool", 3),
        ("conv2_token_9", "QLinearConv", 20), ("add", "QLinearAdd", 4), ("Transpose_1", "Transpose", 2))]
    m = map_groups(orig, opt, timings)
    _assert_partition(m, 4)
    by_ids = {g.original_node_ids: g for g in m.groups}
    assert set(by_ids) == {(0,), (1,), (2,), (3,)}
    assert by_ids[(0,)].measured_names == ("Transpose", "conv1_token_3")
    assert by_ids[(1,)].measured_s_per_run == pytest.approx(3 * us)
    assert by_ids[(2,)].measured_s_per_run == pytest.approx(20 * us)
    assert by_ids[(3,)].measured_names == ("add", "Transpose_1")
    assert m.measured_s_per_run == pytest.approx(40 * us)


def test_unnamed_nodes_match_by_profiler_default_names():
    m = _model([helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Neg", ["r"], ["y"])],
               [helper.make_tensor_value_info("x", F32, [2])], [helper.make_tensor_value_info("y", F32, [2])], [])
    timings = [NodeTiming("Relu_0", "Relu", "cpu", 1e-6, 1, 0), NodeTiming("Neg_1", "Neg", "cpu", 2e-6, 1, 1)]
    mp = map_groups(m, None, timings)
    assert [g.measured_s_per_run for g in mp.groups] == [pytest.approx(1e-6), pytest.approx(2e-6)]
    assert [g.measured_names for g in mp.groups] == [("Relu_0",), ("Neg_1",)]


# --- latency statistics ---------------------------------------------------------------------

def test_latency_stats_and_spread_warning():
    s = latency_stats([0.010, 0.010, 0.010, 0.010], batch=8)
    assert s.n == 4 and s.mean_s == pytest.approx(0.010) and s.cv == 0 and s.spread_warning is None
    assert s.throughput_per_s == pytest.approx(800)
    noisy = latency_stats([0.010, 0.020, 0.010, 0.030])
    assert noisy.cv > SPREAD_CV_THRESHOLD and "cv" in noisy.spread_warning
    assert noisy.min_s == 0.010 and noisy.max_s == 0.030 and noisy.p50_s == pytest.approx(0.015)
    with pytest.raises(OptionError):
        latency_stats([])


# --- GELU fusion: onnxruntime's rewrite of a written-out Erf GELU ----------------------------

def _gelu_block(batch: int, seq: int, d: int, hidden: int) -> onnx.ModelProto:
    """x[batch, seq, d] -> MatMul -> Add(bias) -> Erf GELU (Div √2, Erf, Add 1, Mul, Mul 0.5) -> LayerNorm."""
    nodes = [
        helper.make_node("MatMul", ["x", "W"], ["mm"], name="matmul"),
        helper.make_node("Add", ["mm", "bias"], ["h"], name="bias_add"),
        helper.make_node("Div", ["h", "sqrt2"], ["hd"], name="gelu_div"),
        helper.make_node("Erf", ["hd"], ["e"], name="gelu_erf"),
        helper.make_node("Add", ["e", "one"], ["e1"], name="gelu_add1"),
        helper.make_node("Mul", ["h", "e1"], ["hm"], name="gelu_mul"),
        helper.make_node("Mul", ["hm", "half"], ["g"], name="gelu_half"),
        helper.make_node("LayerNormalization", ["g", "gamma", "beta"], ["y"], name="ln", axis=-1),
    ]
    inits = [_init("W", (d, hidden)), _init("bias", (hidden,)), _init("sqrt2", (), np.float32, np.sqrt(2.0)),
             _init("one", (), np.float32, 1.0), _init("half", (), np.float32, 0.5), _init("gamma", (hidden,)),
             _init("beta", (hidden,))]
    return _model(nodes, [helper.make_tensor_value_info("x", F32, [batch, seq, d])],
                  [helper.make_tensor_value_info("y", F32, [batch, seq, hidden])], inits)


GELU_PIECES = ("gelu_div", "gelu_erf", "gelu_add1", "gelu_mul", "gelu_half")


def test_gelu_fusion_maps_every_node_to_one_group(tmp_path):
    m = _gelu_block(batch=2, seq=4, d=16, hidden=32)
    p = tmp_path / "gelu.onnx"
    onnx.save(m, str(p))
    index = {n.name: i for i, n in enumerate(m.graph.node)}
    a = onnxperf.analyze(p)
    r = run_session(p, make_inputs(a), runs=3, warmup=1, opt="all", progress=False)
    assert any("Gelu" in n.op_type for n in r.optimized_model.graph.node)  # onnxruntime fused it
    mp = map_groups(a.loaded, r.optimized_model, r.node_timings)
    _assert_partition(mp, len(m.graph.node))
    gelu = mp.group_of(index["gelu_erf"])
    assert {index[n] for n in GELU_PIECES} <= set(gelu.original_node_ids)
    assert any("Gelu" in t for t in gelu.op_types) and not gelu.folded
    assert mp.group_of(index["ln"]).original_node_ids == (index["ln"],)
    # unmapped time is reported, never dropped: groups + unmapped = every measured kernel
    assert mp.unmapped_s_per_run >= 0
    assert mp.measured_s_per_run == pytest.approx(sum(t.typical_s_per_run for t in r.node_timings))
    assert all((t.op_type.startswith(("Reorder", "Memcpy"))) for t in mp.unmapped)


def test_mapping_helper_nodes_of_a_fusion_join_its_group():
    """MatMulAddFusion on a 3-D MatMul: Reshape -> Gemm -> Reshape, only the last one writes the
    original tensor; the Gemm and the first Reshape, whose outputs alias nothing, join its group."""
    b, s, d, n = 2, 3, 4, 5
    orig = _model([helper.make_node("MatMul", ["x", "W"], ["mm"], name="matmul"),
                   helper.make_node("Add", ["mm", "bias"], ["h"], name="bias_add"),
                   helper.make_node("Relu", ["h"], ["y"], name="relu")],
                  [helper.make_tensor_value_info("x", F32, [b, s, d])],
                  [helper.make_tensor_value_info("y", F32, [b, s, n])], [_init("W", (d, n)), _init("bias", (n,))])
    opt = _model([helper.make_node("Reshape", ["x", "shape_in"], ["x2d"], name="gemm_input_reshape"),
                  helper.make_node("Gemm", ["x2d", "W", "bias"], ["g2d"], name="matmul/MatMulAddFusion"),
                  helper.make_node("Reshape", ["g2d", "shape_out"], ["h"], name="gemm_output_reshape"),
                  helper.make_node("Relu", ["h"], ["y"], name="relu")],
                 [helper.make_tensor_value_info("x", F32, [b, s, d])],
                 [helper.make_tensor_value_info("y", F32, [b, s, n])],
                 [_init("W", (d, n)), _init("bias", (n,)), _init("shape_in", (2,), np.int64, [b * s, d]),
                  _init("shape_out", (3,), np.int64, [b, s, n])])
    us = 1e-6
    t_in, t_gemm, t_out, t_relu = 1 * us, 10 * us, 2 * us, 3 * us
    timings = [NodeTiming("gemm_input_reshape", "Reshape", "cpu", t_in, 1),
               NodeTiming("matmul/MatMulAddFusion", "Gemm", "cpu", t_gemm, 1),
               NodeTiming("gemm_output_reshape", "Reshape", "cpu", t_out, 1),
               NodeTiming("relu", "Relu", "cpu", t_relu, 1)]
    mp = map_groups(orig, opt, timings)
    _assert_partition(mp, 3)
    fused = mp.group_of(0)
    assert fused.original_node_ids == (0, 1)
    assert fused.op_types == ("Reshape", "Gemm", "Reshape")
    assert fused.measured_s_per_run == pytest.approx(t_in + t_gemm + t_out)
    assert mp.group_of(2).measured_s_per_run == pytest.approx(t_relu) and mp.unmapped == ()


# --- the progress line ------------------------------------------------------------------------

class _FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_line_is_drawn_on_a_terminal_and_cleared(monkeypatch):
    total = 3
    err = _FakeTTY()
    monkeypatch.setattr(sys, "stderr", err)
    child_out = io.StringIO("".join(f"progress {k} {total}\n" for k in range(1, total + 1)) + "other output\n")
    p = runner._Progress(child_out, show=True)
    p.close()
    drawn = err.getvalue()
    for k in range(1, total + 1):
        assert f"\ronnxruntime: run {k}/{total}" in drawn
    assert drawn.endswith("\r\033[K") and "other output" not in drawn


def test_progress_is_quiet_when_not_shown(monkeypatch):
    err = _FakeTTY()
    monkeypatch.setattr(sys, "stderr", err)
    runner._Progress(io.StringIO("progress 1 1\n"), show=False).close()
    assert err.getvalue() == ""


@pytest.mark.parametrize("tty", [True, False])
def test_run_session_shows_progress_only_on_a_terminal(chain_path, monkeypatch, tty):
    runs, warmup = 2, 1
    err = _FakeTTY() if tty else io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    run_session(chain_path, make_inputs(onnxperf.analyze(chain_path)), runs=runs, warmup=warmup, profile=False,
                opt="disable")  # progress=None: decided by the stream
    total = warmup + runs  # unprofiled: one session
    assert (f"\ronnxruntime: run {total}/{total}" in err.getvalue()) is tty
    assert (err.getvalue() == "") is not tty


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX address-space limits")
def test_the_child_is_capped_and_says_so_when_the_model_needs_more(tmp_path):
    """Issue 15, item 8: a model that allocates 1 GiB at run time, in a child capped at 1 GiB of address
    space: the child fails whatever the interpreter and onnxruntime take before the model (~350 MiB here,
    less on a machine whose allocator reserves less: a cap of 700 MiB let the model run on CI), and the
    parent's error says the memory cap was hit; with the runtime's headroom above it, the same model runs."""
    from onnx import TensorProto, helper

    from onnxperf.products.validate.runner import RUNTIME_HEADROOM_BYTES, RuntimeRunError, run_session

    need = 1 << 30  # the Expand's float output: 8192 * 4096 * 8 * 4 bytes
    big = helper.make_tensor("shape", TensorProto.INT64, [3], [8192, 4096, 8])
    g = helper.make_graph([helper.make_node("Expand", ["x", "shape"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [big])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 9
    p = tmp_path / "big.onnx"
    onnx.save(m, str(p))
    with pytest.raises(RuntimeRunError, match="ran out of the memory it is allowed"):
        run_session(p, {"x": np.ones(1, np.float32)}, runs=1, warmup=0, profile=False,
                    memory_limit_bytes=need)
    rr = run_session(p, {"x": np.ones(1, np.float32)}, runs=1, warmup=0, profile=False,
                     memory_limit_bytes=need + RUNTIME_HEADROOM_BYTES)  # --max-memory 1 GiB + the headroom
    assert len(rr.latencies_s) == 1
