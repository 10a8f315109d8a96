"""The forward pass (onnxperf.shapes.forward) and the engine's own shape functions (shape_rules,
shape_rules_ms): ONNX's inference, own shape functions and value evaluation reach a fixed point, so
every node below a gap ONNX leaves is shaped and costed (issue 14, point 1)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import onnxperf
from onnxperf.shapes import own
from onnxperf.shapes import rules as shape_rules
from onnxperf.cost.ops import REGISTRY
from onnxperf.shapes.forward import eval_dim

from .util import const, model, vi

MS = "com.microsoft"
ML = "ai.onnx.ml"
F32, I64, U8, I8 = TensorProto.FLOAT, TensorProto.INT64, TensorProto.UINT8, TensorProto.INT8


def _statuses(a) -> set[str]:
    return {n.status for n in a.main_nodes}


def _out(a, name):
    for n in a.main_nodes:
        for o in n.outputs:
            if o.name == name:
                return o
    raise KeyError(name)


# ------------------------------------------------------------------ derived dim names


@pytest.mark.parametrize("expr,bound,want", [
    ("past + 1", {"past": 127}, 128),
    ("2*s0", {"s0": 8}, 16),
    ("s0*s1 - 3", {"s0": 4, "s1": 5}, 17),
    ("floor(seq/2)", {"seq": 9}, 4),
    ("ceiling(seq/2)", {"seq": 9}, 5),
    ("(seq + 7)//8", {"seq": 9}, 2),
    ("seq/2", {"seq": 8}, 4),
    ("max(a, b)", {"a": 3, "b": 7}, 7),
    ("seq/2", {"seq": 9}, None),            # not exact: a shape is never rounded
    ("past + 1", {}, None),                 # unbound
    ("past - 5", {"past": 2}, None),        # not a size
    ("__import__('os')", {}, None),          # never executed
    ("2**64", {}, None),
    ("unk__3", {}, None),
])
def test_eval_dim(expr, bound, want):
    assert eval_dim(expr, bound) == want


def test_derived_dims_of_the_dynamo_exporter_are_evaluated():
    """value_info and outputs declared with ``past + 1`` (as the dynamo exporter writes them) take
    the bound value: the MatMul after a Concat over the cache is costed with past + 1 rows."""
    b, past, d = 1, 127, 8
    nodes = [helper.make_node("Concat", ["cache", "new"], ["kv"], axis=1),
             helper.make_node("Identity", ["kv"], ["kv2"]),
             helper.make_node("MatMul", ["q", "kv2t"], ["s"]),
             helper.make_node("Transpose", ["kv2"], ["kv2t"], perm=[0, 2, 1])]
    nodes = [nodes[0], nodes[1], nodes[3], nodes[2]]
    m = model(nodes, [vi("cache", ["batch", "past", d]), vi("new", ["batch", 1, d]), vi("q", ["batch", 1, d])],
              [vi("s", ["batch", 1, "past + 1"])])
    m.graph.value_info.append(vi("kv2", ["batch", "past + 1", d]))
    a = onnxperf.analyze(m, dims={"batch": b, "past": past})
    assert _out(a, "kv2").shape == (b, past + 1, d)
    assert _out(a, "s").shape == (b, 1, past + 1)
    mm = a.main_nodes[-1]
    assert mm.macs == b * 1 * d * (past + 1)
    assert _statuses(a) <= {"counted", "zero_by_design"}


def test_input_shape_binds_the_names_it_fixes():
    m = model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", ["batch", "past"])], [vi("y", ["batch", "past + 1"])])
    m.graph.node.append(helper.make_node("Identity", ["y"], ["z"]))
    m.graph.output.append(vi("z", None))
    a = onnxperf.analyze(m, input_shapes={"x": (2, 5)})
    assert _out(a, "y").shape == (2, 5)


# ------------------------------------------------------------------ gaps ONNX leaves, filled downstream


def test_ml_scaler_then_standard_ops_are_all_shaped():
    """Scaler (ai.onnx.ml: ONNX infers no shape) -> Sub -> MatMul: ONNX's own inference of the Sub
    and the MatMul runs again once the Scaler's output is shaped."""
    n, f, k = 4, 6, 3
    nodes = [helper.make_node("Scaler", ["x"], ["s"], domain=ML, offset=[0.0] * f, scale=[1.0] * f),
             helper.make_node("Sub", ["s", "mean"], ["c"]),
             helper.make_node("MatMul", ["c", "w"], ["y"])]
    m = model(nodes, [vi("x", ["batch", f])], [vi("y", None)], [const("mean", [f]), const("w", [f, k])],
              extra_opsets={ML: 1})
    a = onnxperf.analyze(m, dims={"batch": n})
    assert _out(a, "y").shape == (n, k)
    assert a.main_nodes[2].status == "counted" and a.main_nodes[2].macs == n * f * k


def test_ms_attention_then_matmul():
    """com.microsoft Attention [B, S, H] stops ONNX's inference; the MatMul below is costed."""
    b, s, h, heads = 2, 7, 16, 4
    nodes = [helper.make_node("Attention", ["x", "w", "bias"], ["att"], domain=MS, num_heads=heads),
             helper.make_node("MatMul", ["att", "w2"], ["y"])]
    m = model(nodes, [vi("x", ["batch", "seq", h])], [vi("y", None)],
              [const("w", [h, 3 * h]), const("bias", [3 * h]), const("w2", [h, h])], extra_opsets={MS: 1})
    a = onnxperf.analyze(m, dims={"batch": b, "seq": s})
    assert _out(a, "att").shape == (b, s, h)
    assert a.main_nodes[1].macs == b * s * h * h
    assert "onnxruntime-symbolic" not in a.shape_engines


def test_pad_by_computed_amounts_with_mod():
    """Swin's window padding: pad = (window - H % window) % window, computed from Shape; the Pad's
    output and the conv below it are static once the arithmetic is evaluated."""
    h, w, win, c = 7, 9, 4, 3
    ph, pw = (win - h % win) % win, (win - w % win) % win
    i64 = lambda name, v: const(name, [len(v)] if isinstance(v, list) else [], I64, v)  # noqa: E731
    nodes = [
        helper.make_node("Shape", ["x"], ["shp"]),
        helper.make_node("Slice", ["shp", "two", "four"], ["hw"]),
        helper.make_node("Mod", ["hw", "win"], ["r"]),
        helper.make_node("Sub", ["win", "r"], ["t"]),
        helper.make_node("Mod", ["t", "win"], ["pad_end"]),
        helper.make_node("Concat", ["zeros6", "pad_end"], ["pads"], axis=0),
        helper.make_node("Pad", ["x", "pads"], ["xp"]),
        helper.make_node("Conv", ["xp", "k"], ["y"], kernel_shape=[win, win], strides=[win, win]),
    ]
    m = model(nodes, [vi("x", ["batch", c, h, w])], [vi("y", None)],
              [i64("two", [2]), i64("four", [4]), i64("win", [win]), i64("zeros6", [0, 0, 0, 0, 0, 0]),
               const("k", [5, c, win, win])])
    a = onnxperf.analyze(m, dims={"batch": 1})
    assert _out(a, "xp").shape == (1, c, h + ph, w + pw)
    conv = a.main_nodes[-1]
    assert conv.outputs[0].shape == (1, 5, (h + ph) // win, (w + pw) // win)
    assert conv.macs == 5 * ((h + ph) // win) * ((w + pw) // win) * c * win * win
    assert _statuses(a) <= {"counted", "zero_by_design"}


def test_scatternd_mask_value_reaches_a_reshape():
    """A value built with ScatterND (no numpy evaluator: onnx's reference evaluator runs it, the
    output being small) feeds a Reshape target."""
    nodes = [helper.make_node("ScatterND", ["base", "idx", "upd"], ["target"]),
             helper.make_node("Reshape", ["x", "target"], ["y"]),
             helper.make_node("MatMul", ["y", "w"], ["z"])]
    m = model(nodes, [vi("x", [6, 4])], [vi("z", None)],
              [const("base", [2], I64, [1, 1]), const("idx", [2, 1], I64, [[0], [1]]),
               const("upd", [2], I64, [3, 8]), const("w", [8, 2])])
    a = onnxperf.analyze(m)
    assert _out(a, "y").shape == (3, 8)
    assert a.main_nodes[-1].macs == 3 * 8 * 2


def test_group_normalization_and_mvn_are_shaped():
    n, c, h, w = 2, 8, 5, 5
    nodes = [helper.make_node("GroupNormalization", ["x", "sc", "bi"], ["g"], num_groups=4),
             helper.make_node("MeanVarianceNormalization", ["g"], ["m"]),
             helper.make_node("Conv", ["m", "k"], ["y"], kernel_shape=[1, 1])]
    m = model(nodes, [vi("x", ["batch", c, h, w])], [vi("y", None)],
              [const("sc", [c]), const("bi", [c]), const("k", [3, c, 1, 1])], opset=21)
    a = onnxperf.analyze(m, dims={"batch": n})
    assert _out(a, "m").shape == (n, c, h, w)
    assert a.main_nodes[-1].macs == n * 3 * h * w * c
    assert _statuses(a) <= {"counted", "zero_by_design"}


def test_batch_norm_training_outputs_are_shaped():
    n, c, h, w = 2, 3, 4, 4
    node = helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y", "rm", "rv", "sm", "sv"],
                            epsilon=1e-5)
    m = model([node], [vi("x", [n, c, h, w])], [vi("y", None)],
              [const("s", [c]), const("b", [c]), const("m", [c]), const("v", [c])], opset=9)
    m.graph.output.extend([vi(x, None) for x in ("rm", "rv", "sm", "sv")])
    a = onnxperf.analyze(m)
    assert [o.shape for o in a.main_nodes[0].outputs] == [(n, c, h, w), (c,), (c,), (c,), (c,)]
    assert a.main_nodes[0].status == "counted"


# ------------------------------------------------------------------ every cost rule has a shape


def test_every_contrib_and_ml_cost_rule_has_a_shape_function():
    missing = []
    for e in REGISTRY.entries():
        dom = "" if e.domain in ("", "ai.onnx") else e.domain
        if dom == "":
            continue
        if (dom, e.op_type) in shape_rules.NON_TENSOR:
            continue
        if own.rule_for(dom, e.op_type) is None:
            missing.append((dom, e.op_type))
    assert not missing, missing


def test_every_default_domain_cost_rule_is_shaped_by_onnx_or_by_us():
    missing = []
    for e in REGISTRY.entries():
        if e.domain not in ("", "ai.onnx"):
            continue
        try:
            schema = onnx.defs.get_schema(e.op_type)
            ok = schema.has_type_and_shape_inference_function
        except onnx.defs.SchemaError:
            ok = False
        if not ok and own.rule_for("", e.op_type) is None:
            missing.append(e.op_type)
    assert not missing, missing


# ------------------------------------------------------------------ com.microsoft shape functions

B, S, H, N = 2, 5, 16, 4
D = H // N
P = 3  # past length


def _ms(op, ins, n_out=1, **attrs):
    """Output (type, shape) pairs of the own shape function, from input (shape, type) pairs."""
    names = [f"i{k}" if spec is not None else "" for k, spec in enumerate(ins)]
    node = helper.make_node(op, names, [f"o{k}" for k in range(n_out)], domain=MS, **attrs)
    shapes = tuple(None if s is None else s[0] for s in ins)
    types = tuple(0 if s is None else s[1] for s in ins)
    values = tuple(None if s is None or len(s) < 3 else np.asarray(s[2]) for s in ins)
    return own.infer(shape_rules.ShapeCtx(node, shapes, types, values, shape_rules.attributes(node)))


def test_ms_attention_shapes():
    out = _ms("Attention", [((B, S, H), F32), ((H, 3 * H), F32), ((3 * H,), F32), None, ((2, B, N, P, D), F32)],
              n_out=2, num_heads=N)
    assert out == [(F32, (B, S, H)), (F32, (2, B, N, P + S, D))]
    out = _ms("Attention", [((B, S, H), F32), ((H, 2 * H + 8), F32)], num_heads=N, qkv_hidden_sizes=[H, H, 8])
    assert out == [(F32, (B, S, 8))]


def test_ms_qattention_is_float_out():
    out = _ms("QAttention", [((B, S, H), U8), ((H, 3 * H), I8), ((3 * H,), F32), ((), F32), ((), F32)], num_heads=N)
    assert out == [(F32, (B, S, H))]


def test_ms_mha_and_gqa_shapes():
    L = 6
    out = _ms("MultiHeadAttention", [((B, S, H), F32), ((B, L, H), F32), ((B, L, H), F32), None, None, None,
                                     ((B, N, P, D), F32), ((B, N, P, D), F32)], n_out=3, num_heads=N)
    assert out == [(F32, (B, S, H)), (F32, (B, N, P + L, D)), (F32, (B, N, P + L, D))]
    hkv = 2
    total = P + S
    out = _ms("GroupQueryAttention", [((B, S, N * D), F32), ((B, S, hkv * D), F32), ((B, S, hkv * D), F32),
                                      ((B, hkv, P, D), F32), ((B, hkv, P, D), F32), ((B,), TensorProto.INT32),
                                      ((), TensorProto.INT32, total)], n_out=3, num_heads=N, kv_num_heads=hkv)
    assert out == [(F32, (B, S, N * D)), (F32, (B, hkv, total, D)), (F32, (B, hkv, total, D))]
    # a shared buffer longer than the total keeps its length
    out = _ms("GroupQueryAttention", [((B, S, N * D), F32), ((B, S, hkv * D), F32), ((B, S, hkv * D), F32),
                                      ((B, hkv, 64, D), F32), ((B, hkv, 64, D), F32), ((B,), TensorProto.INT32),
                                      ((), TensorProto.INT32, total)], n_out=2, num_heads=N, kv_num_heads=hkv)
    assert out[1] == (F32, (B, hkv, 64, D))


def test_ms_norm_and_embedding_shapes():
    assert _ms("SkipLayerNormalization", [((B, S, H), F32), ((B, S, H), F32), ((H,), F32)], n_out=4) == [
        (F32, (B, S, H)), (F32, (B, S, 1)), (F32, (B, S, 1)), (F32, (B, S, H))]
    assert _ms("LayerNormalization", [((B, S, H), F32), ((H,), F32)], n_out=3, axis=-1) == [
        (F32, (B, S, H)), (F32, (B, S, 1)), (F32, (B, S, 1))]
    V = 100
    assert _ms("EmbedLayerNormalization", [((B, S), TensorProto.INT32), ((B, S), TensorProto.INT32),
                                           ((V, H), F32), ((64, H), F32)], n_out=2) == [
        (F32, (B, S, H)), (TensorProto.INT32, (B,))]


def test_ms_conv_matmul_gemm_shapes():
    assert _ms("FusedConv", [((1, 3, 10, 10), F32), ((8, 3, 3, 3), F32)], strides=[2, 2], pads=[1, 1, 1, 1]) == [
        (F32, (1, 8, 5, 5))]
    assert _ms("NhwcFusedConv", [((1, 10, 10, 3), F32), ((8, 3, 3, 3), F32)], pads=[1, 1, 1, 1]) == [
        (F32, (1, 10, 10, 8))]
    assert _ms("FusedMatMul", [((B, 7, 5), F32), ((B, 6, 5), F32)], transB=1) == [(F32, (B, 7, 6))]
    assert _ms("FusedGemm", [((5, 7), F32), ((9, 5), F32)], transA=1, transB=1) == [(F32, (7, 9))]
    assert _ms("MatMulNBits", [((B, S, 64), F32), ((32, 2, 16), U8), ((64,), F32)], K=64, N=32, bits=4,
               block_size=32) == [(F32, (B, S, 32))]
    assert _ms("MatMulIntegerToFloat", [((B, S, 8), U8), ((8, 4), I8), ((), F32), ((), F32)]) == [
        (F32, (B, S, 4))]
    assert _ms("MatMulInteger16", [((3, 8), TensorProto.INT16), ((8, 4), TensorProto.INT16)]) == [
        (TensorProto.INT32, (3, 4))]
    assert _ms("QGemm", [((5, 7), U8), ((), F32), ((), U8), ((7, 9), I8), ((), F32), ((), I8)]) == [(F32, (5, 9))]
    assert _ms("GatherBlockQuantized", [((100, 32), U8), ((B, S), I64), ((100, 2), F32)], block_size=32,
               quantize_axis=1) == [(F32, (B, S, 64))]


def test_ms_qlinear_shapes():
    x = ((1, 8, 10, 10), U8)
    s, z = ((), F32), ((), U8)
    assert _ms("QLinearAdd", [x, s, z, ((1, 8, 1, 1), U8), s, z, s, z]) == [(U8, (1, 8, 10, 10))]
    assert _ms("QLinearSigmoid", [x, s, z, s, z]) == [(U8, (1, 8, 10, 10))]
    assert _ms("QLinearConcat", [s, z, ((1, 8, 4), U8), s, z, ((1, 8, 6), U8), s, z], axis=-1) == [
        (U8, (1, 8, 10))]
    assert _ms("QLinearGlobalAveragePool", [x, s, z, s, z]) == [(U8, (1, 8, 1, 1))]
    assert _ms("QLinearGlobalAveragePool", [((1, 10, 10, 8), U8), s, z, s, z], channels_last=1) == [
        (U8, (1, 1, 1, 8))]
    assert _ms("QLinearAveragePool", [x, s, z, s, z], kernel_shape=[2, 2], strides=[2, 2]) == [
        (U8, (1, 8, 5, 5))]
    assert _ms("QLinearConv", [x, s, z, ((4, 8, 3, 3), I8), s, ((), I8), s, z], pads=[1, 1, 1, 1]) == [
        (U8, (1, 4, 10, 10))]
    assert _ms("DequantizeLinear", [x, s, z]) == [(F32, (1, 8, 10, 10))]
    assert _ms("QuantizeLinear", [((3, 4), F32), s, ((), I8)]) == [(I8, (3, 4))]


def test_ms_elementwise_shapes():
    for op in ("FastGelu", "Gelu", "QuickGelu", "BiasGelu", "BiasAdd", "RotaryEmbedding", "Trilu"):
        assert _ms(op, [((B, S, H), F32), ((H,), F32)]) == [(F32, (B, S, H))], op
    assert _ms("BiasSplitGelu", [((B, S, H), F32), ((H,), F32)]) == [(F32, (B, S, H // 2))]
    assert _ms("BiasDropout", [((B, S, H), F32), ((H,), F32)], n_out=2) == [
        (F32, (B, S, H)), (TensorProto.BOOL, (B, S, H))]


# ------------------------------------------------------------------ data-dependent sizes: upper bounds


def test_nonzero_size_is_bounded_and_every_node_after_it_is_an_upper_bound():
    """NonZero(X [R, C]) selects at most R·C positions: the Transpose/GatherND after it are costed
    on that bound, marked inexact, and the analysis says so; nodes before it stay exact."""
    r, c = 4, 6
    nodes = [helper.make_node("Relu", ["x"], ["xr"]),
             helper.make_node("NonZero", ["xr"], ["nz"]),
             helper.make_node("Transpose", ["nz"], ["idx"], perm=[1, 0]),
             helper.make_node("GatherND", ["xr", "idx"], ["vals"])]
    a = onnxperf.analyze(model(nodes, [vi("x", [r, c])], [vi("vals", None)]))
    relu, nz, tr, gnd = a.main_nodes
    assert nz.outputs[0].shape == (2, r * c) and tr.outputs[0].shape == (r * c, 2)
    assert gnd.outputs[0].shape == (r * c,)
    assert {n.status for n in a.main_nodes} == {"counted"}
    assert relu.exact and not nz.exact and not tr.exact and not gnd.exact
    assert "upper bound" in gnd.note and "NonZero" in gnd.note
    assert {n.bound for n in a.main_nodes} == {"", "upper"} and relu.bound == ""
    # the totals are an upper bound, caused by the one NonZero (not by the nodes that follow it)
    assert a.totals.bound == "upper" and a.totals.complete and dict(a.totals.upper_bounded) == {"NonZero": 1}
    assert any("the largest NonZero can produce" in note for note in a.notes)
    assert "onnxruntime-symbolic" not in a.shape_engines


def test_nms_output_bound_uses_max_output_boxes_per_class():
    b, n, cls, m = 1, 50, 3, 10
    nodes = [helper.make_node("NonMaxSuppression", ["boxes", "scores", "m"], ["sel"]),
             helper.make_node("Cast", ["sel"], ["self"], to=TensorProto.FLOAT)]
    mm = model(nodes, [vi("boxes", [b, n, 4]), vi("scores", [b, cls, n])], [vi("self", None)],
               [const("m", [1], I64, [m])])
    a = onnxperf.analyze(mm)
    assert a.main_nodes[0].outputs[0].shape == (b * cls * m, 3)
    assert a.main_nodes[1].status == "counted" and not a.main_nodes[1].exact


def test_if_output_takes_the_larger_branch_as_a_bound_or_the_constant_branch():
    """An If whose branches give [3, 4] and [5, 4]: with a data-dependent condition the output is
    [5, 4], an upper bound; with a constant condition, the branch taken, exactly."""
    def branch(name, rows):
        g = helper.make_graph([helper.make_node("Slice", ["x", "s0", f"e_{name}"], [f"out_{name}"])],
                              name, [], [vi(f"out_{name}", None)],
                              [const("s0", [1], I64, [0]), const(f"e_{name}", [1], I64, [rows])])
        return g

    def build(cond_const: bool | None):
        nodes = []
        inits = [const("y", [4])]
        if cond_const is None:
            nodes.append(helper.make_node("ReduceSum", ["x"], ["sx"], keepdims=0))
            nodes.append(helper.make_node("Greater", ["sx", "zero"], ["cond"]))
            inits.append(const("zero", [], F32, 0.0))
        else:
            inits.append(const("cond", [], TensorProto.BOOL, cond_const))
        nodes.append(helper.make_node("If", ["cond"], ["sel"], then_branch=branch("t", 3), else_branch=branch("e", 5)))
        nodes.append(helper.make_node("Add", ["sel", "y"], ["z"]))
        return model(nodes, [vi("x", [8, 4])], [vi("z", None)], inits)

    a = onnxperf.analyze(build(None))
    add = a.main_nodes[-1]
    assert add.outputs[0].shape == (5, 4) and add.status == "counted" and not add.exact
    a = onnxperf.analyze(build(True))
    add = a.main_nodes[-1]
    assert add.outputs[0].shape == (3, 4) and add.exact and add.flops == 3 * 4


def test_a_value_op_without_numpy_evaluator_goes_through_the_onnx_reference():
    """Trilu has no numpy evaluator: onnx's reference evaluator computes the small int64 value
    (its output is known small and integer before it runs), and the Reshape target built from it
    shapes the MatMul below."""
    nodes = [helper.make_node("Trilu", ["ones"], ["tri"], upper=1),
             helper.make_node("ReduceSum", ["tri"], ["n0"], keepdims=0),  # the diagonal and above of a 2x2: 3
             helper.make_node("Unsqueeze", ["n0", "zero"], ["n"]),
             helper.make_node("Concat", ["n", "minus1"], ["target"], axis=0),
             helper.make_node("Reshape", ["x", "target"], ["y"]),
             helper.make_node("MatMul", ["y", "w"], ["z"])]
    m = model(nodes, [vi("x", [6, 4])], [vi("z", None)],
              [const("ones", [2, 2], I64, [[1, 1], [1, 1]]), const("minus1", [1], I64, [-1]), const("w", [8, 5]),
               const("zero", [1], I64, [0])],
              opset=18)
    a = onnxperf.analyze(m)
    assert _out(a, "y").shape == (3, 8)
    assert a.main_nodes[-1].macs == 3 * 8 * 5


@pytest.mark.parametrize("a,b,eq", [((3, 4), (2, 4, 5), "...ij,...jk"), ((2, 1, 3, 4), (5, 4, 6), "...ij,...jk"),
                                    ((3, 4), (2, 4, 5), "...ij,...jk->...ik"), ((7, 2, 3), (3,), "...j,j")])
def test_einsum_with_ellipses_of_different_ranks_is_shaped_as_numpy_shapes_it(a, b, eq):
    """ONNX's inference refuses ellipses that stand for different numbers of dims, and
    onnxruntime's symbolic inference got them wrong ((3, 5) for the first case): the engine's own
    Einsum shape function broadcasts them right-aligned, as numpy.einsum does."""
    from onnx import helper

    node = helper.make_node("Einsum", ["a", "b"], ["y"], equation=eq)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("a", 1, list(a)),
                                        helper.make_tensor_value_info("b", 1, list(b))],
                          [helper.make_tensor_value_info("y", 1, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    an = onnxperf.analyze(m)
    want = np.einsum(eq, np.zeros(a, np.float32), np.zeros(b, np.float32)).shape
    assert an.nodes[0].outputs[0].shape == want
    assert "onnxruntime-symbolic" not in an.shape_engines
