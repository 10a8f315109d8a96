"""Quantization rules: per-element counts for QuantizeLinear, DequantizeLinear and
DynamicQuantizeLinear, per-tensor, per-axis and blocked."""

import pytest
from onnx import TensorProto

from onnxperf.cost.ops.quant import quantize_per_element

from .util import const, cost, single

U8, I8, I32 = TensorProto.UINT8, TensorProto.INT8, TensorProto.INT32
FP8 = TensorProto.FLOAT8E4M3FN


@pytest.mark.parametrize("zp", [True, False])
def test_quantize_linear_per_tensor(zp):
    n, c = 4, 16
    inits = [const("s", [], values=0.1)] + ([const("z", [], U8, 3)] if zp else [])
    inputs = {"x": [n, c], "s": [], "z": ([], U8) if zp else None}
    r = cost(single("QuantizeLinear", inputs, inits=inits, opset=13))
    assert r.status == "counted" and r.family == "quant"
    per = 1 + 1 + (1 if zp else 0) + 2  # divide, round, [zero point], saturate (min, max)
    assert r.flops == per * n * c
    assert r.int_ops == 0
    assert r.bytes_written == n * c
    assert r.bytes_read == 4 * n * c + 4 + (1 if zp else 0)


def test_quantize_linear_blocked_same_per_element():
    n, k, block = 8, 32, 16
    inits = [const("s", [n, k // block]), const("z", [n, k // block], I8)]
    r = cost(single("QuantizeLinear", {"x": [n, k], "s": [n, k // block], "z": ([n, k // block], I8)},
                    inits=inits, axis=1, block_size=block, opset=21))
    assert r.status == "counted"
    assert r.flops == 5 * n * k
    assert r.bytes_read == 4 * n * k + 4 * n * (k // block) + n * (k // block)


@pytest.mark.parametrize("saturate", [1, 0])
def test_quantize_to_float8(saturate):
    n = 10
    r = cost(single("QuantizeLinear", {"x": [n], "s": [], "z": ([], FP8)},
                    inits=[const("s", [], values=1.0), const("z", [], FP8, 0)], saturate=saturate, opset=19))
    assert r.flops == n * (1 + 1 + (2 if saturate else 0))  # divide, zero point, [saturate]
    assert quantize_per_element(FP8, True, bool(saturate)) == 2 + 2 * saturate


def test_quantize_int32_input_is_int_ops():
    n = 6
    r = cost(single("QuantizeLinear", {"x": ([n], I32), "s": []}, inits=[const("s", [], values=2.0)], opset=10))
    assert (r.flops, r.int_ops) == (0, 4 * n)


@pytest.mark.parametrize("zp", [True, False])
def test_dequantize_linear(zp):
    n, c = 3, 7
    inits = [const("s", [c]), const("z", [c], I8)] if zp else [const("s", [c])]
    inputs = {"x": ([n, c], I8), "s": [c], "z": ([c], I8) if zp else None}
    r = cost(single("DequantizeLinear", inputs, inits=inits, axis=1, opset=13))
    assert r.status == "counted"
    assert r.flops == n * c * (2 if zp else 1)  # [subtract zero point], multiply by scale
    assert r.bytes_written == 4 * n * c


def test_dynamic_quantize_linear():
    n, c = 5, 9
    numel = n * c
    r = cost(single("DynamicQuantizeLinear", {"x": [n, c]}, outputs=("y", "scale", "zp"), opset=11))
    assert r.status == "counted"
    # min and max reductions (N-1 each) + 9 scalar ops + quantize to uint8 with zero point (5/elem)
    assert r.flops == 2 * (numel - 1) + 9 + 5 * numel == 7 * numel + 7
    assert r.bytes_written == numel + 4 + 1
