"""Patterns in one graph that the explanation detectors compare between two exports: how a BatchNorm
is kept after a Conv, layout Transposes, decomposed activations, separate Pads, output activations,
constant-only subgraphs, float Casts, quantization ops. Pure functions of a :class:`Side`; each returns
node ids in execution order.
"""

from __future__ import annotations

import numpy as np

from onnxperf.graph.folding import foldable_nodes
from onnxperf.patterns.side import Side


def prod(xs) -> int:
    n = 1
    for x in xs:
        n *= x
    return n


def scalar_value(side: Side, t: str) -> float | None:
    """The value of a one-element constant (None if not constant, unread or larger)."""
    v = side.const_value(t)
    if v is None or np.asarray(v).size != 1:
        return None
    return float(np.asarray(v).reshape(()))


def other_input(side: Side, nid: int, t: str) -> str | None:
    """For a two-input node reading ``t``, its other input."""
    ins = [x for x in side.node(nid).input if x]
    if len(ins) != 2 or t not in ins:
        return None
    return ins[1] if ins[0] == t else ins[0]


def output_of(side: Side, nid: int) -> str:
    outs = side.node(nid).output
    return outs[0] if outs else ""


def out_channels(side: Side, nid: int) -> int | None:
    """Output channels of a Conv (weight dim 0) or Gemm/MatMul (output's last dim)."""
    node = side.node(nid)
    if side.costs[nid].family == "conv":
        ws = side.shape(node.input[1]) if len(node.input) > 1 else None
        return ws[0] if ws and isinstance(ws[0], int) else None
    ys = side.shape(output_of(side, nid))
    return ys[-1] if ys and isinstance(ys[-1], int) else None


def per_channel(side: Side, t: str, c: int | None) -> bool:
    """A constant with one value per channel (``[C]``, ``[C,1,1]``, ``[1,C,1,1]``), C > 1."""
    rec = side.const(t)
    if rec is None or c is None or c <= 1 or rec.numel != c:
        return False
    return sum(1 for d in rec.dims if d != 1) == 1


def bn_after(side: Side, nid: int) -> tuple[str, tuple[int, ...]]:
    """How the BatchNorm after Conv/Gemm ``nid`` is kept: ``node`` (a BatchNormalization node),
    ``mul_add`` (per-channel Mul then Add by constants: an unfolded BN), ``mul`` (scale only), or
    ``none`` (folded into the node's weights, or no BN at all); with the nodes it spans."""
    user = side.single_user(nid)
    if user is None:
        return "none", ()
    op = side.op(user)
    if op == "BatchNormalization":
        return "node", (user,)
    c = out_channels(side, nid)
    if op == "Mul":
        k = other_input(side, user, output_of(side, nid))
        if k is None or not per_channel(side, k, c):
            return "none", ()
        nxt = side.single_user(user)
        if nxt is not None and side.op(nxt) == "Add":
            k2 = other_input(side, nxt, output_of(side, user))
            if k2 is not None and per_channel(side, k2, c):
                return "mul_add", (user, nxt)
        return "mul", (user,)
    return "none", ()


LAYOUT_PERMS = {(0, 3, 1, 2): "NHWC→NCHW", (0, 2, 3, 1): "NCHW→NHWC", (0, 2, 1): "NWC↔NCW",
                 (0, 4, 1, 2, 3): "NDHWC→NCDHW", (0, 2, 3, 4, 1): "NCDHW→NDHWC"}


def layout_transposes(side: Side) -> list[tuple[int, str]]:
    """Transposes that move the channel axis between last and second (NHWC↔NCHW and the 1-D/3-D
    variants), with their direction."""
    out = []
    for nid in side.order:
        if side.op(nid) != "Transpose":
            continue
        perm = side.attrs(nid).get("perm")
        xs = side.shape(side.node(nid).input[0]) if side.node(nid).input else None
        if perm is None or xs is None or tuple(perm) not in LAYOUT_PERMS:
            continue
        if tuple(perm) == (0, 2, 1) and not any(side.costs[u].family == "conv" for u in side.users(output_of(side, nid))):
            continue  # a 3-D swap of the last two axes is a layout change only in front of a Conv1d
        out.append((nid, LAYOUT_PERMS[tuple(perm)]))
    return out


def bias_input(side: Side, nid: int) -> str | None:
    """The bias tensor of a Conv/Gemm (None: the node has none; "": the op takes no bias input, as
    MatMul, so there is nothing to compare)."""
    node = side.node(nid)
    if side.costs[nid].family == "conv" and node.op_type in ("Conv", "ConvTranspose", "NhwcConv", "FusedConv"):
        return node.input[2] if len(node.input) > 2 and node.input[2] else None
    if node.op_type == "Gemm":
        return node.input[2] if len(node.input) > 2 and node.input[2] else None
    return ""  # no bias input in this op: not compared


def match_swish(side: Side) -> list[tuple[int, ...]]:
    """x · Sigmoid(x) (Swish/SiLU) and x · HardSigmoid(x) (HardSwish), as two nodes."""
    out = []
    for nid in side.order:
        if side.op(nid) not in ("Sigmoid", "HardSigmoid") or not side.node(nid).input:
            continue
        x = side.node(nid).input[0]
        for u in side.users(output_of(side, nid)):
            if side.op(u) == "Mul" and other_input(side, u, output_of(side, nid)) == x:
                out.append((nid, u))
    return out


def _near(v: float | None, *targets: float) -> bool:
    return v is not None and any(abs(v - t) <= 1e-6 * max(1.0, abs(t)) for t in targets)


def match_hardswish(side: Side) -> list[tuple[int, ...]]:
    """x · Clip(x + 3, 0, 6) / 6 (the division also as · 1/6, before or after the · x), four nodes."""
    out = []
    for nid in side.order:
        if side.op(nid) != "Add":
            continue
        ins = [t for t in side.node(nid).input if t]
        consts = [t for t in ins if side.is_const(t)]
        if len(ins) != 2 or len(consts) != 1 or not _near(scalar_value(side, consts[0]), 3.0):
            continue
        x = ins[0] if ins[1] == consts[0] else ins[1]
        clip = side.single_user(nid)
        if clip is None or side.op(clip) != "Clip":
            continue
        nodes = [nid, clip]
        t = output_of(side, clip)
        cur = side.single_user(clip)
        mul_x = scale = False
        for _ in range(2):
            if cur is None or side.op(cur) not in ("Mul", "Div"):
                break
            o = other_input(side, cur, t)
            if o == x and side.op(cur) == "Mul":
                mul_x = True
            elif o is not None and _near(scalar_value(side, o), 6.0 if side.op(cur) == "Div" else 1 / 6):
                scale = True
            else:
                break
            nodes.append(cur)
            t = output_of(side, cur)
            cur = side.single_user(cur)
        if mul_x and scale:
            out.append(tuple(nodes))
    return out


def _grow(side: Side, nodes: set[int], x: str | None, ops: tuple[str, ...], depth: int) -> set[int]:
    """Extend ``nodes`` forward through ``ops`` whose every computed input comes from ``nodes``, is ``x``,
    or is ``x`` times a constant (the 0.5 · x of GELU)."""
    frontier = sorted(nodes)
    for _ in range(depth):
        nxt = []
        for f in frontier:
            for u in side.users(output_of(side, f)):
                if side.op(u) not in ops or u in nodes:
                    continue
                acts = side.activation_inputs(u)
                if all(side.producer(t) in nodes or t == x or _is_scaled_x(side, t, x) for t in acts):
                    nodes.add(u)
                    nodes.update(side.producer(t) for t in acts if _is_scaled_x(side, t, x))
                    nxt.append(u)
        frontier = nxt
    return nodes


def _is_scaled_x(side: Side, t: str, x: str | None) -> bool:
    p = side.producer(t)
    if p is None or x is None or side.op(p) != "Mul":
        return False
    return side.activation_inputs(p) == [x]


def match_gelu_erf(side: Side) -> list[tuple[int, ...]]:
    """0.5 · x · (1 + Erf(x / √2)): Div (or Mul by 1/√2), Erf, Add 1, and two Muls."""
    out = []
    for nid in side.order:
        if side.op(nid) != "Erf" or not side.node(nid).input:
            continue
        pre = side.producer(side.node(nid).input[0])
        if pre is None or side.op(pre) not in ("Div", "Mul") or len(side.activation_inputs(pre)) != 1:
            continue
        x = side.activation_inputs(pre)[0]
        nodes = _grow(side, {pre, nid}, x, ("Add", "Mul"), 3)
        if len(nodes) >= 5:
            out.append(tuple(sorted(nodes)))
    return out


def match_gelu_tanh(side: Side) -> list[tuple[int, ...]]:
    """0.5 · x · (1 + Tanh(√(2/π) · (x + 0.044715 · x³))) from its Pow(x, 3): Muls, Adds and a Tanh."""
    out = []
    for nid in side.order:
        node = side.node(nid)
        if node.op_type != "Pow" or len(node.input) < 2 or not _near(scalar_value(side, node.input[1]), 3.0):
            continue
        nodes = _grow(side, {nid}, node.input[0], ("Add", "Mul", "Tanh"), 7)
        if any(side.op(n) == "Tanh" for n in nodes) and len(nodes) >= 7:
            out.append(tuple(sorted(nodes)))
    return out


def match_mish(side: Side) -> list[tuple[int, ...]]:
    """x · Tanh(Softplus(x)), three nodes."""
    out = []
    for nid in side.order:
        if side.op(nid) != "Softplus" or not side.node(nid).input:
            continue
        x = side.node(nid).input[0]
        t = side.single_user(nid)
        if t is None or side.op(t) != "Tanh":
            continue
        m = side.single_user(t)
        if m is not None and side.op(m) == "Mul" and other_input(side, m, output_of(side, t)) == x:
            out.append((nid, t, m))
    return out


ACTIVATIONS = (
    ("GELU (Erf form)", ("Gelu", "FastGelu", "BiasGelu"), match_gelu_erf),
    ("GELU (tanh form)", ("Gelu", "FastGelu", "BiasGelu"), match_gelu_tanh),
    ("HardSwish (x·Clip(x+3,0,6)/6)", ("HardSwish",), match_hardswish),
    ("Swish/SiLU or HardSwish (x·Sigmoid(x), x·HardSigmoid(x))", ("Swish", "HardSwish", "QuickGelu"), match_swish),
    ("Mish (x·Tanh(Softplus(x)))", ("Mish",), match_mish),
)


PAD_USERS = ("conv", "pool")


def separate_pads(side: Side) -> list[int]:
    """Constant-mode Pad nodes whose every reader is a Conv or a pool (padding they could hold)."""
    out = []
    for nid in side.order:
        if side.op(nid) != "Pad" or side.attrs(nid).get("mode", "constant") not in ("constant", b"constant"):
            continue
        users = side.users(output_of(side, nid))
        if users and all(side.costs[u].family in PAD_USERS for u in users):
            out.append(nid)
    return out


def pad_text(side: Side, nid: int) -> str:
    """``Pad 'name' pads [...] (asymmetric) before Conv``."""
    node = side.node(nid)
    pads = side.const_value(node.input[1]) if len(node.input) > 1 and node.input[1] else side.attrs(nid).get("pads")
    users = sorted({side.op(u) for u in side.users(output_of(side, nid))})
    if pads is None:
        return f"Pad {node.name!r} before {', '.join(users)}"
    p = [int(v) for v in np.asarray(pads).reshape(-1)]
    half = len(p) // 2
    asym = p[:half] != p[half:]
    return (f"Pad {node.name!r} pads {p} ({'asymmetric' if asym else 'symmetric'}) before {', '.join(users)}")


def inner_pads(side: Side) -> int:
    """Convs and pools that pad inside the node (non-zero ``pads`` or a SAME ``auto_pad``)."""
    n = 0
    for nid in side.order:
        if side.costs[nid].family in PAD_USERS:
            at = side.attrs(nid)
            if any(int(v) for v in at.get("pads", ()) or ()) or str(at.get("auto_pad", "NOTSET")) in ("SAME_UPPER",
                                                                                                      "SAME_LOWER"):
                n += 1
    return n


HEADS = ("Softmax", "LogSoftmax", "Sigmoid")


def output_heads(side: Side) -> list[int]:
    """Softmax/LogSoftmax/Sigmoid nodes that produce a graph output."""
    return [n for n in side.order if side.op(n) in HEADS and output_of(side, n) in side.graph_outputs]


def foldable(side: Side) -> list[int]:
    """Nodes that compute only from constants and static shapes (a Shape whose input shape is fully
    known with the bound dims): a constant-folding pass would remove them (:mod:`onnxperf.graph.folding`)."""
    def static(t: str) -> bool:
        s = side.shape(t)
        return s is not None and all(isinstance(d, int) for d in s)
    return foldable_nodes(side.graph, static)


def domain_nodes(side: Side, domain: str) -> list[int]:
    """Nodes of an operator domain ("" is the default domain, also spelled ai.onnx)."""
    return [n for n in side.order if (side.node(n).domain or "") in ((domain,) if domain else ("", "ai.onnx"))]


def float_casts(side: Side) -> list[int]:
    """Casts from one float type to another (mixed-precision boundaries)."""
    out = []
    for n in side.order:
        if side.op(n) != "Cast":
            continue
        c = side.costs[n]
        di = c.inputs[0].dtype if c.inputs and c.inputs[0] is not None else ""
        do = c.outputs[0].dtype if c.outputs and c.outputs[0] is not None else ""
        if di != do and all(x.startswith(("float", "bfloat")) for x in (di, do)):
            out.append(n)
    return out


QUANT_OPS = frozenset({"QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "ConvInteger", "MatMulInteger",
                        "MatMulIntegerToFloat", "MatMulNBits", "QGemm", "QAttention", "DynamicQuantizeMatMul",
                        "GatherBlockQuantized", "MatMulInteger16", "DynamicQuantizeLSTM"})


def quant_nodes(side: Side) -> list[int]:
    """Quantize/Dequantize nodes and integer or QLinear ops."""
    return [n for n in side.order if side.op(n) in QUANT_OPS or side.op(n).startswith("QLinear")]
