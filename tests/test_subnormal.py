"""Softmax underflow and subnormal probabilities (issue 30, item 4: Swin's shifted-window blocks).

The counts are derived from named dims: B windows, H heads, S tokens, a mask above the diagonal (row i
masks columns i+1..S-1), 16-lane vectors along each row (onnxperf.cost.subnormal.LANES)."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxperf
from onnxperf.cost.subnormal import LANES, LN_MIN_NORMAL, LN_ROUNDS_TO_ZERO, MAX_ELEMENTS, underflows
from onnxperf.hardware import load_spec
from onnxperf.insights.advice import node_why
from onnxperf.predict.roofline import roofline
from onnxperf.products.calibration import run as calib_run
from onnxperf.products.calibration.suite import SUBNORMAL_MASK, SUBNORMAL_SHAPE, subnormal_case

ROOT = Path(__file__).resolve().parents[1]
F = TensorProto.FLOAT


def _attention(b, h, s, d, mask_value, opset=17, via_where=False, mask_input=False):
    """softmax(x + M) @ v, M = mask_value above the diagonal (or Where(causal, x, mask_value))."""
    causal = np.triu(np.ones((s, s), dtype=bool), 1)
    inits, nodes, inputs = [], [], [helper.make_tensor_value_info("x", F, [b, h, s, s]),
                                   helper.make_tensor_value_info("v", F, [b, h, s, d])]
    if via_where:
        inits += [numpy_helper.from_array(~causal, "keep"),
                  numpy_helper.from_array(np.array(mask_value, dtype=np.float32), "fill")]
        nodes.append(helper.make_node("Where", ["keep", "x", "fill"], ["scores"]))
    elif mask_input:  # GPT-2's: (1 - attention_mask) * -1e4 from an int64 input, plus a causal mask
        inputs.append(helper.make_tensor_value_info("attention_mask", TensorProto.INT64, [b, 1, 1, s]))
        inits += [numpy_helper.from_array(np.array(1.0, np.float32), "one"),
                  numpy_helper.from_array(np.array(mask_value, np.float32), "big"),
                  numpy_helper.from_array(np.where(causal, np.float32(mask_value), np.float32(0)), "causal")]
        nodes += [helper.make_node("Cast", ["attention_mask"], ["am"], to=F),
                  helper.make_node("Sub", ["one", "am"], ["inv"]),
                  helper.make_node("Mul", ["inv", "big"], ["pad"]),
                  helper.make_node("Add", ["x", "pad"], ["s0"]),
                  helper.make_node("Add", ["s0", "causal"], ["scores"])]
    else:
        inits.append(numpy_helper.from_array(np.where(causal, np.float32(mask_value), np.float32(0)), "mask"))
        nodes.append(helper.make_node("Add", ["x", "mask"], ["scores"]))
    axis = {"axis": -1} if opset >= 13 else {"axis": 3}
    nodes += [helper.make_node("Softmax", ["scores"], ["p"], **axis), helper.make_node("MatMul", ["p", "v"], ["y"])]
    g = helper.make_graph(nodes, "attn", inputs, [helper.make_tensor_value_info("y", F, [b, h, s, d])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def _causal_vectors(s: int) -> int:
    """16-lane vectors of one S x S causal matrix holding a masked element: row i masks columns i+1..S-1,
    so vector c (columns 16c..16c+15) holds one when its last column min(16c+15, S-1) is past i."""
    return sum(1 for i in range(s) for c in range(math.ceil(s / LANES)) if min(LANES * c + LANES - 1, s - 1) > i)


def test_thresholds_are_the_float32_limits():
    assert np.float32(math.exp(LN_MIN_NORMAL)) == np.finfo(np.float32).tiny  # 2^-126
    assert LN_ROUNDS_TO_ZERO == pytest.approx(-150 * math.log(2))


@pytest.mark.parametrize("b,h,s,d", [(2, 3, 49, 32), (1, 4, 20, 40)])
def test_a_mask_of_minus_100_writes_subnormal_probabilities(b, h, s, d):
    """exp(-100) = 3.7e-44 lies between 2^-150 and 2^-126: every masked probability is subnormal, and
    the MatMul reading them does ceil(D / 16) vector operations per subnormal element."""
    a = onnxperf.analyze(_attention(b, h, s, d, -100.0))
    (u,) = underflows(a).found
    masked = b * h * s * (s - 1) // 2
    vectors = b * h * _causal_vectors(s)
    assert (u.elements, u.underflow, u.subnormal) == (b * h * s * s, masked, masked)
    assert (u.underflow_vectors, u.subnormal_vectors) == (vectors, vectors)
    assert u.assists == 3 * vectors
    (key, ops), = u.readers
    assert a.main_nodes[int(key)].op_type == "MatMul" and ops == masked * math.ceil(d / LANES)


@pytest.mark.parametrize("fill", [-1e4, float(np.finfo(np.float32).min), -math.inf])
def test_a_mask_far_below_underflows_to_zero(fill):
    """exp(d) < 2^-150 rounds to zero: the Softmax still takes an assist per vector computing it, the
    MatMul reads zeros (no readers)."""
    b, h, s, d = 1, 2, 33, 16
    a = onnxperf.analyze(_attention(b, h, s, d, fill, via_where=fill != -1e4))
    (u,) = underflows(a).found
    assert (u.underflow, u.subnormal, u.subnormal_vectors) == (b * h * s * (s - 1) // 2, 0, 0)
    assert u.underflow_vectors == b * h * _causal_vectors(s) and u.readers == () and u.assists == u.underflow_vectors


@pytest.mark.parametrize("fill", [0.0, -30.0, -87.0])
def test_a_mask_within_the_normal_range_is_not_reported(fill):
    """exp(-87) = 1.6e-38 is still normal (>= 2^-126 = 1.18e-38)."""
    assert underflows(onnxperf.analyze(_attention(1, 2, 20, 16, fill))).found == ()


def test_a_mask_input_is_taken_as_all_ones():
    """(1 - attention_mask) * -1e4 adds nothing when the mask input is all ones (validate's inputs);
    the causal part still underflows; the assumption is named."""
    s = 24
    res = underflows(onnxperf.analyze(_attention(1, 2, s, 16, -1e4, mask_input=True)))
    (u,) = res.found
    assert u.underflow == 2 * s * (s - 1) // 2 and res.assumed == ("attention_mask",)


def test_an_opset_11_softmax_coerces_its_input_to_2d():
    """Before opset 13 Softmax(axis=3) normalizes over the flattened dims from axis 3: the rows are the same."""
    b, h, s = 1, 2, 20
    (u,) = underflows(onnxperf.analyze(_attention(b, h, s, 16, -100.0, opset=11))).found
    assert u.subnormal == b * h * s * (s - 1) // 2 and u.subnormal_vectors == b * h * _causal_vectors(s)


def test_an_input_over_the_size_limit_is_reported_not_evaluated():
    s = 4096
    h = MAX_ELEMENTS // (s * s) + 1
    res = underflows(onnxperf.analyze(_attention(1, h, s, 16, -100.0)))
    assert res.found == () and len(res.not_evaluated) == 1 and "elements" in res.not_evaluated[0][1]


def test_the_evaluation_at_the_size_limit_stays_within_the_value_budget():
    """Issue 28's budget: what Python and numpy allocate evaluating a Softmax input of MAX_ELEMENTS elements
    (tracemalloc's peak) stays under 64 MiB."""
    import tracemalloc

    s = 1024
    h = MAX_ELEMENTS // (s * s)
    a = onnxperf.analyze(_attention(1, h, s, 16, -100.0))
    tracemalloc.start()
    try:
        (u,) = underflows(a).found
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert u.elements == MAX_ELEMENTS and u.subnormal == h * s * (s - 1) // 2
    assert peak < 64 << 20, f"{peak / 2**20:.1f} MiB"


def _swin_masked(windows_per_side: int, window: int = 7, shift: int = 3) -> int:
    """Masked pairs of torchvision's shifted-window attention on a square map of windows_per_side x
    windows_per_side windows: along each axis the last window splits into regions of window - shift and
    shift tokens (the others lie in one region); a window's tokens are labelled by (row region, column
    region) and a pair of different labels is masked."""
    total = 0
    for wr in range(windows_per_side):
        for wc in range(windows_per_side):
            rows = [window] if wr < windows_per_side - 1 else [window - shift, shift]
            cols = [window] if wc < windows_per_side - 1 else [window - shift, shift]
            same = sum((r * c) ** 2 for r in rows for c in cols)
            total += (window * window) ** 2 - same
    return total


def test_swin_t_shifted_window_masks_from_the_window_geometry():
    """torchvision Swin-T at 224x224: the shifted blocks of stages 1, 2, 3 (56/28/14 tokens a side, 7x7
    windows, shift 3, 3/6/12 heads; stage 4's one window is not shifted) add -100 between regions:
    every masked probability is subnormal and the next MatMul (head width 32) reads each twice."""
    a = onnxperf.analyze(ROOT / "models/corpus/swin_t_torch.onnx", dims={"batch": 1})
    found = underflows(a).found
    expected = [_swin_masked(8) * 3, _swin_masked(4) * 6, *[_swin_masked(2) * 12] * 3]
    assert [u.subnormal for u in found] == expected == [54720, 52992, 49536, 49536, 49536]
    assert all(u.underflow == u.subnormal and u.readers[0][1] == 2 * u.subnormal for u in found)
    assert all(a.main_nodes[int(u.readers[0][0])].name.endswith("attn/MatMul_2") for u in found)


def test_gpt2_causal_mask_underflows_to_zero():
    """The corpus GPT-2 (4 heads, sequence 128): Where(causal & mask, 0, float32 min) added to the scores."""
    a = onnxperf.analyze(ROOT / "models/corpus/gpt2_torch_legacy.onnx", dims={"batch": 1, "sequence": 128})
    res = underflows(a)
    assert [(u.underflow, u.subnormal) for u in res.found] == [(4 * 128 * 127 // 2, 0)] * 4
    assert res.assumed == ("attention_mask",)


def _spec(assist_s=None):
    base = load_spec("xeon-silver-4210x2")
    eff = {"matmul.compute": 0.8, "overhead_s": 1e-6}
    if assist_s is not None:
        eff["subnormal.assist_s"] = assist_s
    return dataclasses.replace(base, efficiency=eff, efficiency_sources={})


def test_the_roofline_adds_the_assists_to_the_nodes_that_take_them():
    """t' = t + A·a on the Softmax (its own assists) and the MatMul (its reads); nothing without the constant."""
    b, h, s, d = 2, 3, 49, 32
    a = onnxperf.analyze(_attention(b, h, s, d, -100.0))
    (u,) = underflows(a).found
    assist = 5e-8
    plain = {r.key: r for r in roofline(a, _spec()).nodes}
    rl = roofline(a, _spec(assist))
    with_ = {r.key: r for r in rl.nodes}
    mm = u.readers[0][0]
    assert with_[u.key].assist_s == pytest.approx(u.assists * assist)
    assert with_[mm].assist_s == pytest.approx(b * h * s * (s - 1) // 2 * 2 * assist)
    for k in (u.key, mm):
        assert with_[k].time_s == pytest.approx(plain[k].time_s + with_[k].assist_s)
        assert with_[k].compute_s == pytest.approx(plain[k].compute_s + with_[k].assist_s)
        assert plain[k].assist_s == 0.0
    assert rl.assist_s == pytest.approx((u.assists + u.reader_assists) * assist)
    assert rl.to_dict()["subnormal_assist_s"] == pytest.approx(rl.assist_s)
    assert "session.set_denormal_as_zero" in node_why(with_[mm], _spec(assist))


def test_the_calibration_pair_and_the_assist_arithmetic(monkeypatch, tmp_path):
    """subnormal.assist_s = (t(-95) - t(0)) / A, A counted on the masked twin by the same function the
    roofline uses; None when the difference is within 10% of the clean time (no assists to see)."""
    b, h, s, d = SUBNORMAL_SHAPE
    path = tmp_path / "m.onnx"
    onnx.save(subnormal_case(SUBNORMAL_MASK).model, str(path))
    (u,) = underflows(onnxperf.analyze(path)).found
    count = u.assists + u.reader_assists
    vectors = b * h * _causal_vectors(s)
    assert count == 3 * vectors + b * h * s * (s - 1) // 2 * math.ceil(d / LANES)
    assert underflows(onnxperf.analyze(_save(subnormal_case(0.0).model, tmp_path / "c.onnx"))).found == ()

    times = {}

    class Timing:
        def __init__(self, t):
            self.op_type, self.typical_s_per_run = "MatMul", t

    class Result:
        def __init__(self, t):
            self.node_timings = [Timing(t)]

    def fake_run(p, feeds, **kw):
        return Result(times["masked" if "mask-95" in Path(p).name else "clean"])

    monkeypatch.setattr(calib_run, "run_session", fake_run)
    times.update(clean=1e-3, masked=1e-3 + count * 6e-8)
    assert calib_run.subnormal_assist(tmp_path, runs=1, warmup=0, threads=None, opt="all") == pytest.approx(6e-8)
    times.update(masked=1.05e-3)
    assert calib_run.subnormal_assist(tmp_path, runs=1, warmup=0, threads=None, opt="all") is None


def _save(m, p):
    onnx.save(m, str(p))
    return p


def test_the_text_summary_says_what_the_assists_cost(tmp_path, capsys):
    from onnxperf.cli import main as cli_main
    from onnxperf.hardware.files import to_toml
    from onnxperf.ui.numbers import seconds

    spec = _spec(5e-8)
    (tmp_path / "spec.toml").write_text(to_toml(spec))
    onnx.save(_attention(2, 3, 49, 32, -100.0), str(tmp_path / "m.onnx"))
    assert cli_main(["summary", str(tmp_path / "m.onnx"), "--hw", str(tmp_path / "spec.toml")]) == 0
    line = next(ln for ln in capsys.readouterr().out.splitlines() if "Subnormal values:" in ln)
    rl = roofline(onnxperf.analyze(tmp_path / "m.onnx"), spec)
    assert "2 nodes" in line and seconds(rl.assist_s) in line and "set_denormal_as_zero" in line


def test_a_mask_too_large_to_evaluate_is_said_in_the_plan_and_the_text(tmp_path, capsys):
    """Unknown is not zero: on a spec that prices assists, a Softmax whose input is over the limit is counted
    (RooflineResult.assists_unknown, JSON subnormal_not_evaluated) and the text says its assists are left out."""
    from onnxperf.cli import main as cli_main
    from onnxperf.hardware.files import to_toml

    s = 4096
    h = MAX_ELEMENTS // (s * s) + 1
    m = _attention(1, h, s, 16, -100.0)
    a = onnxperf.analyze(m)
    rl = roofline(a, _spec(5e-8))
    assert rl.assists_unknown == 1 and rl.to_dict()["subnormal_not_evaluated"] == 1
    assert roofline(a, _spec()).assists_unknown == 0  # a spec without the constant prices none
    (tmp_path / "spec.toml").write_text(to_toml(_spec(5e-8)))
    onnx.save(m, str(tmp_path / "m.onnx"))
    assert cli_main(["summary", str(tmp_path / "m.onnx"), "--hw", str(tmp_path / "spec.toml")]) == 0
    assert "1 Softmax node not evaluated" in capsys.readouterr().out
