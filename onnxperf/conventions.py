"""Counting conventions: what MACs and FLOPs mean, and how other tools count.

* ``default`` (onnxperf): a MAC is one multiply-accumulate of matmul-like or conv work; a
  FLOP is one floating-point operation: 2 per MAC plus every elementwise, reduction,
  normalization and activation op, with the per-element costs of docs/conventions.md.
* ``torch``: ``torch.utils.flop_counter.FlopCounterMode``: 2 FLOPs per MAC of conv and
  matmul-like ops (mm, addmm, bmm, baddbmm, convolution, scaled-dot-product attention),
  nothing else; biases are not counted. torchvision's published "GFLOPS" (``meta["_ops"]``)
  are these FLOPs halved, i.e. GMACs of conv and matmul-like ops.
* ``fvcore``: ``fvcore.nn.FlopCountAnalysis``: one "flop" per MAC of conv, matmul, linear
  and einsum (no bias); batch norm in eval 2 per element (1 without affine); layer, group
  and instance norm 5 per element (4 without affine); nearest upsampling 1 and bilinear 4
  per output element; adaptive (global) average pooling 1 per input element; nothing else.

Memory traffic is the same under every convention.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the rules are imported where a cost is re-expressed: the CLI's parser reads only the names
    from .ops.registry import NodeView, OpCost, RuleEntry

CONVENTIONS = ("default", "torch", "fvcore")

#: families whose MACs torch's flop counter sees (matmul-like and conv kernels)
_TORCH_FAMILIES = {"conv", "matmul", "attention", "rnn"}

_FVCORE_NORM_AFFINE_INPUT = {"LayerNormalization": 1, "GroupNormalization": 1,
                             "InstanceNormalization": 1}


def _fvcore(entry: RuleEntry, n: NodeView, cost: OpCost) -> OpCost:
    from .ops.registry import OpCost

    op = n.op_type
    if entry.family in ("conv", "matmul", "attention", "rnn"):
        return OpCost(macs=cost.macs, flops=cost.macs, exact=cost.exact)
    if op == "BatchNormalization":
        return OpCost(flops=n.inp(0).numel * 2, exact=cost.exact)
    if op in _FVCORE_NORM_AFFINE_INPUT:
        affine = n.has_input(_FVCORE_NORM_AFFINE_INPUT[op])
        return OpCost(flops=n.inp(0).numel * (5 if affine else 4), exact=cost.exact)
    if op in ("Resize", "Upsample"):
        mode = n.attr("mode", "nearest")
        per = 1 if mode == "nearest" else 4 if mode in ("linear", "bilinear") else 0
        return OpCost(flops=n.out(0).numel * per, exact=cost.exact)
    if op == "GlobalAveragePool":
        return OpCost(flops=n.inp(0).numel, exact=cost.exact)
    if op == "GridSample":
        return OpCost(flops=n.out(0).numel * 4, exact=cost.exact)
    return OpCost(exact=cost.exact)


def apply(convention: str, entry: RuleEntry, n: NodeView, cost: OpCost) -> OpCost:
    """Re-express a rule's default cost under ``convention``. Bytes are never changed
    (the walker keeps the traffic from the default cost)."""
    if convention == "default":
        return cost
    from .ops.registry import OpCost

    if convention == "torch":
        if entry.family in _TORCH_FAMILIES:
            return OpCost(macs=cost.macs, flops=2 * cost.macs, exact=cost.exact)
        return OpCost(exact=cost.exact)
    if convention == "fvcore":
        return _fvcore(entry, n, cost)
    raise ValueError(f"unknown convention {convention!r} (choose from {', '.join(CONVENTIONS)})")
