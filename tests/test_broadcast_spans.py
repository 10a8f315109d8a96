"""Broadcast spans of onnxruntime's elementwise kernels (issue 30, item 4: the Keras exports' NHWC
normalization and squeeze-excite scales: an Add of [1, 224, 224, 3] + [3] takes 1.45 ms here where the same
Add without broadcasting takes 0.08). Counts derived from named dims."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxperf
from onnxperf.hardware import load_spec
from onnxperf.insights.advice import node_why
from onnxperf.predict.broadcast import node_spans, spans
from onnxperf.predict.roofline import roofline
from onnxperf.products.calibration import run as calib_run
from onnxperf.products.calibration.suite import BROADCAST_SHAPE, broadcast_case

F = TensorProto.FLOAT
H, W, C = 224, 224, 3


@pytest.mark.parametrize("out,ins,expected", [
    ((1, H, W, C), [(1, H, W, C), (C,)], H * W),            # NHWC normalization: a span per pixel
    ((1, C, H, W), [(1, C, H, W), (1, C, 1, 1)], C),         # NCHW squeeze-excite scale: a span per channel
    ((1, H, W, C), [(1, H, W, C), (1, 1, 1, C)], H * W),     # the same scale in NHWC
    ((1, H, W, C), [(1, H, W, C), (1, H, W, C)], 1),         # no broadcast: one span
    ((1, H, W, C), [(1, H, W, C), ()], 1),                   # a scalar: one span
    ((8, 128, 768), [(8, 128, 768), (768,)], 8 * 128),       # a bias: a span per row
    ((4, 1, 6), [(4, 1, 6), (1, 1, 6)], 4),                  # dims of 1 in the output are skipped
    ((2, 3, 5), [(2, 1, 5), (1, 3, 1)], 2 * 3),              # both broadcast: the innermost pattern's run
])
def test_spans_from_the_shapes(out, ins, expected):
    assert spans(out, ins) == expected


def _add(a_shape, b_shape, out_shape):
    g = helper.make_graph([helper.make_node("Add", ["a", "b"], ["y"], name="add")], "g",
                          [helper.make_tensor_value_info("a", F, list(a_shape)),
                           helper.make_tensor_value_info("b", F, list(b_shape))],
                          [helper.make_tensor_value_info("y", F, list(out_shape))])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def _spec(span_s=None):
    eff = {"elementwise.memory": 1.0, "overhead_s": 1e-6}
    if span_s is not None:
        eff["broadcast.span_s"] = span_s
    return dataclasses.replace(load_spec("xeon-silver-4210x2"), efficiency=eff, efficiency_sources={})


def test_the_roofline_adds_the_spans_to_the_overhead():
    """t' = t + S·s, o' = o + S·s; nothing without the constant or without a broadcast."""
    a = onnxperf.analyze(_add((1, H, W, C), (C,), (1, H, W, C)))
    (n,) = a.main_nodes
    assert node_spans(n) == H * W
    plain = roofline(a, _spec()).nodes[0]
    rl = roofline(a, _spec(20e-9))
    r = rl.nodes[0]
    assert r.span_s == pytest.approx(H * W * 20e-9) and rl.span_s == pytest.approx(r.span_s)
    assert r.time_s == pytest.approx(plain.time_s + r.span_s) and r.dispatch_s == pytest.approx(plain.dispatch_s + r.span_s)
    assert rl.to_dict()["broadcast_span_s"] == pytest.approx(r.span_s)
    assert "broadcast loop" in node_why(r, _spec(20e-9))
    same = onnxperf.analyze(_add((1, H, W, C), (1, H, W, C), (1, H, W, C)))
    assert roofline(same, _spec(20e-9)).nodes[0].span_s == 0.0


def _fake_runs(monkeypatch, op: str) -> dict:
    """calibration's onnxruntime runs replaced: the one node ``op`` of the broadcast pair takes
    ``times["rows"]`` or ``times["none"]`` (the dict returned, filled by the test)."""
    times: dict = {}

    class T:
        def __init__(self, t):
            self.op_type, self.typical_s_per_run = op, t

    class R:
        def __init__(self, t):
            self.node_timings = [T(t)]

    monkeypatch.setattr(calib_run, "run_session",
                        lambda p, feeds, **kw: R(times["rows" if "rows" in Path(p).name else "none"]))
    return times


def test_the_calibration_pair_and_the_span_arithmetic(monkeypatch, tmp_path):
    """broadcast.span_s = (t_S - t_1·Q_S/Q_1) / S: the broadcast case's traffic at the one-span case's rate."""
    rows, n = BROADCAST_SHAPE
    onnx.save(broadcast_case(True).model, str(tmp_path / "b.onnx"))
    (node,) = onnxperf.analyze(tmp_path / "b.onnx").main_nodes
    assert node_spans(node) == rows
    q_s, q_1 = 4 * (rows * n + n + rows * n), 4 * 3 * rows * n
    assert node.bytes_read + node.bytes_written == q_s
    times = _fake_runs(monkeypatch, "Add")

    times.update(none=3e-3, rows=3e-3 * q_s / q_1 + rows * 15e-9)
    assert calib_run.broadcast_span(tmp_path, runs=1, warmup=0, threads=None, opt="all") == pytest.approx(15e-9)
    times.update(rows=3e-3 * q_s / q_1)
    assert calib_run.broadcast_span(tmp_path, runs=1, warmup=0, threads=None, opt="all") is None


def test_the_text_summary_says_what_the_spans_and_assists_cost(tmp_path, capsys):
    """The summary's roofline section states the broadcast loops' and the subnormal assists' share of the
    node time, read from the plan (RooflineResult.span_s, .assist_s)."""
    from onnxperf.cli import main as cli_main
    from onnxperf.hardware.files import to_toml
    from onnxperf.ui.numbers import seconds

    spec = dataclasses.replace(_spec(20e-9), efficiency=dict(_spec(20e-9).efficiency) | {"subnormal.assist_s": 5e-8})
    (tmp_path / "spec.toml").write_text(to_toml(spec))
    onnx.save(_add((1, H, W, C), (C,), (1, H, W, C)), str(tmp_path / "m.onnx"))
    assert cli_main(["summary", str(tmp_path / "m.onnx"), "--hw", str(tmp_path / "spec.toml")]) == 0
    out = capsys.readouterr().out
    rl = roofline(onnxperf.analyze(tmp_path / "m.onnx"), spec)
    line = next(ln for ln in out.splitlines() if "Broadcast loops:" in ln)
    assert seconds(rl.span_s) in line and "1 node)" in line and rl.span_s == pytest.approx(H * W * 20e-9)
    assert "Subnormal values:" not in out  # no masked Softmax here


U8 = TensorProto.UINT8
MS = "com.microsoft"


def _qlinear_se(with_conv: bool, c=32, h=112, w=112):
    """A QOperator squeeze-excite scale QLinearMul(x[1, C, H, W], s[1, C, 1, 1]), after a QLinearConv 1x1
    (C -> C) when ``with_conv``: the graph onnxruntime's CPU provider runs channels-last."""
    scal = [numpy_helper.from_array(np.array(0.02, np.float32), "sc"), numpy_helper.from_array(np.array(128, np.uint8), "zp")]
    nodes, inits = [], list(scal)
    x = "x"
    if with_conv:
        inits.append(numpy_helper.from_array(np.ones((c, c, 1, 1), np.uint8), "wq"))
        nodes.append(helper.make_node("QLinearConv", ["x", "sc", "zp", "wq", "sc", "zp", "sc", "zp"], ["xc"]))
        x = "xc"
    nodes.append(helper.make_node("QLinearMul", [x, "sc", "zp", "s", "sc", "zp", "sc", "zp"], ["y"], domain=MS))
    g = helper.make_graph(nodes, "se", [helper.make_tensor_value_info("x", U8, [1, c, h, w]),
                                        helper.make_tensor_value_info("s", U8, [1, c, 1, 1])],
                          [helper.make_tensor_value_info("y", U8, [1, c, h, w])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)])
    m.ir_version = 8
    return m


def test_a_quantized_se_scale_in_a_graph_with_a_qlinearconv_runs_channels_last():
    """With a QLinearConv in the graph onnxruntime runs the QLinearMul on x[1, H, W, C] · s[1, 1, 1, C]: H·W
    spans of C (the NHWC transformer), each at the QLinear span cost; without one, C spans of H·W."""
    c, h, w = 32, 112, 112
    spec = dataclasses.replace(_spec(10e-9), efficiency={**_spec(10e-9).efficiency, "broadcast.qlinear.span_s": 30e-9})
    for with_conv, want in ((True, h * w), (False, c)):
        a = onnxperf.analyze(_qlinear_se(with_conv, c, h, w))
        mul = a.main_nodes[-1]
        assert mul.op_type == "QLinearMul"
        assert node_spans(mul, nhwc=with_conv) == want
        rl = roofline(a, spec)
        assert rl.nodes[-1].span_s == pytest.approx(want * 30e-9)
    # without the QLinear constant the float one is used
    a = onnxperf.analyze(_qlinear_se(True, c, h, w))
    assert roofline(a, _spec(10e-9)).nodes[-1].span_s == pytest.approx(h * w * 10e-9)


def test_the_quantized_calibration_pair_measures_a_qlinearmul_span(monkeypatch, tmp_path):
    """broadcast.qlinear.span_s comes from the same arithmetic on a uint8 QLinearMul pair (1 byte per element)."""
    rows, n = BROADCAST_SHAPE
    case = broadcast_case(True, quantized=True)
    assert case.name == "qbroadcast_rows" and case.family == "op.QLinearMul"
    onnx.save(case.model, str(tmp_path / "q.onnx"))
    (node,) = onnxperf.analyze(tmp_path / "q.onnx").main_nodes
    assert node.op_type == "QLinearMul" and node_spans(node) == rows
    times = _fake_runs(monkeypatch, "QLinearMul")

    moved = {}
    for b in (False, True):
        onnx.save(broadcast_case(b, quantized=True).model, str(tmp_path / "m.onnx"))
        (nd,) = onnxperf.analyze(tmp_path / "m.onnx").main_nodes
        moved[b] = nd.bytes_read + nd.bytes_written
    assert moved[False] - moved[True] == rows * n - n  # b: one uint8 row instead of x's shape
    # on one thread both kernels take the pool's one thread
    times.update(none=2e-4, rows=2e-4 * moved[True] / moved[False] + rows * 31e-9)
    assert calib_run.broadcast_span(tmp_path, runs=1, warmup=0, threads=1, opt="all",
                                    quantized=True) == pytest.approx(31e-9)
    # on two, the one-span case (rows x n = 1 Mi elements, over onnxruntime's 156,280) splits and the broadcast
    # of 65,536 spans runs on one thread (BroadcastLooper): its traffic takes twice the one-span case's rate
    times.update(none=2e-4, rows=2 * 2e-4 * moved[True] / moved[False] + rows * 31e-9)
    assert calib_run.broadcast_span(tmp_path, runs=1, warmup=0, threads=2, opt="all",
                                    quantized=True) == pytest.approx(31e-9)
