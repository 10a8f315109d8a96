"""The calibration suite: small models, each of independent copies of one op, that
:mod:`.run` measures and :mod:`.fit` turns into efficiencies. Never the model being validated."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F32 = TensorProto.FLOAT


#: independent copies of the op in each suite model (own inputs and weights, so no common-
#: subexpression elimination merges them): they run back to back as a model's nodes do, and
#: the measured time per copy is stable where a one-node model's is not (its single kernel
#: swings by 2x between sessions on a small shared machine)
COPIES = 4


def _w(name: str, shape: list[int], seed: int) -> onnx.TensorProto:
    rng = np.random.default_rng(seed)
    return numpy_helper.from_array(rng.standard_normal(shape, dtype=np.float32) * np.float32(0.05), name)


def _vi(name: str, shape, elem: int = F32) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


@dataclass(frozen=True)
class Case:
    """One suite entry: ``model`` holds :data:`COPIES` independent copies of the op, made by ``make`` when first
    read (a suite lists its cases by name without building them: a calibration on a few cases, ``only``, builds
    those few; the whole suite's random weights take seconds)."""

    name: str
    family: str
    make: Callable[[], onnx.ModelProto] = field(repr=False, compare=False)
    copies: int = COPIES

    @cached_property
    def model(self) -> onnx.ModelProto:
        return self.make()


def _case(name: str, family: str, build, copies: int = COPIES, opset: int = 17, out_elem: int = F32,
          ms: bool = False, out_shape=None) -> Case:
    """A suite model of ``copies`` independent copies of one op.

    ``build(sfx, seed)`` returns (node, inputs, initializers) of one copy whose tensor names end
    in ``sfx`` (or a list of nodes, the op last, for an op that needs another before it); its output
    is ``y`` + sfx. The model is made when first read (:class:`Case`)."""
    return Case(name, family, lambda: _model(name, build, copies, opset, out_elem, ms, out_shape), copies)


def _model(name: str, build, copies: int, opset: int, out_elem: int, ms: bool, out_shape) -> onnx.ModelProto:
    """The model of :func:`_case`."""
    nodes, inputs, outputs, inits = [], [], [], []
    for i in range(copies):
        node, ins, ws = build(f"_{i}", 10 * i)
        for j, one in enumerate(node if isinstance(node, list) else [node]):
            one.name = f"{name}_{i}" + (f"_{j}" if isinstance(node, list) else "")
            nodes.append(one)
        inputs += ins
        inits += ws
        outputs.append(_vi(f"y_{i}", out_shape, out_elem))
    g = helper.make_graph(nodes, name, inputs, outputs, inits)
    opsets = [helper.make_opsetid("", opset)] + ([helper.make_opsetid(MS, 1)] if ms else [])
    m = helper.make_model(g, opset_imports=opsets, producer_name="onnxperf-calibrate")
    m.ir_version = 8
    # graph outputs get their inferred types, so every suite model passes onnx.checker (ONNX has no
    # schema for onnxruntime's com.microsoft ops: their outputs keep the declared element type)
    return onnx.shape_inference.infer_shapes(m, strict_mode=not ms)


#: onnxruntime's contrib domain
MS = "com.microsoft"


def _conv(name, n, c_in, c_out, hw, k, stride=1, group=1) -> Case:
    pad = k // 2

    def build(sfx, seed):
        node = helper.make_node("Conv", ["x" + sfx, "w" + sfx, "b" + sfx], ["y" + sfx], kernel_shape=[k, k],
                                strides=[stride, stride], pads=[pad] * 4, group=group)
        return node, [_vi("x" + sfx, [n, c_in, hw, hw])], [_w("w" + sfx, [c_out, c_in // group, k, k], seed + 1),
                                                          _w("b" + sfx, [c_out], seed + 2)]
    return _case(name, "conv.depthwise" if group == c_in == c_out and c_in > 1 else "conv", build)


def _conv_dq_weight(name, c_in, c_out, hw, k) -> Case:
    """A float Conv whose weight comes from a DequantizeLinear of int8 (a QDQ model's conv that stays
    float): onnxruntime does not fold the DequantizeLinear, so the weight is not a constant when the
    NCHWc layout transformer looks, and the conv runs in NCHW (FusedConv: im2col and SGEMM, each run
    packing its weight). This VM, a 3x3 64->64 conv on 56x56: 1.38 ms, where with the weight an
    initializer it runs NCHWc in 0.91 ms."""
    pad = k // 2

    def build(sfx, seed):
        rng = np.random.default_rng(seed)
        dq = helper.make_node("DequantizeLinear", ["wq" + sfx, "ws" + sfx, "wz" + sfx], ["w" + sfx])
        conv = helper.make_node("Conv", ["x" + sfx, "w" + sfx, "b" + sfx], ["y" + sfx], kernel_shape=[k, k],
                                pads=[pad] * 4)
        return [dq, conv], [_vi("x" + sfx, [1, c_in, hw, hw])], [
            numpy_helper.from_array(rng.integers(-127, 128, (c_out, c_in, k, k)).astype(np.int8), "wq" + sfx),
            numpy_helper.from_array(np.array(0.001, np.float32), "ws" + sfx),
            numpy_helper.from_array(np.array(0, np.int8), "wz" + sfx), _w("b" + sfx, [c_out], seed + 2)]
    return _case(name, "op.Conv.nchw", build)


def _matmul(name, b, m, k, n) -> Case:
    shape_a = [b, m, k] if b > 1 else [m, k]

    def build(sfx, seed):
        return (helper.make_node("MatMul", ["a" + sfx, "w" + sfx], ["y" + sfx]), [_vi("a" + sfx, shape_a)],
                [_w("w" + sfx, [k, n], seed + 3)])
    return _case(name, "matmul", build)


def _unary(name, op, family, shape, opset: int = 17, **attrs) -> Case:
    return _case(name, family, lambda sfx, seed: (helper.make_node(op, ["x" + sfx], ["y" + sfx], **attrs),
                                                  [_vi("x" + sfx, shape)], []), opset=opset)


def _binary(name, op, shape) -> Case:
    return _case(name, "elementwise", lambda sfx, seed: (
        helper.make_node(op, ["x" + sfx, "z" + sfx], ["y" + sfx]), [_vi("x" + sfx, shape), _vi("z" + sfx, shape)], []))


def _scalar(name: str, value, dtype) -> onnx.TensorProto:
    return numpy_helper.from_array(np.array(value, dtype=dtype), name)


def _qconv(name, c_in, c_out, hw, k, group=1, stride=1) -> Case:
    """QLinearConv on uint8 activations and int8 weights (int32 bias), as a QOperator export has it:
    family ``conv.int8`` (its own efficiency: 8-bit kernels run at another share of the int8 peak, and a
    cost per im2col run: :mod:`onnxperf.predict.im2col`)."""
    pad = k // 2

    def build(sfx, seed):
        rng = np.random.default_rng(seed)
        w = numpy_helper.from_array(rng.integers(-64, 64, (c_out, c_in // group, k, k), dtype=np.int8), "w" + sfx)
        inits = [_scalar("xs" + sfx, 0.02, np.float32), _scalar("xz" + sfx, 128, np.uint8), w,
                 _scalar("ws" + sfx, 0.01, np.float32), _scalar("wz" + sfx, 0, np.int8),
                 _scalar("ys" + sfx, 0.05, np.float32), _scalar("yz" + sfx, 128, np.uint8),
                 numpy_helper.from_array(np.zeros(c_out, np.int32), "b" + sfx)]
        node = helper.make_node("QLinearConv", ["x" + sfx, "xs" + sfx, "xz" + sfx, "w" + sfx, "ws" + sfx, "wz" + sfx,
                                                "ys" + sfx, "yz" + sfx, "b" + sfx], ["y" + sfx],
                                kernel_shape=[k, k], pads=[pad] * 4, group=group, strides=[stride, stride])
        return node, [_vi("x" + sfx, [1, c_in, hw, hw], TensorProto.UINT8)], inits
    family = "conv.depthwise.int8" if group == c_in == c_out and c_in > 1 else "conv.int8"
    return _case(name, family, build, out_elem=TensorProto.UINT8)


def _quant_elementwise(name: str, op: str, shape) -> Case:
    """An 8-bit QOperator elementwise op on uint8 tensors (QLinearAdd, QLinearMul, QLinearSigmoid,
    QLinearSoftmax of onnxruntime's com.microsoft domain), or QuantizeLinear / DequantizeLinear between float and
    uint8: family ``op.<Op>`` (they dequantize, compute and requantize per element, at rates of
    their own)."""
    u8 = TensorProto.UINT8

    def build(sfx, seed):
        scales = [_scalar("as" + sfx, 0.02, np.float32), _scalar("az" + sfx, 128, np.uint8),
                  _scalar("ys" + sfx, 0.05, np.float32), _scalar("yz" + sfx, 128, np.uint8)]
        if op in ("QLinearAdd", "QLinearMul"):
            node = helper.make_node(op, ["a" + sfx, "as" + sfx, "az" + sfx, "b" + sfx, "as" + sfx, "az" + sfx,
                                         "ys" + sfx, "yz" + sfx], ["y" + sfx], domain=MS)
            return node, [_vi("a" + sfx, shape, u8), _vi("b" + sfx, shape, u8)], scales
        if op in ("QLinearSigmoid", "QLinearSoftmax"):
            attrs = {"axis": -1, "opset": 13} if op == "QLinearSoftmax" else {}
            node = helper.make_node(op, ["a" + sfx, "as" + sfx, "az" + sfx, "ys" + sfx, "yz" + sfx], ["y" + sfx],
                                    domain=MS, **attrs)
            return node, [_vi("a" + sfx, shape, u8)], scales
        if op == "QuantizeLinear":
            return (helper.make_node(op, ["a" + sfx, "ys" + sfx, "yz" + sfx], ["y" + sfx]),
                    [_vi("a" + sfx, shape)], scales[2:])
        return (helper.make_node(op, ["a" + sfx, "as" + sfx, "az" + sfx], ["y" + sfx]),
                [_vi("a" + sfx, shape, u8)], scales[:2])
    out = F32 if op == "DequantizeLinear" else u8
    ms = op.startswith("QLinear")
    return _case(name, f"op.{op}", build, out_elem=out, ms=ms, out_shape=list(shape) if ms else None)


def _matmul_integer(name, m, k, n) -> Case:
    """MatMulInteger uint8 x int8 -> int32, as dynamic quantization exports it: family ``matmul.int8``."""
    def build(sfx, seed):
        rng = np.random.default_rng(seed)
        w = numpy_helper.from_array(rng.integers(-64, 64, (k, n), dtype=np.int8), "w" + sfx)
        node = helper.make_node("MatMulInteger", ["a" + sfx, "w" + sfx, "az" + sfx, "wz" + sfx], ["y" + sfx])
        return node, [_vi("a" + sfx, [m, k], TensorProto.UINT8)], [w, _scalar("az" + sfx, 128, np.uint8),
                                                                   _scalar("wz" + sfx, 0, np.int8)]
    return _case(name, "matmul.int8", build, out_elem=TensorProto.INT32)


def _qlinear_matmul_dynamic(name, batch, m, k, n) -> Case:
    """QLinearMatMul of two computed uint8 tensors, batched: a quantized attention's scores and context
    (QOperator ViT's ``q @ k^T`` and ``attn @ v``). Neither operand is a weight, so MLAS packs B every
    run and loops over the batch: family ``op.MatMul.int8.dynamic``."""
    u8 = TensorProto.UINT8

    def build(sfx, seed):
        scales = [_scalar("s" + sfx, 0.02, np.float32), _scalar("z" + sfx, 128, np.uint8)]
        node = helper.make_node("QLinearMatMul", ["a" + sfx, "s" + sfx, "z" + sfx, "b" + sfx, "s" + sfx, "z" + sfx,
                                                  "s" + sfx, "z" + sfx], ["y" + sfx])
        return node, [_vi("a" + sfx, [batch, m, k], u8), _vi("b" + sfx, [batch, k, n], u8)], scales
    return _case(name, "op.MatMul.int8.dynamic", build, out_elem=u8)


def _lstm(name, seq, inp, hidden, direction="bidirectional", batch: int = 1, copies: int = COPIES,
          op: str = "LSTM") -> Case:
    """A (bidirectional) LSTM layer over a sequence, as a recurrent classifier exports it: family
    ``rnn`` (a step's small matrix products run one after another: far from the conv/matmul rate); ``op``: GRU
    for a GRU layer (3 gates)."""
    dirs = 2 if direction == "bidirectional" else 1
    g = 4 if op == "LSTM" else 3

    def build(sfx, seed):
        ws = [_w("W" + sfx, [dirs, g * hidden, inp], seed + 1), _w("R" + sfx, [dirs, g * hidden, hidden], seed + 2),
              _w("B" + sfx, [dirs, 2 * g * hidden], seed + 3)]
        node = helper.make_node(op, ["x" + sfx, "W" + sfx, "R" + sfx, "B" + sfx], ["y" + sfx],
                                hidden_size=hidden, direction=direction)
        return node, [_vi("x" + sfx, [seq, batch, inp])], ws
    return _case(name, "rnn", build, copies=copies)


#: (H, N) of the LSTMs whose steps ``hw calibrate`` times (:func:`recurrence_step_cases`): a step's product split
#: over the pool (N = 1) at a small, a mid and a large H (the pool's hand-off, then R's stream), and the rows split
#: across the threads (batch-parallel) at the three (the cells, then the stream and the arithmetic)
STEP_SHAPES = ((64, 1), (256, 1), (512, 1), (64, 16), (256, 8), (512, 16))
#: their sequence length and input size (bidirectional: 2·32 steps)
STEP_SEQ, STEP_INPUT = 32, 128


#: (H, N) of the GRU whose time is mostly its cells (one thread evaluates N·H·3 activations a step): what a GRU's
#: own cell constant is taken from, the LSTMs' β and s held (:func:`onnxperf.products.calibration.fit.fit_gru_cell`)
GRU_CELL_SHAPE = (128, 16)


def recurrence_step_cases(shapes=STEP_SHAPES, seq: int = STEP_SEQ, inp: int = STEP_INPUT) -> list[Case]:
    """One bidirectional LSTM per (H, N) of ``shapes``: what :mod:`onnxperf.predict.recurrence`'s step constants
    are fitted on (:func:`onnxperf.products.calibration.fit.fit_steps`), then the GRU of :data:`GRU_CELL_SHAPE`,
    last."""
    h, n = GRU_CELL_SHAPE
    return [_lstm(f"lstm_steps_h{h}_n{n}", seq, inp, h, batch=n, copies=1) for h, n in shapes] + [
        _lstm(f"gru_steps_h{h}_n{n}", seq, inp, h, batch=n, copies=1, op="GRU")]


def tiny_case(copies: int) -> Case:
    """``copies`` independent Relus on 16×16 tensors: a model whose time is all runtime overhead."""
    return _case(f"dispatch_{copies}", "activation", lambda sfx, seed: (
        helper.make_node("Relu", ["x" + sfx], ["y" + sfx]), [_vi("x" + sfx, [16, 16])], []), copies=copies)


#: the masked-attention pair that measures a subnormal assist (:func:`subnormal_case`): windows, heads,
#: tokens per window, head width (Swin-T's last stage at batch 16), the mask value of the masked twin
SUBNORMAL_SHAPE = (16, 12, 49, 32)
SUBNORMAL_MASK = -95.0


def subnormal_case(mask: float, shape: tuple[int, int, int, int] = SUBNORMAL_SHAPE) -> Case:
    """Masked attention, ``softmax(x + M) @ v``, with M = ``mask`` above the diagonal and 0 elsewhere: with
    -95 the masked probabilities are subnormal (exp(-95) = 5.5e-42, below 2^-126), with 0 the same model
    has none. The difference of the two is the machine's time for the assists that
    :func:`onnxperf.cost.subnormal.find_underflows` counts in the first (:func:`onnxperf.products.calibration.run.subnormal_assist`)."""
    b, h, s, d = shape
    m = np.where(np.triu(np.ones((s, s), dtype=bool), 1), np.float32(mask), np.float32(0)).astype(np.float32)
    nodes = [helper.make_node("Add", ["x", "mask"], ["scores"]),
             helper.make_node("Softmax", ["scores"], ["p"], axis=-1),
             helper.make_node("MatMul", ["p", "v"], ["y"])]
    g = helper.make_graph(nodes, "subnormal", [_vi("x", [b, h, s, s]), _vi("v", [b, h, s, d])],
                          [_vi("y", [b, h, s, d])], [numpy_helper.from_array(m, "mask")])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="onnxperf-calibrate")
    model.ir_version = 8
    return Case(f"subnormal_mask{mask:g}", "subnormal", lambda: model, copies=1)


#: the broadcast pair that measures one span (:func:`broadcast_case`): rows, row length
BROADCAST_SHAPE = (65536, 16)


def broadcast_case(broadcast: bool, shape: tuple[int, int] = BROADCAST_SHAPE, quantized: bool = False) -> Case:
    """``x + b`` with x of ``shape``: b of [1, row] (a broadcast, one span per row: 65,536 spans of 16) or
    of the same shape (one span). Their difference, less the broadcast case's smaller traffic, is the
    machine's time for the spans (:func:`onnxperf.products.calibration.run.broadcast_span`). ``quantized``:
    onnxruntime's QLinearMul on uint8 instead (its span costs about three times a float Add's: it sets up
    its requantization for every call, 31 ns against 11 on this VM)."""
    rows, n = shape
    b_shape = [1, n] if broadcast else [rows, n]
    if quantized:
        u8 = TensorProto.UINT8
        node = helper.make_node("QLinearMul", ["x", "s", "z", "b", "s", "z", "ys", "yz"], ["y"], domain=MS)
        inits = [numpy_helper.from_array(np.array(0.02, np.float32), "s"),
                 numpy_helper.from_array(np.array(128, np.uint8), "z"),
                 numpy_helper.from_array(np.array(0.05, np.float32), "ys"),
                 numpy_helper.from_array(np.array(128, np.uint8), "yz")]
        g = helper.make_graph([node], "qbroadcast", [_vi("x", [rows, n], u8), _vi("b", b_shape, u8)],
                              [_vi("y", [rows, n], u8)], inits)
        opsets = [helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)]
    else:
        g = helper.make_graph([helper.make_node("Add", ["x", "b"], ["y"])], "broadcast",
                              [_vi("x", [rows, n]), _vi("b", b_shape)], [_vi("y", [rows, n])])
        opsets = [helper.make_opsetid("", 17)]
    model = helper.make_model(g, opset_imports=opsets, producer_name="onnxperf-calibrate")
    model.ir_version = 8
    name = ("qbroadcast" if quantized else "broadcast") + ("_rows" if broadcast else "_none")
    return Case(name, "op.QLinearMul" if quantized else "elementwise", lambda: model, copies=1)


def suite(scale: float = 1.0) -> list[Case]:
    """The fixed calibration suite. ``scale`` < 1 shrinks the spatial/row sizes and the largest
    weights (tests)."""
    s = max(scale, 1 / 64)

    def d(x: int) -> int:
        return max(int(x * s), 2)

    cases = [
        _conv("conv3x3_64", 1, 64, 64, d(56), 3),
        _conv("conv1x1_256_64", 1, 256, 64, d(56), 1),
        _conv("conv1x1_64_256", 1, 64, 256, d(56), 1),
        _conv("conv7x7_s2_stem", 1, 3, 64, d(224), 7, stride=2),
        _conv("conv3x3_256", 1, 256, 256, d(14), 3),
        _conv("conv3x3_512", 1, d(512), d(512), d(7), 3),
        _conv("conv1x1_1024_2048_s2", 1, d(1024), d(2048), d(14), 1, stride=2),
        _conv("conv3x3_128_s2", 1, 128, 128, d(56), 3, stride=2),
        _conv("dwconv3x3_144", 1, 144, 144, d(56), 3, group=144),
        _conv("dwconv3x3_960", 1, 960, 960, d(7), 3, group=960),
        _conv("gconv3x3_g8", 1, 128, 128, d(28), 3, group=8),
        _conv_dq_weight("conv3x3_64_dq_weight", 64, 64, d(56), 3),
        _matmul("gemm_64", 1, 64, 64, 64),
        _matmul("gemm_256", 1, 256, 256, 256),
        _matmul("gemm_1024", 1, d(1024), d(1024), d(1024)),
        _matmul("gemv_4096", 1, 1, d(4096), d(2048)),  # 32 MiB of weights a copy: 4 copies stream from DRAM
        _matmul("bmm_16x128", 16, d(128), 64, 128),
        _matmul("linear_tokens", 1, d(512), d(768), d(3072)),
        _binary("add_1m", "Add", [d(1024), 1024]),
        _binary("mul_4m", "Mul", [d(4096), 1024]),
        _binary("add_tiny", "Add", [16, 16]),
        _unary("relu_4m", "Relu", "activation", [d(4096), 1024]),
        # transcendental functions: each fitted on its arithmetic (fit.compute_fitted)
        _unary("sigmoid_1m", "Sigmoid", "op.Sigmoid", [d(1024), 1024]),
        _unary("erf_1m", "Erf", "op.Erf", [d(1024), 1024]),
        _unary("tanh_1m", "Tanh", "op.Tanh", [d(1024), 1024]),
        _unary("gelu_1m", "Gelu", "op.Gelu", [d(1024), 1024], opset=20),
        _unary("relu_tiny", "Relu", "activation", [16, 16]),
        _unary("softmax_rows", "Softmax", "op.Softmax", [d(2048), 512], axis=-1),
        _unary("reducemean_rows", "ReduceMean", "reduce", [d(2048), 512], axes=[-1]),
        _unary("transpose_4d", "Transpose", "movement", [8, d(128), 12, 64], perm=[0, 2, 1, 3]),
        # a window partition that moves the innermost axis (MaxViT): copied one element at a time
        _unary("transpose_6d_window", "Transpose", "op.Transpose.eltwise", [1, 64, d(8), 7, d(8), 7],
               perm=[0, 2, 4, 3, 5, 1]),
        # an innermost-dim broadcast (Swin V2's cosine attention norms): one element at a time
        _case("expand_inner_x32", "op.Expand.inner", lambda sfx, seed: (
            helper.make_node("Expand", ["x" + sfx, "shape" + sfx], ["y" + sfx]), [_vi("x" + sfx, [32, 4, d(128), 1])],
            [numpy_helper.from_array(np.array([32, 4, d(128), 32], np.int64), "shape" + sfx)])),
        _unary("maxpool_3x3_s2", "MaxPool", "pool", [1, 64, d(112), d(112)], kernel_shape=[3, 3],
               strides=[2, 2], pads=[1, 1, 1, 1]),
        _unary("gap_2048", "GlobalAveragePool", "pool", [1, 2048, 7, 7]),
        _case("layernorm_768", "norm", lambda sfx, seed: (
            helper.make_node("LayerNormalization", ["x" + sfx, "g" + sfx, "b" + sfx], ["y" + sfx], axis=-1),
            [_vi("x" + sfx, [d(512), 768])], [_w("g" + sfx, [768], seed + 4), _w("b" + sfx, [768], seed + 5)])),
        # onnxruntime fuses Add (+ bias Add) + LayerNormalization into SkipLayerNormalization, a kernel
        # ~8x slower per element than LayerNormalization on onnxruntime 1.32's CPU provider
        _case("skiplayernorm_768", "op.SkipLayerNormalization", lambda sfx, seed: (
            helper.make_node("SkipLayerNormalization", ["x" + sfx, "s" + sfx, "g" + sfx, "b" + sfx, "c" + sfx],
                             ["y" + sfx], domain=MS, epsilon=1e-5),
            [_vi("x" + sfx, [1, d(256), 768]), _vi("s" + sfx, [1, d(256), 768])],
            [_w("g" + sfx, [768], seed + 4), _w("b" + sfx, [768], seed + 5), _w("c" + sfx, [768], seed + 6)]),
            ms=True, out_shape=[1, d(256), 768]),
        _case("batchnorm_64", "norm", lambda sfx, seed: (
            helper.make_node("BatchNormalization", ["x" + sfx, "g" + sfx, "b" + sfx, "m" + sfx, "v" + sfx],
                             ["y" + sfx]),
            [_vi("x" + sfx, [1, 64, d(112), d(112)])],
            [_w("g" + sfx, [64], seed + 6), _w("b" + sfx, [64], seed + 7), _w("m" + sfx, [64], seed + 8),
             numpy_helper.from_array(np.ones(64, np.float32), "v" + sfx)])),
        # bilinear upsampling (segmentation heads): onnxruntime's Resize computes each output element
        # from 4 taps at ~0.4 ns per element, 20x its bytes at the cache's bandwidth
        _case("resize_linear_x4", "op.Resize", lambda sfx, seed: (
            helper.make_node("Resize", ["x" + sfx, "", "s" + sfx], ["y" + sfx], mode="linear",
                             coordinate_transformation_mode="half_pixel"),
            [_vi("x" + sfx, [1, 21, d(64), d(64)])],
            [numpy_helper.from_array(np.array([1, 1, 4, 4], np.float32), "s" + sfx)])),
        # windowed attention written as Einsum (MaxViT, Swin-style exports): onnxruntime's Einsum runs
        # its many 49x49 products through its own transposes and batched GEMMs, far below MatMul's rate
        _case("einsum_qk_windows", "op.Einsum", lambda sfx, seed: (
            helper.make_node("Einsum", ["q" + sfx, "k" + sfx], ["y" + sfx], equation="bghid,bghjd->bghij"),
            [_vi("q" + sfx, [1, 16, 4, 49, 32]), _vi("k" + sfx, [1, 16, 4, 49, 32])], [])),
        _case("einsum_av_windows", "op.Einsum", lambda sfx, seed: (
            helper.make_node("Einsum", ["a" + sfx, "v" + sfx], ["y" + sfx], equation="bghij,bghjd->bghid"),
            [_vi("a" + sfx, [1, 16, 4, 49, 49]), _vi("v" + sfx, [1, 16, 4, 49, 32])], [])),
        _case("concat_c", "movement", lambda sfx, seed: (
            helper.make_node("Concat", ["x" + sfx, "z" + sfx], ["y" + sfx], axis=1),
            [_vi("x" + sfx, [1, 128, d(56), d(56)]), _vi("z" + sfx, [1, 128, d(56), d(56)])], [])),
        _lstm("lstm_bi_256", d(64), 128, 256),
        # 8-bit integer kernels (QOperator and dynamically quantized exports)
        _qconv("qlinearconv3x3_64", 64, 64, d(56), 3),
        _qconv("qlinearconv1x1_256_64", 256, 64, d(56), 1),
        _qconv("qlinearconv_dw3x3_144", 144, 144, d(56), 3, group=144),
        # a stem over 3 channels: 614,656 im2col runs of 3 bytes, where the 3x3 case has 28,224 of 64 (the fit
        # separates the cost per run from the share of the peak: fit.fit_runs)
        _qconv("qlinearconv7x7_s2_stem", 3, 64, d(224), 7, stride=2),
        _matmul_integer("matmulinteger_768", d(128), 768, 768),
        _matmul_integer("matmulinteger_3072", d(128), 768, 3072),
        _qlinear_matmul_dynamic("qlinearmatmul_bmm_16x128", 16, d(128), 64, d(128)),
        _quant_elementwise("qlinearadd_1m", "QLinearAdd", [d(1024), 1024]),
        _quant_elementwise("qlinearmul_1m", "QLinearMul", [d(1024), 1024]),
        _quant_elementwise("qlinearsigmoid_1m", "QLinearSigmoid", [d(1024), 1024]),
        # a quantized ViT's attention softmax: 8x the float Softmax's time per element
        _quant_elementwise("qlinearsoftmax_rows", "QLinearSoftmax", [d(1024), 256]),
        _quant_elementwise("quantize_1m", "QuantizeLinear", [d(1024), 1024]),
        _quant_elementwise("dequantize_1m", "DequantizeLinear", [d(1024), 1024]),
        # mid-size ops (256 KiB tensors): onnxruntime splits them over its threads, which costs a
        # dispatch of its own (fit.MID: the fit's overhead_parallel_s, not the efficiencies)
        _binary("add_64k", "Add", [64, 1024]),
        _unary("relu_64k", "Relu", "activation", [64, 1024]),
        _unary("softmax_64k", "Softmax", "op.Softmax", [128, 512], axis=-1),
        _unary("transpose_64k", "Transpose", "movement", [4, 128, 128], perm=[0, 2, 1]),
        _case("layernorm_64k", "norm", lambda sfx, seed: (
            helper.make_node("LayerNormalization", ["x" + sfx, "g" + sfx, "b" + sfx], ["y" + sfx], axis=-1),
            [_vi("x" + sfx, [256, 256])], [_w("g" + sfx, [256], seed + 4), _w("b" + sfx, [256], seed + 5)])),
        _case("gather_rows", "gather_scatter", lambda sfx, seed: (
            helper.make_node("Gather", ["t" + sfx, "i" + sfx], ["y" + sfx], axis=0),
            [_vi("i" + sfx, [d(512)], TensorProto.INT64)], [_w("t" + sfx, [d(2048), d(768)], seed + 9)])),
    ]
    return cases
