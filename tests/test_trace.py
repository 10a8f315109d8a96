"""The timeline (``--trace``): Chrome trace-event JSON of the predicted schedule and the measured one.

Every test loads the rendered text back with ``json.loads``, as Perfetto and chrome://tracing do,
and checks the layout there: every main-graph node once per process, in the analysis's order,
slices end to end from 0, durations adding up to the latency the summary reports."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from onnxperf.products import trace as tr
from onnxperf.base.errors import OptionError
from onnxperf.hardware import load_spec
from onnxperf.predict.roofline import roofline
from onnxperf.analysis.compose import summarize
from onnxperf.cost.request import Request

from .report_util import RESNET, FakeSpec, FakeValidation, injection_model, summary_of
from .util import const, model, vi

F32 = TensorProto.FLOAT


def _load(trace: dict) -> dict:
    text = tr.render_trace(trace)
    text.encode("utf-8")  # valid UTF-8 (a lone surrogate would raise here)
    assert text.endswith("\n")
    return json.loads(text)


def _slices(t: dict, pid: int) -> list[dict]:
    """The node and runtime slices of a process, in schedule order (the name-scope slices left out)."""
    return [e for e in t["traceEvents"] if e["ph"] == "X" and e["pid"] == pid and e.get("cat") != "scope"]


def _scope_slices(t: dict) -> list[dict]:
    return [e for e in t["traceEvents"] if e["ph"] == "X" and e.get("cat") == "scope"]


def _nodes(t: dict, pid: int) -> list[dict]:
    return [e for e in _slices(t, pid) if "key" in e["args"]]


def _check_layout(t: dict, pid: int) -> None:
    """From ts 0, each slice starting where the one before ends (within the 6-decimal rounding)."""
    s = _slices(t, pid)
    assert s and s[0]["ts"] == 0
    for a, b in zip(s, s[1:]):
        assert a["dur"] >= 0
        assert b["ts"] == pytest.approx(a["ts"] + a["dur"], abs=2e-6)


def _check_format(t: dict) -> None:
    """What the trace-event format (and Perfetto's JSON importer) expects of each event."""
    assert isinstance(t["traceEvents"], list) and t["displayTimeUnit"] in ("ms", "ns")
    assert t["otherData"]["schema"] == "onnxperf.trace/1"
    number = (int, float)
    for e in t["traceEvents"]:
        assert e["ph"] in ("X", "M") and isinstance(e["name"], str) and isinstance(e["args"], dict)
        assert type(e["pid"]) is int and type(e["tid"]) is int
        assert isinstance(e["ts"], number) and not isinstance(e["ts"], bool) and e["ts"] >= 0
        if e["ph"] == "X":
            assert isinstance(e["dur"], number) and e["dur"] >= 0 and math.isfinite(e["dur"])
            assert isinstance(e["cat"], str) and e["cat"]
        else:
            assert e["name"] in ("process_name", "thread_name", "process_sort_index")
    names = {(e["pid"], e["name"]): e["args"] for e in t["traceEvents"] if e["ph"] == "M"}
    for pid in {e["pid"] for e in t["traceEvents"]}:
        assert isinstance(names[(pid, "process_name")]["name"], str)
        assert isinstance(names[(pid, "thread_name")]["name"], str)


def _check_predicted(sm, t: dict) -> None:
    """Every main-graph node once, in the analysis's order, the durations adding up to the latency; the
    nodes with no work on their own thread; each name scope spanning exactly a run of its nodes."""
    _check_format(t)
    _check_layout(t, tr.PREDICTED_PID)
    nodes = _nodes(t, tr.PREDICTED_PID)
    for e in nodes:
        assert (e["tid"] == tr.IDLE_TID) == (e["dur"] == 0 and "uncosted" not in e["args"]
                                            and e["args"].get("predicted_s") == 0), e
    work = [e for e in nodes if e["tid"] == tr.TID]
    names = {n.key: n.name for n in sm.main_nodes}
    for sc in _scope_slices(t):
        inside = [e for e in work if e["dur"] > 0 and e["ts"] >= sc["ts"] - 2e-6
                  and e["ts"] + e["dur"] <= sc["ts"] + sc["dur"] + 2e-6]
        assert len(inside) == sc["args"]["nodes"] > 1
        assert all(names[e["args"]["key"]].lstrip("/").startswith(sc["name"] + "/") for e in inside)
    assert [e["args"]["key"] for e in nodes] == [n.key for n in sm.main_nodes]
    assert [e["name"] for e in nodes] == [n.op_type for n in sm.main_nodes]
    total = sum(e["dur"] for e in _slices(t, tr.PREDICTED_PID))
    assert total == pytest.approx(sm.roofline.latency_s * 1e6, rel=1e-9, abs=1e-5)
    for e, r in zip(nodes, sm.roofline.nodes):
        if r.time_s is not None:
            assert e["dur"] == pytest.approx(r.time_s * 1e6, abs=2e-6)
            assert e["args"]["predicted_s"] == pytest.approx(r.time_s, rel=1e-8)


def _three_nodes(extra_op: str = "Custom") -> onnx.ModelProto:
    """MatMul -> Add -> an op no rule knows -> Relu: b x m x k by k x n."""
    b, m, k, n = 2, 16, 32, 8
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"),
             helper.make_node("Add", ["h", "c"], ["a"], name="add"),
             helper.make_node(extra_op, ["a"], ["u"], name="mystery", domain="acme"),
             helper.make_node("Relu", ["u"], ["y"], name="relu")]
    return model(nodes, [vi("x", [b, m, k])], [vi("y", None)], [const("w", [k, n]), const("c", [n])],
                 extra_opsets={"acme": 1})


# -- predicted -----------------------------------------------------------------------------------------

def test_small_model_every_node_once_in_order_and_uncosted_is_zero_length():
    sm = summary_of(_three_nodes(), hw=FakeSpec())
    t = _load(tr.build_trace(sm))
    _check_predicted(sm, t)
    mm, add, mystery, relu = _nodes(t, tr.PREDICTED_PID)
    b, m, k, n = 2, 16, 32, 8
    assert mm["args"]["macs"] == b * m * n * k and mm["args"]["flops"] == 2 * b * m * n * k
    assert mm["args"]["bytes_read"] == 4 * (b * m * k + k * n) and mm["args"]["bytes_written"] == 4 * b * m * n
    assert mm["args"]["bound"] in ("compute", "memory") and mm["cat"] == f"matmul,{mm['args']['bound']}"
    assert mm["args"]["name"] == "mm" and mystery["args"]["domain"] == "acme"
    # unknown is not zero: present once, no time, flagged, the whole marked partial
    assert mystery["dur"] == 0 and mystery["args"]["predicted_s"] is None
    assert mystery["args"]["bound"] == "unknown" and mystery["args"]["uncosted"].startswith("unsupported")
    # the op's output shape is unknown too, so the Relu after it cannot be costed either
    assert relu["dur"] == 0 and relu["args"]["uncosted"].startswith("unknown_shape")
    for node in (mystery, relu):  # their costs are unknown, not 0
        assert all(node["args"][f] is None for f in ("macs", "flops", "int_ops", "bytes_read", "bytes_written"))
    assert relu["ts"] == mystery["ts"] == pytest.approx(add["ts"] + add["dur"])
    assert t["otherData"]["complete"] is False and t["otherData"]["uncosted_nodes"] == 2
    assert t["otherData"]["latency_is_lower_bound"] is True  # an uncosted node: the time leaves it out
    assert t["otherData"]["plain_roofline"] is True  # and the roofline is a plain one (an estimate)
    name = {e["args"]["name"] for e in t["traceEvents"] if e["ph"] == "M" and e["name"] == "process_name"}
    assert name == {"predicted (Fake GPU <b>test</b>)"}
    assert _slices(t, tr.MEASURED_PID) == []


def test_no_roofline_is_a_one_line_option_error():
    with pytest.raises(OptionError, match="--trace needs --hw") as e:
        tr.build_trace(summary_of(_three_nodes()))
    assert "\n" not in str(e.value)


def test_resnet50_on_a100_gpu_kernels_and_byte_identical_json():
    sm = summarize(RESNET, dims={"batch": 1}, hw="a100-80gb")
    t = _load(tr.build_trace(sm))
    _check_predicted(sm, t)
    nodes = _nodes(t, tr.PREDICTED_PID)
    assert len(nodes) == len(sm.main_nodes) == 122
    by_key = {e["args"]["key"]: e for e in nodes}
    order = {k: i for i, k in enumerate(by_key)}
    members = [e for e in nodes if "fused_into" in e["args"]]
    assert members, "the GPU kernel model fuses ResNet's ReLUs and residual Adds into the convs"
    for e in members:
        root = by_key[e["args"]["fused_into"]]
        assert e["args"]["fusion"] == "gpu kernel" and "fused_into" not in root["args"]
        assert e["args"]["key"] in root["args"]["fused_members"]
        assert order[root["args"]["key"]] < order[e["args"]["key"]]  # a kernel starts at its first node
    assert {by_key[e["args"]["fused_into"]]["name"] for e in members} == {"Conv"}
    flat = [e for e in nodes if e["name"] == "Flatten"]
    assert flat[0]["dur"] == 0 and flat[0]["args"]["fusion"] == "no kernel"
    # a kernel pays its launch once, at the node that starts it
    assert all(e["args"]["dispatch_s"] > 0 for e in nodes if "fused_members" in e["args"])
    assert all(e["args"]["dispatch_s"] == 0 for e in members)
    again = summarize(RESNET, dims={"batch": 1}, hw="a100-80gb")
    assert tr.render_trace(tr.build_trace(again)) == tr.render_trace(tr.build_trace(sm))


def _cpu_spec(**eff):
    """A CPU preset with a calibrated spec's fusion and overhead keys."""
    return dataclasses.replace(load_spec("epyc-9654"), efficiency=eff)


def _with_spec(sm, spec):
    """``sm`` with the roofline of ``spec`` (a spec made in the test, not a file ``--hw`` names)."""
    return dataclasses.replace(sm, spec=spec, roofline=roofline(sm, spec))


def _pad_conv_mul_relu() -> onnx.ModelProto:
    """Pad(0) -> Conv -> Mul(per-channel constant) -> Relu -> Softmax: onnxruntime moves the Pad into
    the Conv's pads, folds the Mul into its weights and runs the Relu in its epilogue."""
    c = 8
    nodes = [helper.make_node("Pad", ["x", "pads"], ["p"], name="pad"),
             helper.make_node("Conv", ["p", "w"], ["c"], name="conv"),
             helper.make_node("Mul", ["c", "s"], ["m"], name="scale"),
             helper.make_node("Relu", ["m"], ["r"], name="relu"),
             helper.make_node("Softmax", ["r"], ["y"], name="softmax")]
    inits = [const("pads", [8], TensorProto.INT64, [0, 0, 1, 1, 0, 0, 1, 1]), const("w", [c, 3, 3, 3]),
             const("s", [c, 1, 1])]
    return model(nodes, [vi("x", [1, 3, 32, 32])], [vi("y", None)], inits)


def test_cpu_fusions_named_in_args_and_run_overhead_closes_the_schedule(tmp_path):
    p = tmp_path / "fused.onnx"
    onnx.save(_pad_conv_mul_relu(), str(p))
    sm = _with_spec(summarize(p, hw=None), _cpu_spec(**{
        "fusion.epilogue": 1.0, "overhead_s": 1e-6, "overhead_run_s": 3e-6}))
    t = _load(tr.build_trace(sm))
    _check_predicted(sm, t)
    pad, conv, mul, relu, softmax = _nodes(t, tr.PREDICTED_PID)
    assert conv["args"]["fused_members"] == [pad["args"]["key"], mul["args"]["key"], relu["args"]["key"]]
    for e, kind in ((pad, "absorbed"), (mul, "absorbed"), (relu, "epilogue")):
        assert e["args"]["fusion"] == kind and e["args"]["fused_into"] == conv["args"]["key"]
    assert pad["dur"] == 0 and mul["dur"] == 0 and relu["dur"] > 0  # an epilogue keeps its arithmetic
    assert relu["args"]["dispatch_s"] == 0 and conv["args"]["dispatch_s"] == pytest.approx(1e-6)
    assert "fusion" not in softmax["args"]
    last = _slices(t, tr.PREDICTED_PID)[-1]
    assert last["name"] == tr.RUN_OVERHEAD and "key" not in last["args"]
    assert last["dur"] == pytest.approx(3.0, abs=1e-6) and last["ts"] == pytest.approx(softmax["ts"] + softmax["dur"])
    # a node whose 1 µs dispatch is at least its work is dispatch-bound, and says so in its category
    tiny = [e for e in _nodes(t, tr.PREDICTED_PID) if e["args"]["bound"] == "dispatch"]
    assert tiny and all(e["args"]["dispatch_s"] * 2 >= e["args"]["predicted_s"] for e in tiny)
    assert all(e["cat"].endswith(",dispatch") for e in tiny)


def test_qdq_and_skip_layer_norm_members_point_at_their_own_kernel():
    """A DequantizeLinear feeding a QLinearConv may read the previous conv's QuantizeLinear, and a
    SkipLayerNormalization's Add the previous one's output: each belongs to the kernel it feeds."""
    from onnxperf.predict.tensors import links

    spec = _cpu_spec(**{"fusion.epilogue": 1.0})
    for path, dims, op in (("models/corpus/resnet18_qdq.onnx", None, "QLinearConv"),
                           ("models/corpus/bert_torch_dynamo18.onnx", {"batch": 1, "sequence": 16},
                            "SkipLayerNormalization")):
        sm = _with_spec(summarize(RESNET.parent / path.split("/", 1)[1], dims=dims, hw=None), spec)
        t = _load(tr.build_trace(sm))
        _check_predicted(sm, t)
        producer, users = links(sm.main_nodes)
        by_key = {n.key: n for n in sm.main_nodes}
        inside = [e for e in _nodes(t, tr.PREDICTED_PID) if e["args"].get("fusion") == f"inside {op}"]
        assert inside
        for e in inside:
            n, root = by_key[e["args"]["key"]], by_key[e["args"]["fused_into"]]
            assert e["dur"] == 0
            fed = {u.key for o in n.outputs if o is not None for u in users.get(o.name, ())}
            feeds_root = root.key in fed or any(
                root.key in {u.key for o in by_key[k].outputs for u in users.get(o.name, ())} for k in fed)
            reads_root = any(i is not None and producer.get(i.name) is root for i in n.inputs)
            if n.op_type == "QuantizeLinear":
                assert reads_root
            else:
                assert feeds_root
            assert e["args"]["key"] in _nodes_by_key(t)[root.key]["args"]["fused_members"]


def _nodes_by_key(t: dict) -> dict[str, dict]:
    return {e["args"]["key"]: e for e in _nodes(t, tr.PREDICTED_PID)}


def test_if_node_holds_its_branches_in_one_slice():
    then = helper.make_graph([helper.make_node("Relu", ["x"], ["t"]), helper.make_node("Neg", ["t"], ["o"])],
                             "then", [], [vi("o", [4, 8])])
    other = helper.make_graph([helper.make_node("Sigmoid", ["x"], ["o2"])], "else", [], [vi("o2", [4, 8])])
    nodes = [helper.make_node("Relu", ["x0"], ["x"], name="pre"),
             helper.make_node("If", ["cond"], ["y"], name="branch", then_branch=then, else_branch=other)]
    m = model(nodes, [vi("x0", [4, 8]), vi("cond", [], TensorProto.BOOL)], [vi("y", [4, 8])])
    sm = summary_of(m, hw=FakeSpec())
    t = _load(tr.build_trace(sm))
    _check_predicted(sm, t)
    pre, branch = _nodes(t, tr.PREDICTED_PID)
    assert branch["name"] == "If" and branch["args"]["subgraph_nodes"] == 3 and "partial" not in branch["args"]
    assert len(sm.nodes) == 5  # the three body nodes are analyzed, and timed within the If


def test_names_from_the_model_stay_plain_strings_and_valid_utf8():
    m = injection_model()
    sm = summary_of(m, dims={"batch": 2}, hw=FakeSpec())
    t = _load(tr.build_trace(sm))
    _check_predicted(sm, t)
    assert [e["args"]["name"] for e in _nodes(t, tr.PREDICTED_PID)] == [n.name for n in m.graph.node]
    assert _nodes(t, tr.PREDICTED_PID)[-1]["name"] == "<b onmouseover=alert(1)>Evil</b>"
    text = tr.render_trace({"traceEvents": [{"ph": "X", "name": "bad \ud800 name ü", "ts": 0.0, "dur": float("nan"),
                                             "pid": 1, "tid": 1, "cat": "x", "args": {}}], "displayTimeUnit": "ms",
                            "otherData": {}})
    back = json.loads(text.encode("utf-8"))
    assert back["traceEvents"][0]["name"] == "bad ? name ü" and back["traceEvents"][0]["dur"] is None


# -- measured -----------------------------------------------------------------------------------------

def test_fake_validation_per_node_times_and_the_rest_of_the_latency():
    sm = summary_of(_three_nodes("Softsign2"), hw=FakeSpec())
    keys = [n.key for n in sm.main_nodes]
    times = {keys[0]: 4e-6, keys[1]: 1e-6, keys[3]: 2e-6}  # no time for the third node
    t = _load(tr.build_trace(sm, FakeValidation(times, latency_s=10e-6)))
    _check_format(t)
    _check_layout(t, tr.MEASURED_PID)
    nodes = _nodes(t, tr.MEASURED_PID)
    assert [e["args"]["key"] for e in nodes] == keys
    assert [e["dur"] for e in nodes] == [4.0, 1.0, 0.0, 2.0]
    assert nodes[2]["args"]["not_measured"]
    rest = _slices(t, tr.MEASURED_PID)[-1]
    assert rest["name"] == tr.OUTSIDE and rest["dur"] == pytest.approx(3.0)
    assert sum(e["dur"] for e in _slices(t, tr.MEASURED_PID)) == pytest.approx(10.0)
    names = {e["pid"]: e["args"]["name"] for e in t["traceEvents"] if e["name"] == "process_name"}
    assert names[tr.MEASURED_PID] == "measured (onnxruntime, CPUExecutionProvider)"
    assert t["otherData"]["measured_latency_s"] == pytest.approx(10e-6)


def test_report_mapping_groups_one_slice_naming_their_nodes():
    sm = summary_of(_three_nodes("Softsign2"), hw=FakeSpec())
    k = [n.key for n in sm.main_nodes]
    v = {"latency_s": 9e-6, "provider": "CPUExecutionProvider", "device": "onnxruntime 1.32.0, opt=all",
         "groups": [{"keys": [k[1], k[0]], "measured_s": 5e-6}, {"keys": [k[2], k[3]], "measured_s": 3e-6}]}
    t = _load(tr.build_trace(sm, v))
    _check_layout(t, tr.MEASURED_PID)
    mm, add, mystery, relu = _nodes(t, tr.MEASURED_PID)
    assert mm["name"] == "MatMul+Add" and mm["args"]["nodes"] == [k[0], k[1]] and mm["dur"] == 5.0
    assert mm["args"]["node_names"] == ["mm", "add"]
    assert add["dur"] == 0 and add["args"]["measured_in"] == k[0]
    assert mystery["name"] == "Softsign2+Relu" and relu["args"]["measured_in"] == k[2]
    names = {e["pid"]: e["args"]["name"] for e in t["traceEvents"] if e["name"] == "process_name"}
    assert names[tr.MEASURED_PID] == "measured (onnxruntime 1.32.0, opt=all, CPUExecutionProvider)"


def test_validation_of_another_model_is_refused():
    sm = summary_of(_three_nodes(), hw=FakeSpec())
    with pytest.raises(OptionError, match="another model"):
        tr.build_trace(sm, FakeValidation({"99": 1e-6}, latency_s=1e-5))


def _tiny_runnable() -> onnx.ModelProto:
    """Conv -> Relu (one fused kernel in onnxruntime) -> Mul, and a Shape it folds when it loads."""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((8, 3, 3, 3)).astype(np.float32), "w")
    s = numpy_helper.from_array(np.array([2.0], np.float32), "s")
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("Mul", ["r", "s"], ["y"], name="mul"),
             helper.make_node("Shape", ["y"], ["sh"], name="shape")]
    g = helper.make_graph(nodes, "tiny", [vi("x", [1, 3, 16, 16])],
                          [vi("y", [1, 8, 16, 16]), vi("sh", [4], TensorProto.INT64)], [w, s])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 9
    return m


def test_real_validation_groups_fusions_and_folded_nodes(tmp_path):
    from onnxperf.products.validate.compare import validate

    p = tmp_path / "tiny.onnx"
    onnx.save(_tiny_runnable(), str(p))
    spec = _cpu_spec(**{"fusion.epilogue": 1.0, "fusion.constant_folding": 1.0, "overhead_s": 1e-6})
    v = validate(Request(p), spec, runs=2, warmup=0, progress=False)
    sm = _with_spec(summarize(p, hw=None), spec)
    t = _load(tr.build_trace(sm, v))
    _check_predicted(sm, t)
    _check_layout(t, tr.MEASURED_PID)
    nodes = _nodes(t, tr.MEASURED_PID)
    assert [e["args"]["key"] for e in nodes] == [n.key for n in sm.main_nodes]
    by_key = {e["args"]["key"]: e for e in nodes}
    for g in v.groups:
        first, *rest = [str(i) for i in g.original_node_ids]
        if g.folded:
            assert all(by_key[k]["dur"] == 0 and by_key[k]["args"]["folded"] for k in (first, *rest))
            continue
        assert by_key[first]["dur"] == pytest.approx(g.measured_s * 1e6, abs=1e-6)
        assert by_key[first]["args"]["nodes"] == [first, *rest]
        assert by_key[first]["args"]["measured_kernels"] == list(g.measured_names)
        assert all(by_key[k]["dur"] == 0 and by_key[k]["args"]["measured_in"] == first for k in rest)
    assert by_key["0"]["name"] == "Conv+Relu"  # onnxruntime's FusedConv / NCHWc conv with its activation
    assert by_key["3"]["args"]["folded"]  # the Shape of a static tensor: folded when the session is built
    names = {e["pid"]: e["args"]["name"] for e in t["traceEvents"] if e["name"] == "process_name"}
    assert names[tr.MEASURED_PID] == f"measured (onnxruntime {v.ort_version}, CPUExecutionProvider)"
    total = sum(e["dur"] for e in _slices(t, tr.MEASURED_PID))
    assert total == pytest.approx(max(v.latency.mean_s, v.measured_kernels_s) * 1e6, rel=1e-6)
    # predicted side: the same Shape folded by the spec's constant folding, the Relu in the conv's epilogue
    pred = _nodes_by_key(t)
    assert pred["3"]["args"]["fusion"] == "constant folding" and pred["3"]["dur"] == 0
    assert pred["1"]["args"]["fused_into"] == "0"


def test_write_trace_is_atomic_and_refuses_the_model(tmp_path):
    from onnxperf.ui import output

    p = tmp_path / "m.onnx"
    onnx.save(_three_nodes(), str(p))
    sm = summary_of(onnx.load(str(p)), hw=FakeSpec())
    out = tmp_path / "t.json"
    tr.write_trace(str(out), tr.build_trace(sm))
    assert json.loads(out.read_text(encoding="utf-8"))["traceEvents"]
    output.forget_inputs()
    output.note_input(p)
    try:
        with pytest.raises(OptionError, match="--trace .*is an input"):
            tr.write_trace(str(p), tr.build_trace(sm))
    finally:
        output.forget_inputs()
