"""Rules of the rnn family (RNN, GRU, LSTM), expected values derived from named dimensions."""

import pytest
from onnx import TensorProto

from .util import const, cost, single

# ops per element of the activations, from their ONNX definitions: Sigmoid = neg, exp, add,
# div; Tanh, Relu = 1 elementary op; HardSigmoid = mul, add, min, max
SIG, TANH, RELU, HARD_SIG = 4, 1, 1, 4
# per hidden unit per step: the biases Wb + Rb are 2 adds per gate; a clip is a min and a max
# on each activation's input; LSTM peepholes are P·C for the i, f and o gates and their adds
BIAS_ADDS_PER_GATE, CLIP_OPS, PEEPHOLE_OPS = 2, 2, 3 + 3


def _inputs(seq, batch, i, h, gates, dirs, *, bias=True, peep=False, layout=0, lens=None):
    x = [batch, seq, i] if layout else [seq, batch, i]
    ins = {"x": x, "w": [dirs, gates * h, i], "r": [dirs, gates * h, h],
           "b": [dirs, 2 * gates * h] if bias else None}
    if lens is not None or peep:
        ins["lens"] = lens
    if peep:
        ins["h0"] = None
        ins["c0"] = None
        ins["p"] = [dirs, 3 * h]
    return ins


def test_lstm_forward_with_bias_and_peepholes():
    seq, batch, i, h, gates, dirs = 5, 2, 3, 4, 4, 1
    r = cost(single("LSTM", _inputs(seq, batch, i, h, gates, dirs, peep=True), ("y", "yh", "yc"), hidden_size=h))
    assert r.status == "counted" and r.exact
    assert r.outputs[0].shape == (seq, dirs, batch, h)
    macs = seq * dirs * batch * (i + h) * gates * h
    # f = Sigmoid on i, f, o; g = Tanh on c; h = Tanh on C; cell update C = f·C' + i·c,
    # H = o·h(C): 4 ops; 2 bias adds per gate; peepholes 6:
    # 3·4 + 1 + 1 + 4 + 2·4 + 6 = 32 ops per hidden unit per step
    per_unit = 3 * SIG + TANH + TANH + 4 + BIAS_ADDS_PER_GATE * gates + PEEPHOLE_OPS
    assert per_unit == 32
    assert r.macs == macs
    assert r.flops == 2 * macs + seq * dirs * batch * h * per_unit
    assert r.family == "rnn"


def test_lstm_bidirectional_without_bias_and_clip():
    seq, batch, i, h, gates, dirs = 3, 1, 6, 2, 4, 2
    m = single("LSTM", _inputs(seq, batch, i, h, gates, dirs, bias=False), ("y",), hidden_size=h,
               direction="bidirectional", clip=1.0)
    r = cost(m)
    macs = seq * dirs * batch * (i + h) * gates * h
    per_unit = 3 * SIG + 2 * TANH + 4 + CLIP_OPS * 5  # 5 activations clipped
    assert per_unit == 28
    assert r.macs == macs
    assert r.flops == 2 * macs + seq * dirs * batch * h * per_unit


@pytest.mark.parametrize("lbr", [0, 1])
def test_gru_linear_before_reset(lbr):
    seq, batch, i, h, gates, dirs = 4, 3, 5, 6, 3, 1
    r = cost(single("GRU", _inputs(seq, batch, i, h, gates, dirs), ("y", "yh"), hidden_size=h,
                    linear_before_reset=lbr))
    macs = seq * dirs * batch * (i + h) * gates * h
    # z, r: Sigmoid; h: Tanh; reset multiply 1 + (1 - z)·h + z·H' 4; bias 2 per gate
    per_unit = 2 * SIG + TANH + 5 + BIAS_ADDS_PER_GATE * gates + lbr
    assert r.macs == macs
    assert r.flops == 2 * macs + seq * dirs * batch * h * per_unit


def test_gru_custom_activations_per_direction():
    seq, batch, i, h, gates, dirs = 2, 1, 3, 4, 3, 2
    m = single("GRU", _inputs(seq, batch, i, h, gates, dirs, bias=False), ("y",), hidden_size=h,
               direction="bidirectional", activations=["Sigmoid", "Tanh", "HardSigmoid", "Relu"])
    r = cost(m)
    macs = seq * dirs * batch * (i + h) * gates * h
    fwd = 2 * SIG + TANH + 5
    bwd = 2 * HARD_SIG + RELU + 5
    assert r.flops == 2 * macs + seq * batch * h * (fwd + bwd)


def test_rnn_batch_first_layout_opset14():
    seq, batch, i, h, dirs = 7, 2, 3, 5, 1
    r = cost(single("RNN", _inputs(seq, batch, i, h, 1, dirs, layout=1), ("y", "yh"), hidden_size=h,
                    layout=1, opset=14))
    assert r.outputs[0].shape == (batch, seq, dirs, h)
    macs = seq * dirs * batch * (i + h) * h
    assert r.macs == macs
    assert r.flops == 2 * macs + seq * batch * h * (TANH + BIAS_ADDS_PER_GATE)


def test_sequence_lens_from_data_is_an_upper_bound():
    seq, batch, i, h = 4, 2, 3, 2
    ins = _inputs(seq, batch, i, h, 1, 1, lens=([batch], TensorProto.INT32))
    r = cost(single("RNN", ins, ("y",), hidden_size=h))
    assert not r.exact and "sequence_lens" in r.note
    assert r.macs == seq * batch * (i + h) * h


def test_constant_full_sequence_lens_stays_exact():
    seq, batch, i, h = 4, 2, 3, 2
    ins = _inputs(seq, batch, i, h, 1, 1, lens=([batch], TensorProto.INT32))
    m = single("RNN", ins, ("y",), hidden_size=h,
               inits=[const("lens", [batch], TensorProto.INT32, [seq] * batch)])
    r = cost(m)
    assert r.exact


def test_unknown_activation_is_reported_not_guessed():
    seq, batch, i, h = 2, 1, 2, 2
    r = cost(single("RNN", _inputs(seq, batch, i, h, 1, 1), ("y",), hidden_size=h, activations=["NoSuchAct"]))
    assert r.status == "unsupported" and "NoSuchAct" in r.note


@pytest.mark.parametrize("op,gates", [("LSTM", 4), ("GRU", 3), ("RNN", 1)])
def test_recurrent_ops_under_the_tool_conventions(op, gates):
    seq, batch, i, h, dirs = 5, 2, 8, 16, 1
    m = single(op, _inputs(seq, batch, i, h, gates, dirs), ("y",), hidden_size=h)
    macs = seq * dirs * batch * (i + h) * gates * h
    # fvcore has no handler for aten::lstm, aten::gru, aten::rnn_tanh, aten::rnn_relu: 0
    r = cost(m, convention="fvcore")
    assert (r.macs, r.flops) == (0, 0)
    # torch on CPU: GRU and RNN run as one addmm per step (2 per MAC); LSTM as one oneDNN kernel
    # that FlopCounterMode has no formula for (0). models/conventions/ checks both on the tool.
    r = cost(m, convention="torch")
    expected = 0 if op == "LSTM" else macs
    assert (r.macs, r.flops) == (expected, 2 * expected)


@pytest.mark.parametrize("op,gates", [("LSTM", 4), ("GRU", 3), ("RNN", 1)])
def test_the_input_projection_runs_as_a_gemm_at_the_matmul_efficiency(op, gates):
    """Issue 30, item 4 (the corpus LSTM 24% slow): a recurrent op's input projection X·Wᵀ over every
    step is one GEMM, 2·seq·N·dirs·G·H·I FLOPs (rnn_gemm_flops), timed at matmul.compute; the rest (the
    recurrent products and the cells) at rnn.compute."""
    import dataclasses

    import onnxperf
    from onnxperf.hardware import load_spec
    from onnxperf.predict.roofline import node_roofline, rnn_gemm_flops

    seq, batch, i, h, dirs = 5, 2, 3, 4, 2
    m = single(op, _inputs(seq, batch, i, h, gates, dirs), ("y",), hidden_size=h, direction="bidirectional")
    (n,) = onnxperf.analyze(m).main_nodes
    gemm = 2 * seq * batch * dirs * gates * h * i
    assert rnn_gemm_flops(n) == gemm and 0 < gemm < n.flops
    base = load_spec("xeon-silver-4210x2")
    spec = dataclasses.replace(base, efficiency={"matmul.compute": 0.8, "rnn.compute": 0.25}, efficiency_sources={})
    peak = spec.peak_for("float32")
    r = node_roofline(n, spec)
    assert r.compute_s == pytest.approx(gemm / (0.8 * peak) + (n.flops - gemm) / (0.25 * peak))
    assert node_roofline(n, base).compute_s == pytest.approx(n.flops / peak)  # the plain roofline: one sum
