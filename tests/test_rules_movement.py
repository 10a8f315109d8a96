"""Movement rules: zero FLOPs, real traffic; partial reads for Slice/Gather*; upper bounds for
data-dependent outputs."""

import math

import numpy as np
import pytest
from onnx import TensorProto

from .util import const, cost, single

I64 = TensorProto.INT64
F4 = 4  # bytes per float32
I8 = 8  # bytes per int64


def _counted_movement(r, read, written):
    assert r.status == "counted"
    assert r.family in ("movement", "gather_scatter")
    assert (r.macs, r.flops, r.int_ops) == (0, 0, 0)
    assert r.bytes_read == read
    assert r.bytes_written == written
    assert r.exact


def test_transpose():
    a, b, c = 2, 3, 4
    r = cost(single("Transpose", {"x": [a, b, c]}, perm=[2, 0, 1]))
    assert r.outputs[0].shape == (c, a, b)
    _counted_movement(r, F4 * a * b * c, F4 * a * b * c)


def test_concat():
    n, c1, c2, h = 2, 3, 5, 7
    r = cost(single("Concat", {"a": [n, c1, h], "b": [n, c2, h]}, axis=1))
    _counted_movement(r, F4 * n * (c1 + c2) * h, F4 * n * (c1 + c2) * h)


def test_split_two_outputs():
    n, c = 4, 6
    r = cost(single("Split", {"x": [n, c]}, outputs=("y1", "y2"), axis=1, num_outputs=2, opset=18))
    assert r.outputs[0].shape == (n, c // 2)
    _counted_movement(r, F4 * n * c, F4 * n * c)


def test_slice_reads_only_the_slice():
    rows, cols, start, end = 10, 20, 3, 8
    r = cost(_slice_model(rows, cols, start, end))
    out = rows * (end - start)
    assert r.outputs[0].shape == (rows, end - start)
    _counted_movement(r, F4 * out + 3 * I8, F4 * out)


def _slice_model(rows, cols, start, end):
    inits = [const("starts", [1], I64, [start]), const("ends", [1], I64, [end]), const("axes", [1], I64, [1])]
    return single("Slice", {"x": [rows, cols], "starts": ([1], I64), "ends": ([1], I64), "axes": ([1], I64)},
                  inits=inits, opset=13)


def test_gather_reads_indices_and_gathered_rows_only():
    vocab, hidden, b, s = 1000, 64, 2, 3
    r = cost(single("Gather", {"table": [vocab, hidden], "ids": ([b, s], I64)}, axis=0))
    assert r.outputs[0].shape == (b, s, hidden)
    _counted_movement(r, I8 * b * s + F4 * b * s * hidden, F4 * b * s * hidden)


def test_gather_elements_and_gather_nd():
    n, c, k = 5, 7, 3
    r = cost(single("GatherElements", {"x": [n, c], "i": ([n, k], I64)}, axis=1))
    _counted_movement(r, I8 * n * k + F4 * n * k, F4 * n * k)
    rows, d = 4, 9
    r = cost(single("GatherND", {"x": [n, c, d], "i": ([rows, 2], I64)}, opset=13))
    assert r.outputs[0].shape == (rows, d)
    _counted_movement(r, I8 * rows * 2 + F4 * rows * d, F4 * rows * d)


@pytest.mark.parametrize("reduction", ["none", "add", "max"])
def test_scatter_elements_reduction(reduction):
    n, c, k = 4, 10, 3
    r = cost(single("ScatterElements", {"d": [n, c], "i": ([n, k], I64), "u": [n, k]},
                    axis=1, reduction=reduction, opset=18))
    assert r.status == "counted"
    assert r.flops == (0 if reduction == "none" else n * k)
    assert r.bytes_read == F4 * n * c + I8 * n * k + F4 * n * k
    assert r.bytes_written == F4 * n * c


def test_scatter_nd_add_and_deprecated_scatter():
    rows, d = 3, 6
    r = cost(single("ScatterND", {"d": [8, d], "i": ([rows, 1], I64), "u": [rows, d]}, reduction="mul", opset=16))
    assert r.flops == rows * d
    r = cost(single("Scatter", {"d": [4, 5], "i": ([4, 2], I64), "u": [4, 2]}, axis=1, opset=10))
    assert r.status == "counted" and r.flops == 0
    assert r.bytes_written == F4 * 4 * 5


def test_tensor_scatter_moves_only_the_update():
    b, heads, max_seq, seq, dh = 2, 4, 16, 3, 8
    r = cost(single("TensorScatter", {"past": [b, heads, max_seq, dh], "upd": [b, heads, seq, dh],
                                      "wi": ([b], I64)}, opset=24))
    assert r.outputs[0].shape == (b, heads, max_seq, dh)
    _counted_movement(r, F4 * b * heads * seq * dh + I8 * b, F4 * b * heads * seq * dh)


def test_tile_expand():
    r = cost(single("Tile", {"x": [2, 3], "rep": ([2], I64)}, inits=[const("rep", [2], I64, [2, 4])]))
    assert r.outputs[0].shape == (4, 12)
    _counted_movement(r, F4 * 6 + I8 * 2, F4 * 48)
    r = cost(single("Expand", {"x": [3, 1], "shp": ([2], I64)}, inits=[const("shp", [2], I64, [3, 5])]))
    _counted_movement(r, F4 * 3 + I8 * 2, F4 * 15)


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge", "wrap"])
def test_pad_modes_move_data_only(mode):
    h, w, p = 6, 7, 2
    r = cost(single("Pad", {"x": [1, 1, h, w], "pads": ([8], I64)},
                    inits=[const("pads", [8], I64, [0, 0, p, p, 0, 0, p, p])], mode=mode, opset=19))
    assert r.outputs[0].shape == (1, 1, h + 2 * p, w + 2 * p)
    _counted_movement(r, F4 * h * w + I8 * 8, F4 * (h + 2 * p) * (w + 2 * p))


def test_cast_castlike_bitcast():
    n = 12
    r = cost(single("Cast", {"x": [n]}, to=TensorProto.FLOAT16))
    _counted_movement(r, F4 * n, 2 * n)
    r = cost(single("CastLike", {"x": [n], "t": ([3, 3], TensorProto.DOUBLE)}, opset=15))
    _counted_movement(r, F4 * n, 8 * n)  # target_type's data is not read
    r = cost(single("BitCast", {"x": [n]}, to=TensorProto.INT32, opset=26))
    _counted_movement(r, F4 * n, 4 * n)


def test_depth_space():
    n, c, h, bs = 1, 8, 3, 2
    r = cost(single("DepthToSpace", {"x": [n, c, h, h]}, blocksize=bs))
    assert r.outputs[0].shape == (n, c // bs // bs, h * bs, h * bs)
    _counted_movement(r, F4 * n * c * h * h, F4 * n * c * h * h)
    r = cost(single("SpaceToDepth", {"x": [n, 2, 4, 4]}, blocksize=bs))
    _counted_movement(r, F4 * 32, F4 * 32)


def test_onehot_constant_of_shape_eyelike_trilu_reverse():
    n, depth = 5, 10
    r = cost(single("OneHot", {"i": ([n], I64), "depth": ([], I64), "v": [2]},
                    inits=[const("depth", [], I64, depth)], opset=11))
    assert r.outputs[0].shape == (n, depth)
    _counted_movement(r, I8 * n + I8 + F4 * 2, F4 * n * depth)
    r = cost(single("ConstantOfShape", {"s": ([2], I64)}, inits=[const("s", [2], I64, [3, 4])], opset=9))
    _counted_movement(r, I8 * 2, F4 * 12)
    r = cost(single("EyeLike", {"x": [3, 4]}))
    _counted_movement(r, 0, F4 * 12)  # only the input's shape is used
    r = cost(single("Trilu", {"x": [2, 4, 4]}, opset=14))
    _counted_movement(r, F4 * 32, F4 * 32)
    t, b, c = 5, 3, 2
    r = cost(single("ReverseSequence", {"x": [t, b, c], "l": ([b], I64)}, opset=10))
    _counted_movement(r, F4 * t * b * c + I8 * b, F4 * t * b * c)


def test_range_one_add_per_element():
    start, limit, delta = 0, 10, 2
    inits = [const("s", [], I64, start), const("l", [], I64, limit), const("d", [], I64, delta)]
    r = cost(single("Range", {"s": ([], I64), "l": ([], I64), "d": ([], I64)}, inits=inits, opset=11))
    count = math.ceil((limit - start) / delta)
    assert r.outputs[0].shape == (count,)
    assert (r.flops, r.int_ops) == (0, count)


def test_compress_unknown_output_is_an_upper_bound():
    rows, cols = 4, 5
    r = cost(single("Compress", {"x": [rows, cols], "c": ([rows], TensorProto.BOOL)}, axis=0, opset=11))
    assert r.status == "counted" and not r.exact
    assert r.bytes_written == F4 * rows * cols
    assert r.bytes_read == rows * 1 + F4 * rows * cols
    # without axis: flattened, at most len(condition) elements
    r = cost(single("Compress", {"x": [rows, cols], "c": ([3], TensorProto.BOOL)}, opset=11))
    assert r.bytes_written == F4 * 3


def test_nonzero_upper_bound():
    a, b = 3, 4
    r = cost(single("NonZero", {"x": [a, b]}, opset=13))
    assert r.status == "counted" and not r.exact
    assert r.flops == a * b  # one compare per element
    assert r.bytes_written == I8 * 2 * a * b  # [rank, nnz] with nnz <= a*b


@pytest.mark.parametrize("axis", [None, 1])
def test_unique_upper_bound(axis):
    shape = [6, 10]
    numel = int(np.prod(shape))
    kw = {} if axis is None else {"axis": axis}
    r = cost(single("Unique", {"x": shape}, outputs=("y", "idx", "inv", "cnt"), opset=11, **kw))
    k = numel if axis is None else shape[axis]
    assert r.status == "counted" and not r.exact
    assert r.flops == numel * math.ceil(math.log2(k))
    assert r.bytes_written == F4 * numel + 3 * I8 * k
