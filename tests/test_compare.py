"""``onnxperf compare``: the aligner on small graphs built here, every explanation detector, the real
PyTorch/Keras pairs in models/, the renderers and the command."""

from __future__ import annotations

import json
import math
import os
import shutil
import unicodedata
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from onnxperf import cli
from onnxperf.products.compare import DETECTORS, align_signatures, build, compare, load_sides
from onnxperf.products.compare import align
from onnxperf.products.compare.align import CHANGED, FUSED, INSERTED, REMOVED, SAME, Signature
from onnxperf.products.compare.explain import Context, detector, explain
from onnxperf.products.compare.model import param_roles
from onnxperf.products.compare.render import RENDERERS
from onnxperf.cost.request import Request

from .util import const, model, vi

MODELS = Path(__file__).resolve().parent.parent / "models"
N, H, W = 1, 16, 16


class G:
    """A tiny graph builder: a chain of ops on an NCHW input ``x`` [N, C, H, W]."""

    def __init__(self, c: int = 3, h: int = H, w: int = W, dtype: int = TensorProto.FLOAT, nhwc: bool = False):
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.dtype = dtype
        self.inputs = [vi("x", [N, h, w, c] if nhwc else [N, c, h, w], dtype)]
        self.cur = "x"
        self.k = 0

    def _name(self, stem: str) -> str:
        self.k += 1
        return f"{stem}{self.k}"

    def init(self, shape, values=None, dtype: int | None = None) -> str:
        name = self._name("c")
        self.inits.append(const(name, shape, dtype or self.dtype, values))
        return name

    def op(self, op_type: str, *extra: str, x: str | None = None, name: str | None = None, **attrs) -> str:
        out = self._name("t")
        self.nodes.append(helper.make_node(op_type, [x or self.cur, *extra], [out], name=name or out, **attrs))
        self.cur = out
        return out

    def conv(self, c_in: int, c_out: int, k: int = 3, stride: int = 1, group: int = 1, bias: bool = True,
             pad: int | None = None, name: str | None = None) -> str:
        w = self.init([c_out, c_in // group, k, k])
        ins = [w] + ([self.init([c_out])] if bias else [])
        p = k // 2 if pad is None else pad
        return self.op("Conv", *ins, name=name, kernel_shape=[k, k], strides=[stride, stride], pads=[p] * 4,
                       group=group)

    def bn(self, c: int) -> str:
        return self.op("BatchNormalization", *(self.init([c]) for _ in range(4)))

    def build(self, opset: int = 17) -> onnx.ModelProto:
        return model(self.nodes, self.inputs, [vi(self.cur, None, self.dtype)], self.inits, opset=opset)


def conv_macs(c_in: int, c_out: int, k: int, ho: int, wo: int, group: int = 1) -> int:
    return N * c_out * ho * wo * (c_in // group) * k * k


def sides(*models, dims=None):
    return load_sides(Request(None, dims=dict(dims or {})), list(models))


def pair(ma, mb):
    a, b = sides(ma, mb)
    return a, b, align(a, b)


def found(ma, mb) -> dict[str, list]:
    a, b, al = pair(ma, mb)
    ex, checks = explain(Context(a, b, al))
    assert [c.id for c in checks] == list(DETECTORS)
    out: dict[str, list] = {}
    for e in ex:
        out.setdefault(e.id, []).append(e)
    return out


def kinds(al) -> list[str]:
    return [p.kind for p in al.pairs]


# ------------------------------------------------------------------------------------------ aligner

def test_inserted_node():
    ga, gb = G(), G()
    ga.conv(3, 8); ga.op("Relu"); ga.conv(8, 16)
    gb.conv(3, 8); gb.op("Relu"); gb.conv(8, 8, name="extra"); gb.op("Relu"); gb.conv(8, 16)
    a, b, al = pair(ga.build(), gb.build())
    assert kinds(al) == [SAME, INSERTED, SAME]
    assert b.name(al.pairs[1].b) == "extra" and al.pairs[1].a is None
    assert al.count(INSERTED) == 1
    e = found(ga.build(), gb.build())["only_one_side"][0]
    assert e.side == "b" and e.delta("macs") == conv_macs(8, 8, 3, H, W)


def test_removed_node():
    ga, gb = G(), G()
    ga.conv(3, 8); ga.conv(8, 8, name="gone"); ga.conv(8, 16)
    gb.conv(3, 8); gb.conv(8, 16)
    a, b, al = pair(ga.build(), gb.build())
    assert kinds(al) == [SAME, REMOVED, SAME]
    assert a.name(al.pairs[1].a) == "gone"
    e = found(ga.build(), gb.build())["only_one_side"][0]
    assert e.side == "a" and e.delta("macs") == -conv_macs(8, 8, 3, H, W)


def test_fused_pair_conv_bn_vs_conv():
    ga, gb = G(), G()
    ga.conv(3, 8, bias=False); ga.bn(8); ga.op("Relu"); ga.conv(8, 16, bias=False); ga.bn(16)
    gb.conv(3, 8, name="c1"); gb.op("Relu"); gb.conv(8, 16, name="c2")
    a, b, al = pair(ga.build(), gb.build())
    assert kinds(al) == [SAME, FUSED, SAME, FUSED]
    assert [b.name(p.into) for p in al.pairs if p.kind == FUSED] == ["c1", "c2"]
    assert [a.op(p.a) for p in al.pairs if p.kind == FUSED] == ["BatchNormalization"] * 2
    e = found(ga.build(), gb.build())
    bn = e["batchnorm"][0]
    assert bn.side == "a" and bn.a.nodes == 2 and bn.b.nodes == 0
    assert bn.a.params == 4 * (8 + 16)  # scale, B, mean, var per channel
    assert "folded into the Conv on B" in bn.title
    assert "only_one_side" not in e  # a fused norm is not "removed"


def test_changed_kernel():
    ga, gb = G(), G()
    ga.conv(3, 8); ga.conv(8, 8, k=3); ga.conv(8, 16)
    gb.conv(3, 8); gb.conv(8, 8, k=5); gb.conv(8, 16)
    a, b, al = pair(ga.build(), gb.build())
    assert kinds(al) == [SAME, CHANGED, SAME]
    assert al.pairs[1].changes == ("kernel", "macs")
    e = found(ga.build(), gb.build())["changed_shape"][0]
    assert e.delta("macs") == conv_macs(8, 8, 5, H, W) - conv_macs(8, 8, 3, H, W)
    assert "kernel 3×3 → 5×5" in e.items[0]


def test_alignment_never_pairs_families_and_is_order_based():
    def sig(fam, c_in, c_out, macs=1):
        return Signature(fam, fam, fam, (), c_in, c_out, 1, (), (), macs)

    xs = [sig("conv", 3, 8), sig("norm", 8, 8), sig("conv", 8, 16), sig("matmul", 16, 10)]
    ys = [sig("conv", 3, 8), sig("conv", 8, 16, macs=2), sig("matmul", 16, 10)]
    assert align_signatures(xs, ys) == [(0, 0), (1, None), (2, 1), (3, 2)]
    # nothing in common: a removal and an insertion, never a "changed" pair
    assert align_signatures([sig("conv", 3, 8)], [sig("conv", 5, 7)]) == [(0, None), (None, 0)]


def test_blocks_cut_at_residual_merges():
    g = G()
    g.conv(3, 8)
    x = g.cur
    g.conv(8, 8); g.conv(8, 8)
    g.op("Add", x)
    g.conv(8, 8)
    a, b, al = pair(g.build(), g.build())
    assert [p.block for p in al.pairs] == [0, 0, 0, 1]
    assert all(p.kind == SAME for p in al.pairs)


def _attention(seq: int = 16, hq: int = 8, hkv: int = 8, hidden: int = 64, four_d: bool = False) -> onnx.ModelProto:
    """ai.onnx Attention (opset 23) on Q, K, V inputs: 3-D [1, S, H·D] with q_num_heads/kv_num_heads,
    or 4-D [1, H, S, D] (the heads on axis 1, no attribute)."""
    d = hidden // hq
    if four_d:
        ins = [vi("q", [1, hq, seq, d]), vi("k", [1, hkv, seq, d]), vi("v", [1, hkv, seq, d])]
        attrs = {}
    else:
        ins = [vi("q", [1, seq, hidden]), vi("k", [1, seq, hkv * d]), vi("v", [1, seq, hkv * d])]
        attrs = {"q_num_heads": hq, "kv_num_heads": hkv}
    node = helper.make_node("Attention", ["q", "k", "v"], ["y"], name="attn", **attrs)
    return model([node], ins, [vi("y", None)], opset=23)


def _attention_macs(seq: int, hq: int, hidden: int) -> int:
    d = hidden // hq
    return hq * seq * seq * (d + d)  # B·Hq·Sq·T·(D + Dv), B = 1


@pytest.mark.parametrize("four_d", [False, True])
def test_attention_heads_are_part_of_the_signature(four_d):
    # the same MACs (B·Sq·T·2·hidden whatever the split into heads): only the heads tell them apart
    a, b, al = pair(_attention(hq=8, four_d=four_d), _attention(hq=4, hkv=4, four_d=four_d))
    assert _attention_macs(16, 8, 64) == _attention_macs(16, 4, 64) == al.sig_a[al.pairs[0].a].macs
    assert kinds(al) == [CHANGED]
    assert al.pairs[0].changes == ("group", "kv_heads")
    assert (al.sig_a[al.pairs[0].a].label(), al.sig_b[al.pairs[0].b].label()) == ("Attention 64→64 h8",
                                                                                 "Attention 64→64 h4")
    # grouped-query attention: fewer key/value heads only
    a, b, al = pair(_attention(hq=8, four_d=four_d), _attention(hq=8, hkv=2, four_d=four_d))
    assert kinds(al) == [CHANGED] and al.pairs[0].changes == ("kv_heads",)
    assert al.sig_b[al.pairs[0].b].label() == "Attention 64→64 h8 kv2"
    e = found(_attention(hq=8, four_d=four_d), _attention(hq=8, hkv=2, four_d=four_d))["changed_shape"][0]
    assert "kv heads 8 → 2" in e.items[0] and e.delta("macs") == 0


def test_attention_with_another_sequence_length_changes_only_in_size():
    a, b, al = pair(_attention(seq=16), _attention(seq=32))
    assert kinds(al) == [CHANGED]
    assert al.pairs[0].changes == ("macs",)  # same heads, same widths
    assert al.sig_b[al.pairs[0].b].macs - al.sig_a[al.pairs[0].a].macs == (
        _attention_macs(32, 8, 64) - _attention_macs(16, 8, 64))
    [e] = found(_attention(seq=16), _attention(seq=32))["changed_shape"]
    short, long = _attention_macs(16, 8, 64), _attention_macs(32, 8, 64)
    assert e.items == (f"block 0: attn ↔ attn: macs {short:,} → {long:,}",)


# ------------------------------------------------------------------------------------ explanations

def test_stride_moved():
    """v1.5 (stride on the 3×3) vs v1 (stride on the first 1×1): same weights, fewer MACs."""
    ga, gb = G(c=8), G(c=8)
    ga.conv(8, 4, k=1, stride=1); ga.conv(4, 4, k=3, stride=2); ga.conv(4, 16, k=1)
    gb.conv(8, 4, k=1, stride=2); gb.conv(4, 4, k=3, stride=1); gb.conv(4, 16, k=1)
    e = found(ga.build(), gb.build())
    assert "changed_shape" not in e
    s = e["stride_moved"][0]
    h2, w2 = H // 2, W // 2
    expected = conv_macs(8, 4, 1, h2, w2) - conv_macs(8, 4, 1, H, W)  # the 3×3 costs the same on both
    assert s.delta("macs") == expected and s.a.nodes == s.b.nodes == 2
    assert s.delta("params") == 0
    assert "stride 2 moved from Conv 3×3 4→4 to Conv 1×1 8→4" in s.items[0]


def test_layout_transpose():
    ga, gb = G(), G(nhwc=True)
    ga.conv(3, 8)
    gb.op("Transpose", perm=[0, 3, 1, 2]); gb.conv(3, 8)
    e = found(ga.build(), gb.build())["layout_transpose"][0]
    assert e.side == "b" and e.node_count == 1 and e.flops == 0
    assert e.bytes == 2 * N * 3 * H * W * 4
    assert "NHWC→NCHW" in e.items[0]


def test_batchnorm_as_mul_add():
    ga, gb = G(), G()
    ga.conv(3, 8); ga.op("Relu")
    gb.conv(3, 8); gb.op("Mul", gb.init([1, 8, 1, 1])); gb.op("Add", gb.init([1, 8, 1, 1])); gb.op("Relu")
    e = found(ga.build(), gb.build())["batchnorm"][0]
    assert e.side == "b" and e.b.nodes == 2 and e.b.params == 16
    assert e.b.flops == 2 * N * 8 * H * W
    assert "folded into the Conv on A" in e.title and "Mul + Add" in e.title


def test_bias_on_one_side():
    ga, gb = G(), G()
    ga.conv(3, 8, bias=True)
    gb.conv(3, 8, bias=False)
    e = found(ga.build(), gb.build())["bias"][0]
    assert e.side == "a" and e.a.params == 8 and e.a.flops == N * 8 * H * W
    assert e.delta("params") == -8


def _gelu_erf(g: G) -> None:
    x = g.cur
    g.op("Div", g.init([], math.sqrt(2)))
    g.op("Erf")
    g.op("Add", g.init([], 1.0))
    g.op("Mul", x)
    g.op("Mul", g.init([], 0.5))


def _gelu_tanh(g: G) -> None:
    x = g.cur
    g.op("Pow", g.init([], 3.0))
    g.op("Mul", g.init([], 0.044715))
    g.op("Add", x)
    g.op("Mul", g.init([], math.sqrt(2 / math.pi)))
    g.op("Tanh")
    g.op("Add", g.init([], 1.0))
    g.op("Mul", x)
    g.op("Mul", g.init([], 0.5))


def _hardswish(g: G) -> None:
    x = g.cur
    g.op("Add", g.init([], 3.0))
    g.op("Clip", g.init([], 0.0), g.init([], 6.0))
    g.op("Mul", x)
    g.op("Div", g.init([], 6.0))


def _swish(g: G) -> None:
    x = g.cur
    s = g.op("Sigmoid")
    g.op("Mul", s, x=x)


def _mish(g: G) -> None:
    x = g.cur
    g.op("Softplus")
    t = g.op("Tanh")
    g.op("Mul", t, x=x)


@pytest.mark.parametrize("build_a, fused_b, nodes, name", [
    (_gelu_erf, "Gelu", 5, "GELU (Erf form)"),
    (_gelu_tanh, "Gelu", 8, "GELU (tanh form)"),
    (_hardswish, "HardSwish", 4, "HardSwish"),
    (_swish, "HardSwish", 2, "Swish/SiLU"),
    (_mish, "Mish", 3, "Mish"),
])
def test_decomposed_activation(build_a, fused_b, nodes, name):
    ga, gb = G(), G()
    ga.conv(3, 8); build_a(ga); ga.conv(8, 8)
    gb.conv(3, 8); gb.op(fused_b); gb.conv(8, 8)
    e = found(ga.build(opset=20), gb.build(opset=20))
    [d] = e["decomposed_activation"]
    assert d.title.startswith(name)
    assert d.side == "a" and d.a.nodes == nodes and d.b.nodes == 0
    assert d.a.bytes > 0 and d.delta("bytes") == -d.a.bytes
    assert f"B: no decomposed form; fused ops: {fused_b} ×1" in d.items


def test_no_decomposed_activation_on_fused_ops():
    g = G()
    g.conv(3, 8); g.op("Relu"); g.conv(8, 8)
    assert "decomposed_activation" not in found(g.build(), g.build())


def test_pad_separate():
    ga, gb = G(), G()
    ga.conv(3, 8, stride=2, pad=1)
    gb.op("Pad", gb.init([8], [0, 0, 0, 0, 0, 0, 1, 1], dtype=TensorProto.INT64)); gb.conv(3, 8, stride=2, pad=0)
    e = found(ga.build(), gb.build())
    p = e["pad_separate"][0]
    assert p.side == "b" and p.node_count == 1
    assert p.b.bytes == 4 * N * 3 * (H * W + (H + 1) * (W + 1)) + 8 * 8  # read x and the int64 pads, write

    assert "asymmetric" in p.items[0]


def test_constant_nodes():
    ga, gb = G(), G()
    lo = helper.make_node("Constant", [], ["lo"], value=helper.make_tensor("v", TensorProto.FLOAT, [], [0.0]))
    hi = helper.make_node("Constant", [], ["hi"], value=helper.make_tensor("v", TensorProto.FLOAT, [], [6.0]))
    ga.nodes += [lo, hi]
    ga.conv(3, 8); ga.op("Clip", "lo", "hi")
    gb.conv(3, 8); gb.op("Clip", gb.init([], 0.0), gb.init([], 6.0))
    e = found(ga.build(), gb.build())["constant_nodes"][0]
    assert e.side == "a" and e.node_count == 2 and e.flops == 0 and e.bytes == 0
    assert "Clip ×2" in e.items[0]


def test_shape_subgraph():
    ga, gb = G(), G()
    ga.conv(3, 8)
    y = ga.cur
    ga.op("Shape")
    ga.op("Gather", ga.init([], 0, dtype=TensorProto.INT64), axis=0)
    ga.op("Unsqueeze", ga.init([1], [0], dtype=TensorProto.INT64))
    ga.op("Concat", ga.init([1], [-1], dtype=TensorProto.INT64), axis=0)
    ga.op("Reshape", ga.cur, x=y)
    gb.conv(3, 8)
    gb.op("Reshape", gb.init([2], [1, -1], dtype=TensorProto.INT64))
    e = found(ga.build(), gb.build())["shape_subgraph"][0]
    assert e.side == "a" and e.a.nodes == 4
    assert "Concat ×1 + Gather ×1 + Shape ×1 + Unsqueeze ×1" in e.items[0]


def test_opset():
    ga, gb = G(), G()
    ga.conv(3, 8); gb.conv(3, 8)
    e = found(ga.build(opset=13), gb.build(opset=17))["opset"][0]
    assert "ai.onnx: A 13 (1 nodes), B 17 (1 nodes)" in e.items[0]


def test_dtype():
    ga, gb = G(), G(dtype=TensorProto.FLOAT16)
    ga.conv(3, 8); gb.conv(3, 8)
    e = found(ga.build(), gb.build())["dtype"][0]
    params = 8 * 3 * 9 + 8
    assert e.a.bytes == 4 * params and e.b.bytes == 2 * params
    assert "float16" in e.items[0] and "float32" in e.items[0]


def test_quantization_qdq():
    ga, gb = G(), G()
    ga.conv(3, 8)
    s, z = gb.init([], 0.1), gb.init([], 0, dtype=TensorProto.UINT8)
    gb.op("QuantizeLinear", s, z)
    gb.op("DequantizeLinear", s, z)
    gb.conv(3, 8)
    e = found(ga.build(), gb.build())["quantization"][0]
    assert e.side == "b" and e.node_count == 2
    assert "DequantizeLinear ×1 + QuantizeLinear ×1 — QDQ" in e.items[1]


def test_gemm_split_and_output_activation():
    def dense(split: bool, softmax: bool) -> onnx.ModelProto:
        g = G(c=16, h=1, w=1)
        g.op("Flatten")
        if split:
            g.op("MatMul", g.init([16, 10])); g.op("Add", g.init([10]))
        else:
            g.op("Gemm", g.init([10, 16]), g.init([10]), transB=1)
        if softmax:
            g.op("Softmax", axis=-1)
        return g.build()

    e = found(dense(False, False), dense(True, True))
    g = e["gemm_split"][0]
    assert g.a.nodes == 1 and g.b.nodes == 2 and g.delta("macs") == 0
    o = e["output_activation"][0]
    assert o.side == "b" and o.b.flops > 0
    a, b = sides(dense(False, False), dense(True, True))
    assert param_roles(a)["dense_bias"] == param_roles(b)["dense_bias"] == (1, 10)


def test_identical_models_explain_nothing():
    g = G()
    g.conv(3, 8); g.op("Relu"); g.conv(8, 16)
    assert found(g.build(), g.build()) == {}


def test_detector_registry_refuses_duplicates():
    with pytest.raises(ValueError, match="registered twice"):
        detector("stride_moved", "again")(lambda ctx: [])


# -------------------------------------------------------------------------------------- real pairs

@pytest.fixture(scope="module")
def resnet():
    return compare([MODELS / "resnet50_torch.onnx", MODELS / "resnet50_keras.onnx"], dims={"batch": 1})


@pytest.fixture(scope="module")
def mobilenet():
    return compare([MODELS / "mobilenetv2_torch.onnx", MODELS / "mobilenetv2_keras.onnx"], dims={"batch": 1})


def _ex(c: dict, id_: str) -> dict:
    [e] = [e for e in c["explanations"] if e["id"] == id_]
    return e


def test_resnet50_pair_macs_differ_by_the_moved_stride(resnet):
    """Keras' ResNet50 is v1 (stride 2 in the first 1×1 conv of a downsampling block), torchvision's
    v1.5 (stride in the 3×3): the MACs do not agree within 1%, and the moved stride is the whole gap."""
    ta, tb = (m["totals"] for m in resnet["models"])
    assert (ta["macs"], tb["macs"]) == (4_089_184_256, 3_857_973_248)
    c = resnet["comparisons"][0]
    m = c["closing"]["macs"]
    assert m["delta"] == tb["macs"] - ta["macs"] and not m["agree"] and abs(m["rel"]) > 0.01
    s = _ex(c, "stride_moved")
    # per block: the 1×1 conv (C_in -> C_in/2) runs at (H/2)² instead of H²: 3/4 of its MACs saved
    per_block = [3 * (256 * 128 * 56 * 56) // 4, 3 * (512 * 256 * 28 * 28) // 4, 3 * (1024 * 512 * 14 * 14) // 4]
    assert s["delta"]["macs"] == -sum(per_block) == m["delta"]
    assert len(s["items"]) == 3 and s["delta"]["params"] == 0
    assert m["explained"] == [{"id": "stride_moved", "title": s["title"], "delta": m["delta"], "share": 1.0}]
    assert m["residual"] == 0
    al = c["alignment"]
    assert al["counts"] == {"same": 47, "changed": 7, "inserted": 0, "removed": 0, "fused": 0}


def test_resnet50_pair_params_explained_line_by_line(resnet):
    ta, tb = (m["totals"] for m in resnet["models"])
    assert (ta["params"], tb["params"]) == (25_530_472, 25_583_592)
    c = resnet["comparisons"][0]
    rows = {r["role"]: r for r in c["params_breakdown"]}
    bn_channels = 26_560
    # torch: BN folded into the 53 bias-free convs (they gain a bias); Keras: biased convs + BN as Mul + Add
    assert rows["conv_bias"]["params_a"] == rows["conv_bias"]["params_b"] == bn_channels
    assert rows["bn_scale"]["params_b"] == rows["bn_shift"]["params_b"] == bn_channels
    assert rows["bn_scale"]["tensors_b"] == rows["bn_shift"]["tensors_b"] == 53
    assert sum(r["params_a"] for r in rows.values()) == ta["params"]
    assert sum(r["params_b"] for r in rows.values()) == tb["params"]
    p = c["closing"]["params"]
    assert p["delta"] == 2 * bn_channels and p["residual"] == 0
    assert [r["role"] for r in p["by_role"]] == ["bn_scale", "bn_shift"]
    bn = _ex(c, "batchnorm")
    assert bn["side"] == "b" and bn["b"]["nodes"] == 106 and bn["delta"]["params"] == 2 * bn_channels


def test_resnet50_pair_names_layout_and_other_artefacts(resnet):
    c = resnet["comparisons"][0]
    t = _ex(c, "layout_transpose")
    assert t["side"] == "b" and t["node_count"] == 1 and t["bytes"] == 2 * 224 * 224 * 3 * 4
    found_ids = [e["id"] for e in c["explanations"]]
    assert found_ids == ["stride_moved", "layout_transpose", "batchnorm", "pad_separate", "gemm_split",
                         "output_activation", "opset"]
    quiet = {ch["id"] for ch in c["checks"] if not ch["found"]}
    assert "decomposed_activation" in quiet  # checked: both use Relu
    text = RENDERERS["text"](resnet)
    assert "Checked, nothing found:" in text and "decomposed_activation" in text
    assert "not within 1%" in text and "Layout Transposes" in text


def test_mobilenetv2_pair_agrees_within_one_percent(mobilenet):
    ta, tb = (m["totals"] for m in mobilenet["models"])
    c = mobilenet["comparisons"][0]
    m = c["closing"]["macs"]
    assert m["agree"] and abs(tb["macs"] - ta["macs"]) <= 0.01 * ta["macs"]
    assert ta["macs"] == tb["macs"] == 300_774_272
    assert c["alignment"]["counts"]["same"] == 52 and c["alignment"]["counts"]["changed"] == 1  # Gemm vs MatMul
    # params: 17 depthwise convs keep BN as Mul + Add (no bias) where torch folded BN into them
    dw = 7_136
    p = c["closing"]["params"]
    assert (ta["params"], tb["params"], p["delta"], p["residual"]) == (3_487_816, 3_494_952, dw, 0)
    assert {r["role"]: r["delta"] for r in p["by_role"]} == {"conv_bias": -dw, "bn_scale": dw, "bn_shift": dw}
    assert _ex(c, "batchnorm")["b"]["nodes"] == 34
    assert _ex(c, "bias")["a"]["params"] == dw
    pads = _ex(c, "pad_separate")
    assert pads["b"]["nodes"] == 4 and all("asymmetric" in i for i in pads["items"][:4])
    assert _ex(c, "constant_nodes")["a"]["nodes"] == 70
    assert "stride_moved" not in [e["id"] for e in c["explanations"]]


def test_three_models_and_dims_missing_in_a_model_are_ignored():
    ga = G()
    ga.conv(3, 8)
    m = compare([MODELS / "mobilenetv2_torch.onnx", MODELS / "mobilenetv2_keras.onnx", ga.build()],
                dims={"batch": 1, "sequence": 7})
    assert [x["label"] for x in m["models"]] == ["A", "B", "C"]
    assert len(m["comparisons"]) == 2 and len(m["deltas"]) == 2
    assert m["models"][0]["dims"] == {"batch": 1} and m["models"][0]["dims_ignored"] == ["sequence"]
    assert m["models"][2]["dims"] == {} and "ignored" in m["models"][2]["warnings"][0]


def _doc_block(name: str) -> str:
    import re

    text = (Path(__file__).resolve().parent.parent / "docs" / "compare.md").read_text(encoding="utf-8")
    return re.search(r"<!-- output: " + name + r" .*?-->\n```text\n(.*?)```", text, re.S).group(1)


def test_docs_show_the_current_outputs(resnet, mobilenet):
    assert _doc_block("resnet50") == RENDERERS["text"](resnet)
    assert _doc_block("mobilenetv2") == RENDERERS["text"](mobilenet)


def test_docs_list_every_detector():
    text = (Path(__file__).resolve().parent.parent / "docs" / "compare.md").read_text(encoding="utf-8")
    assert [d for d in DETECTORS if f"| `{d}` |" not in text] == []


# ------------------------------------------------------------------------------- renderers and CLI

#: control and bidi characters a hostile name carries: a newline, ESC, NUL, a right-to-left override
CONTROL = "\n\x1b\x00\u202e"


def _evil_pair() -> tuple[onnx.ModelProto, onnx.ModelProto]:
    ga, gb = G(), G()
    ga.conv(3, 8, name='<img src=x onerror="window.__pwned=1">' + CONTROL); ga.conv(8, 8, k=3)
    gb.conv(3, 8, name="</script><b>bold|`md`</b>" + CONTROL); gb.conv(8, 8, k=5, name="k5" + CONTROL)
    ma, mb = ga.build(), gb.build()
    ma.graph.name = "graph" + CONTROL
    mb.producer_name, mb.producer_version = "tool" + CONTROL, "1.0" + CONTROL
    return ma, mb


def _raw_controls(text: str) -> list[str]:
    """Control and format characters (categories Cc, Cf) other than the output's own line breaks."""
    return [c for c in text if c != "\n" and unicodedata.category(c) in ("Cc", "Cf")]


@pytest.mark.parametrize("fmt", ["text", "md"])
def test_text_and_md_escape_control_characters(fmt):
    m = compare(list(_evil_pair()))
    text = RENDERERS[fmt](m)
    assert _raw_controls(text) == []
    assert "x1b" in text and "u202e" in text  # escaped, visible
    if fmt == "md":
        [row] = [line for line in text.splitlines() if line.startswith("| &lt;img")]  # the block-title row
        assert "\\\\x1b\\\\x00\\\\u202e ↔ &lt;/script&gt;" in row and row.endswith("|")
    else:
        assert "tool\\n\\x1b\\x00\\u202e 1.0\\n\\x1b\\x00\\u202e · opsets" in text  # the producer line
    assert json.loads(RENDERERS["json"](m))["models"][1]["producer_name"] == "tool" + CONTROL  # JSON: exact


def test_html_shows_control_characters_escaped_outside_its_data_blocks():
    """The HTML page shows names as the text output does (``\\x1b``...): a U+202E in a node name
    cannot reorder what the page shows. The embedded JSON data keeps the exact names."""
    import re

    m = compare(list(_evil_pair()))
    html = RENDERERS["html"](m)
    shown = re.sub(r"<script\b[^>]*>.*?</script>", "", html, flags=re.S)
    assert _raw_controls(shown.replace("\t", "")) == []
    assert "tool\\n\\x1b\\x00\\u202e" in shown


@pytest.mark.parametrize("name,version,shown", [("tf2onnx", "1.17.0 None", "tf2onnx 1.17.0"),
                                                 ("pytorch", "", "pytorch"), ("", "", "?"),
                                                 ("onnx", "1.17.0", "onnx 1.17.0")])
def test_text_header_producer(name, version, shown):
    """tf2onnx writes its version and git commit, ``None`` when it has none: the header leaves that out,
    and an empty version; the JSON keeps what the file says."""
    g = G()
    g.conv(3, 8)
    ma, mb = g.build(), g.build()
    mb.producer_name, mb.producer_version = name, version
    m = compare([ma, mb])
    [line] = [x for x in RENDERERS["text"](m).splitlines() if x.startswith("  B  ")]
    assert f"  {shown} · opsets" in line and "None" not in line
    assert m["models"][1]["producer_version"] == version


@pytest.mark.parametrize("fmt", sorted(RENDERERS))
def test_renderers_escape_names(fmt):
    text = RENDERERS[fmt](compare(list(_evil_pair())))
    if fmt == "html":
        assert "<img src=x" not in text and "&lt;img src=x" in text
        assert "</script><b>" not in text
        assert "script-src &#39;none&#39;" in text and "http://" not in text and "https://" not in text
    if fmt == "md":
        assert "<img" not in text and "</script>" not in text
    if fmt == "json":
        assert json.loads(text)["schema"] == "onnxperf.compare/1"


def test_cli_json_is_deterministic(tmp_path):
    a, b = str(MODELS / "resnet50_torch.onnx"), str(MODELS / "resnet50_keras.onnx")
    outs = []
    for k in range(2):
        p = tmp_path / f"d{k}.json"
        assert cli.main(["compare", a, b, "--dim", "batch=1", "--format", "json", "-o", str(p)]) == 0
        outs.append(p.read_bytes())
    assert outs[0] == outs[1]
    m = json.loads(outs[0])
    assert m["schema"] == "onnxperf.compare/1" and m["options"]["dims"] == {"batch": 1}


def test_cli_html_by_extension_md_and_hw(tmp_path, capsys):
    a, b = str(MODELS / "mobilenetv2_torch.onnx"), str(MODELS / "mobilenetv2_keras.onnx")
    out = tmp_path / "diff.html"
    assert cli.main(["compare", a, b, "--dim", "batch=1", "--hw", "a100-40gb", "-o", str(out)]) == 0
    html = out.read_text()
    assert html.startswith("<!DOCTYPE html>") and 'id="compare-data"' in html and "Predicted latency" in html
    assert cli.main(["compare", a, b, "--dim", "batch=1", "--format", "md"]) == 0
    md = capsys.readouterr().out
    assert "within 1%: the same arithmetic" in md and "| Parameters |" in md


def test_cli_validate_measures_every_model_under_the_same_conditions(tmp_path, capsys, monkeypatch):
    """--validate: each model is measured with the same bindings, runs, warm-up, threads, optimization
    level, seed and weights (the measurement itself is tests/test_compare_validate.py's business)."""
    from types import SimpleNamespace

    import onnxperf.products.validate.compare as validate_module

    calls = []

    def fake_validate(request, spec, **kwargs):
        calls.append((request.model, spec.id, {"dims": dict(request.dims), "input_shapes": dict(request.input_shapes),
                                               **kwargs}))
        return SimpleNamespace(latency=SimpleNamespace(p50_s=0.001 * len(calls)))

    monkeypatch.setattr(validate_module, "validate", fake_validate)
    paths = []
    for k, extra in enumerate((False, True, True)):
        nodes = [helper.make_node("MatMul", ["x", "w"], ["y" if not extra else "t"])]
        if extra:
            nodes.append(helper.make_node("Relu", ["t"], ["y"]))
        m = model(nodes, [vi("x", ["batch", 8])], [vi("y", None)], [const("w", [8, 8])])
        paths.append(str(tmp_path / f"m{k}.onnx"))
        onnx.save(m, paths[-1])
    assert cli.main(["compare", *paths, "--dim", "batch=4", "--hw", "t4", "--validate", "--runs", "3",
                     "--warmup", "2", "--threads", "1", "--opt", "basic", "--seed", "7", "--random-weights",
                     "--timeout", "12", "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert [c[0] for c in calls] == paths and {c[1] for c in calls} == {"t4"}
    conditions = [c[2] for c in calls]
    assert conditions[0] == {"dims": {"batch": 4}, "runs": 3, "warmup": 2, "threads": 1, "opt": "basic", "seed": 7,
                             "random_weights": True, "timeout_s": 12.0, "input_shapes": {},
                             "provider": "CPUExecutionProvider", "max_memory_bytes": 4 << 30, "progress": False}
    assert conditions[1] == conditions[0] and conditions[2] == conditions[0]
    assert [x["totals"]["measured_latency_s"] for x in d["models"]] == [0.001, 0.002, 0.003]
    assert d["options"]["validate"] is True


def test_cli_errors(capsys):
    a = str(MODELS / "mobilenetv2_torch.onnx")
    assert cli.main(["compare", a]) == 2
    assert "at least two models" in capsys.readouterr().err
    assert cli.main(["compare", a, a, "--validate"]) == 2
    assert "--validate" in capsys.readouterr().err
    assert cli.main(["compare", a, "missing.onnx"]) == 2


# ------------------------------------------------------------------------------------------ browser

#: the same browser and flags as tests/test_report_browser.py
CHROMIUM = os.environ.get("ONNXPERF_CHROMIUM", "/usr/bin/chromium")
BROWSER_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run"]


def _browser():
    sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed")
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        pytest.skip(f"Chromium not found at {CHROMIUM}")
    return sync_api


def test_html_diff_in_browser(tmp_path):
    sync_api = _browser()
    page_file = tmp_path / "diff.html"
    page_file.write_text(RENDERERS["html"](compare(list(_evil_pair()))), encoding="utf-8")
    errors, requests, dialogs = [], [], []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        try:
            page = browser.new_page()
            page.on("console", lambda m: errors.append(m.text) if m.type in ("error", "warning") else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("request", lambda r: requests.append(r.url))
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.goto(page_file.as_uri())
            page.wait_for_load_state("load")
            assert page.evaluate("window.__pwned === undefined")
            assert page.locator("td.name", has_text='<img src=x onerror="window.__pwned=1">').count() >= 1
            assert page.locator("td.name", has_text="</script><b>bold|`md`</b>").count() >= 1
            assert page.locator("b", has_text="bold").count() == 0
            assert page.locator("#verdict-0").is_visible()
            data = json.loads(page.locator("#compare-data").text_content())
            assert data["schema"] == "onnxperf.compare/1"
        finally:
            browser.close()
    assert errors == [] and dialogs == []
    assert requests == [page_file.as_uri()]
