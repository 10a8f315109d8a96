"""Resampling (ai.onnx): Resize, Upsample (deprecated), GridSample, AffineGrid, Col2Im,
CenterCropPad.

Interpolation is counted as a weighted sum of taps: each tap is 1 weight multiply + 1 add,
one add fewer per output element, so an output element of T taps costs 2·T − 1 ops; nearest
(T = 1) is a pure copy, 0 ops. Over d interpolated axes T = taps_per_axis^d (linear 2^d,
cubic 4^d). Tap weights are products of per-axis weights that depend only on the output
coordinate along each axis; like the coordinate transform itself they are computed once per
output index per axis (O(sum of output dims), not O(output elements)) and are left out.

Notation: X input, Y output elements, d interpolated axes, T taps per output element.
"""

from __future__ import annotations

import math

from onnxperf.base import dtypes
from onnxperf.cost.ops.registry import BadNode, NodeView, OpCost, arith, prod, register, rule

#: taps per interpolated axis, by mode. Resize spells them nearest/linear/cubic; Upsample-1
#: and GridSample-16 say bilinear/bicubic, GridSample-20 linear/cubic (N-d).
TAPS_PER_AXIS: dict[str, int] = {"nearest": 1, "linear": 2, "bilinear": 2, "cubic": 4, "bicubic": 4}

#: ops per interpolation tap (weight multiply, accumulate add); one add fewer per output.
OPS_PER_TAP = 2

#: GridSample: ops per grid coordinate to unnormalize it from [−1, 1] to pixel space
#: (add 1, scale by size, subtract 1, halve). Padding-mode clamps/reflections and the
#: per-point tap weights are left out.
GRID_COORD_OPS = 4


def interp_ops(taps: int) -> int:
    """Ops per output element of a T-tap interpolation: 2·T − 1, or 0 for a copy (T ≤ 1)."""
    return OPS_PER_TAP * taps - 1 if taps > 1 else 0


def _taps(mode: str) -> int:
    try:
        return TAPS_PER_AXIS[mode]
    except KeyError:
        raise BadNode(f"unknown interpolation mode {mode!r}") from None


def resize_taps(mode: str, in_shape: tuple[int, ...], out_shape: tuple[int, ...],
                antialias: bool = False) -> int:
    """Taps per output element of Resize: the product over resized axes (input dim ≠ output
    dim) of the mode's taps per axis; with ``antialias`` a downscaled axis (scale s < 1)
    widens its filter to ⌈taps/s⌉ taps. Nearest is 1 tap whatever the axes."""
    base = _taps(mode)
    if base == 1:
        return 1
    t = 1
    for i, o in zip(in_shape, out_shape):
        if i == o:
            continue
        t *= math.ceil(base * i / o) if antialias and 0 < o < i else base
    return t


def resize(n: NodeView) -> OpCost:
    """Resize / Upsample: ops = Y·(2·T − 1) with T from :func:`resize_taps`: the resized
    axes are read off the input and output shapes (scales, sizes, axes, roi and
    keep_aspect_ratio_policy only act through Y's shape). nearest: 0 ops (a gather copy);
    linear: T = 2^d; cubic: T = 4^d. Left out: coordinate transforms, tap weights, cubic
    ``exclude_outside`` renormalization (per output index per axis, not per element)."""
    x, y = n.inp(0), n.out(0)
    t = resize_taps(n.attr("mode"), x.shape, y.shape, bool(n.attr("antialias", 0)))
    return arith(y.numel * interp_ops(t), x.elem_type)


@rule("GridSample", family="resize", since=16)
def grid_sample(n: NodeView) -> OpCost:
    """GridSample, X [N, C, *in] and grid [N, *out, d] -> Y [N, C, *out]: each output element
    interpolates T = taps^d samples (nearest 1, (bi)linear 2^d, (bi)cubic 4^d; both the
    opset-16 and opset-20 mode names): Y·(2·T − 1) ops, plus the unnormalization of every
    grid coordinate, shared by the C channels: grid elements · 4. Out-of-range taps are
    counted like the rest."""
    x, grid, y = n.inp(0), n.inp(1), n.out(0)
    d = x.rank - 2
    t = _taps(n.attr("mode", "linear")) ** d
    return arith(y.numel * interp_ops(t) + grid.numel * GRID_COORD_OPS, x.elem_type)


@rule("AffineGrid", family="resize")
def affine_grid(n: NodeView) -> OpCost:
    """AffineGrid, theta [N, d, d+1] -> grid [N, *spatial, d]: every grid point is theta times
    the homogeneous base coordinate [x, y, (z,) 1], as the ONNX function body's MatMul does:
    MACs = P·d·(d+1) with P = N·prod(spatial); FLOPs = 2·MACs. Building the base grid
    (linspace per axis) is left out."""
    theta, y = n.inp(0), n.out(0)
    d = y.shape[-1]
    macs = prod(y.shape[:-1]) * d * (d + 1)
    return arith(2 * macs, theta.elem_type, macs=macs)


@rule("Col2Im", family="resize")
def col2im(n: NodeView) -> OpCost:
    """Col2Im, input [N, C·prod(block), L] -> [N, C, *image]: every column element is
    accumulated into the zeroed image: 1 add per input element (entries that land in the
    padding included)."""
    x = n.inp(0)
    return arith(x.numel, x.elem_type)


@rule("CenterCropPad", family="resize")
def center_crop_pad(n: NodeView) -> OpCost:
    """CenterCropPad: movement only, 0 ops. Overrides bytes_read: only the kept window of X,
    prod(min(in_i, out_i)) elements, is read (plus the ``shape`` input); the whole output
    (kept window and zero padding) is written."""
    x, y = n.inp(0), n.out(0)
    kept = prod(min(i, o) for i, o in zip(x.shape, y.shape))
    shape_bytes = n.inp(1).nbytes if n.has_input(1) else 0
    return OpCost(bytes_read=dtypes.nbytes(x.elem_type, kept) + shape_bytes)


register("Resize", resize, family="resize", since=10)
# Upsample-1 (height_scale/width_scale attributes, modes nearest/bilinear), -7 (scales
# attribute) and -9 (scales input) cost the same: everything the rule needs is in the shapes.
register("Upsample", resize, family="resize", since=1)
