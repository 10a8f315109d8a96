"""Normalizations (ai.onnx): BatchNormalization, LayerNormalization, GroupNormalization,
InstanceNormalization, RMSNormalization, LpNormalization, MeanVarianceNormalization, LRN.

Each costs ``e·X + r·rows``: e ops per element of X and r ops per normalized row / group /
channel, from :data:`NORM` (follow the ONNX function bodies / reference implementations).
A reduction inside a normalization is 1 op per element reduced (the accumulator seeded with
the identity), as in the Softmax family; divides by the row length, ``+ epsilon``, sqrt and
reciprocal are per-row ops. Integer inputs make the ops integer ops.

Notation: N batch, C channels, G groups, S = prod(spatial dims), L = row length.
"""

from __future__ import annotations

from dataclasses import replace

from onnxperf.cost.ops.registry import NodeView, OpCost, arith, axis_of, prod, rule

#: (ops per element, ops per row / group / channel). docs/rules.md reproduces it.
NORM: dict[str, tuple[int, int]] = {
    # inference, per-channel constants folded at run time: a = scale / sqrt(var + eps),
    # b = B − mean·a (per channel: add, sqrt, div, mul, sub); then y = x·a + b (mul, add).
    "BatchNormalization": (2, 5),
    # sum, sub, square, sum, ·inv_std, ·scale (+ bias: LAYER_NORM_BIAS); per row: 2 divides
    # (mean, variance), + eps, sqrt, reciprocal.
    "LayerNormalization": (6, 5),
    # as LayerNormalization with the bias always present; rows are the N·G groups
    "GroupNormalization": (7, 5),
    # as GroupNormalization with rows the N·C instances
    "InstanceNormalization": (7, 5),
    # x·x, sum, ·inv_rms, ·scale; per row: divide (mean), + eps, sqrt, reciprocal
    "RMSNormalization": (4, 4),
    # ONNX function body: x², sum (E[x²]), sum (E[x]), x − mean, divide by std per element;
    # per group: 2 divides (means), mean², subtract (variance), sqrt, + eps
    "MeanVarianceNormalization": (5, 6),
}

#: LayerNormalization's optional bias: one add per element.
LAYER_NORM_BIAS = 1

#: BatchNormalization with training_mode=1 (or, before opset 14, with the statistics outputs
#: present): batch statistics on top of the inference form: per element sum, sub, square, sum;
#: per channel 2 divides (mean, variance) + running-stat updates (2 × mul, mul, add).
BATCH_NORM_TRAINING: tuple[int, int] = (4, 8)

#: LpNormalization, keyed by p: (ops per element, ops per row). p=1: |x|, sum, divide;
#: p=2: x·x, sum, divide, and sqrt per row; any other p: |x|, pow, sum, divide, and the
#: 1/p power per row (LP_NORM_OTHER).
LP_NORM: dict[int, tuple[int, int]] = {1: (3, 0), 2: (3, 1)}
LP_NORM_OTHER: tuple[int, int] = (4, 1)

#: LRN: per element x², the windowed sum over ``size`` channels (size − 1 adds; channel
#: edges are not subtracted), ·alpha/size, + bias, ^beta, divide: size + 4 ops.
LRN_FIXED = 4


def _cost(n: NodeView, per_elem: int, per_row: int, rows: int) -> OpCost:
    x = n.inp(0)
    return arith(per_elem * x.numel + per_row * rows, x.elem_type)


def _batch_norm(n: NodeView, training: bool) -> OpCost:
    """ops = e·X + r·C with (e, r) = NORM["BatchNormalization"] (inference, constants
    folded per channel), plus BATCH_NORM_TRAINING when training. C = elements of ``scale``
    (C, or C·S with spatial=0 at opsets 7–9).

    The rule needs only the inputs, so outputs whose shapes inference left unknown (ONNX infers
    none of BatchNormalization-9's four statistics outputs) do not block it: it writes them
    itself, Y as X and each statistic as ``mean`` (every output slot of the node is taken as
    named: a rule cannot tell an unknown output from an empty name)."""
    e, r = NORM["BatchNormalization"]
    if training:
        e, r = e + BATCH_NORM_TRAINING[0], r + BATCH_NORM_TRAINING[1]
    cost = _cost(n, e, r, n.inp(1).numel)
    if all(t is not None for t in n.outputs):
        return cost
    x, mean = n.inp(0), n.inp(3)
    written = sum(t.nbytes if t is not None else (x.nbytes if i == 0 else mean.nbytes)
                  for i, t in enumerate(n.outputs))
    return replace(cost, bytes_written=written)


@rule("BatchNormalization", family="norm", since=1, outputs_may_be_unknown=True)
def batch_norm_1(n: NodeView) -> OpCost:
    """BatchNormalization before opset 14: inference form y = x·a + b, a and b folded per
    channel (2 ops per element, 5 per channel); training when the node has the mean/var
    outputs (+4 per element, +8 per channel)."""
    return _batch_norm(n, training=len(n.outputs) > 1)


@rule("BatchNormalization", family="norm", since=14, outputs_may_be_unknown=True)
def batch_norm_14(n: NodeView) -> OpCost:
    """BatchNormalization from opset 14: as before, training when ``training_mode`` = 1."""
    return _batch_norm(n, training=bool(n.attr("training_mode")))


def _rows_from_axis(n: NodeView) -> int:
    x = n.inp(0)
    return prod(x.shape[:axis_of(n.attr("axis", -1), x.rank)])


@rule("LayerNormalization", family="norm")
def layer_norm(n: NodeView) -> OpCost:
    """LayerNormalization over shape[axis:]: rows = prod(shape[:axis]);
    ops = 6·X (+1·X with bias) + 5·rows. The Mean/InvStdDev outputs cost nothing more."""
    e, r = NORM["LayerNormalization"]
    if n.has_input(2):
        e += LAYER_NORM_BIAS
    return _cost(n, e, r, _rows_from_axis(n))


@rule("RMSNormalization", family="norm")
def rms_norm(n: NodeView) -> OpCost:
    """RMSNormalization (opset 23) over shape[axis:]: rows = prod(shape[:axis]);
    ops = 4·X + 4·rows."""
    e, r = NORM["RMSNormalization"]
    return _cost(n, e, r, _rows_from_axis(n))


@rule("GroupNormalization", family="norm")
def group_norm(n: NodeView) -> OpCost:
    """GroupNormalization: groups = N·G (``num_groups``), each of (C/G)·S elements;
    ops = 7·X + 5·N·G. Opset 18 (per-group scale/bias) and 21 (per-channel) cost the same."""
    e, r = NORM["GroupNormalization"]
    x = n.inp(0)
    return _cost(n, e, r, x.shape[0] * int(n.attr("num_groups")))


@rule("InstanceNormalization", family="norm")
def instance_norm(n: NodeView) -> OpCost:
    """InstanceNormalization: rows = N·C instances of S elements; ops = 7·X + 5·N·C."""
    e, r = NORM["InstanceNormalization"]
    x = n.inp(0)
    return _cost(n, e, r, x.shape[0] * x.shape[1])


def lp_norm_costs(p: float) -> tuple[int, int]:
    """(ops per element, ops per row) of an Lp norm-and-divide, from :data:`LP_NORM`."""
    return LP_NORM.get(p, LP_NORM_OTHER)


@rule("LpNormalization", family="norm")
def lp_norm(n: NodeView) -> OpCost:
    """LpNormalization along ``axis``: rows = X / shape[axis]; ops = e·X + r·rows with
    (e, r) = LP_NORM[p] (p=2: 3·X + rows; p=1: 3·X)."""
    x = n.inp(0)
    e, r = lp_norm_costs(n.attr("p"))
    length = x.shape[axis_of(n.attr("axis"), x.rank)]
    return _cost(n, e, r, x.numel // length if length else 0)


@rule("MeanVarianceNormalization", family="norm")
def mvn(n: NodeView) -> OpCost:
    """MeanVarianceNormalization over ``axes`` (default [0, 2, 3]): groups =
    X / prod(shape[axes]); ops = 5·X + 6·groups (the ONNX function body)."""
    x = n.inp(0)
    axes = {axis_of(int(a), x.rank) for a in n.attr("axes", [0, 2, 3])}
    span = prod(x.shape[a] for a in axes)
    e, r = NORM["MeanVarianceNormalization"]
    return _cost(n, e, r, x.numel // span if span else 0)


@rule("LRN", family="norm")
def lrn(n: NodeView) -> OpCost:
    """LRN across channels: ops = (size + 4)·X (x², size − 1 window adds, scale, bias,
    power, divide); no per-row term."""
    return _cost(n, int(n.attr("size")) + LRN_FIXED, 0, 0)
