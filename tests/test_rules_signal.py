"""Signal rules: FFT convention 5·N·log2 N per complex transform, windows by their ONNX
function, MelWeightMatrix upper bound."""

import math

import pytest
from onnx import TensorProto

from onnxperf.cost.ops.signal import fft_flops

from .util import const, cost, single

I64 = TensorProto.INT64


def test_fft_flops_convention():
    assert fft_flops(1) == 0
    assert fft_flops(8) == 5 * 8 * 3
    assert fft_flops(1024) == 5 * 1024 * 10
    assert fft_flops(12) == round(5 * 12 * math.log2(12))


@pytest.mark.parametrize("inverse", [0, 1])
def test_dft_opset17_axis_attribute(inverse):
    b, n, comp = 3, 16, 2
    r = cost(single("DFT", {"x": [b, n, comp]}, axis=1, inverse=inverse, opset=17))
    assert r.status == "counted" and r.family == "signal"
    assert r.outputs[0].shape == (b, n, 2)
    assert r.flops == b * (5 * n * int(math.log2(n)) + (2 * n if inverse else 0))
    assert r.bytes_read == 4 * b * n * comp


def test_dft_opset20_default_axis_and_dft_length():
    b, rows, n, length = 2, 5, 8, 32
    r = cost(single("DFT", {"x": [b, rows, n, 1], "len": ([], I64)},
                    inits=[const("len", [], I64, length)], opset=20))
    # default axis -2: the length-n axis, zero-padded to dft_length; b*rows transforms
    assert r.outputs[0].shape == (b, rows, length, 2)
    assert r.flops == b * rows * 5 * length * int(math.log2(length))


def test_dft_opset20_axis_input_onesided():
    b, n, m = 2, 16, 3
    r = cost(single("DFT", {"x": [b, n, m, 1], "len": None, "ax": ([], I64)},
                    inits=[const("ax", [], I64, 1)], onesided=1, opset=20))
    assert r.outputs[0].shape == (b, n // 2 + 1, m, 2)
    assert r.flops == b * m * fft_flops(n)
    assert r.exact


def test_stft_with_window():
    b, signal, step, n = 1, 64, 16, 16
    r = cost(single("STFT", {"x": [b, signal, 1], "step": ([], I64), "win": [n]},
                    inits=[const("step", [], I64, step)], onesided=1, opset=17))
    # onesided given explicitly: onnx 1.23's STFT shape inference ignores the schema default (1)
    frames = (signal - n) // step + 1
    assert r.outputs[0].shape == (b, frames, n // 2 + 1, 2)
    assert r.flops == b * frames * (5 * n * int(math.log2(n)) + n)


def test_stft_frame_length_without_window():
    b, signal, step, n = 2, 40, 8, 8
    r = cost(single("STFT", {"x": [b, signal, 2], "step": ([], I64), "win": None, "fl": ([], I64)},
                    inits=[const("step", [], I64, step), const("fl", [], I64, n)], onesided=0, opset=17))
    frames = (signal - n) // step + 1
    assert r.outputs[0].shape == (b, frames, n, 2)
    assert r.flops == b * frames * fft_flops(n)


@pytest.mark.parametrize("op", ["HannWindow", "HammingWindow", "BlackmanWindow"])
def test_windows(op):
    size = 20
    r = cost(single(op, {"s": ([], I64)}, inits=[const("s", [], I64, size)], opset=17))
    assert r.status == "counted"
    assert r.outputs[0].shape == (size,)
    assert r.flops == 9 * size + 6
    assert r.bytes_written == 4 * size


def test_mel_weight_matrix():
    mel, dft = 8, 64
    vals = {"nm": (I64, mel), "dl": (I64, dft), "sr": (I64, 16000),
            "lo": (TensorProto.FLOAT, 0.0), "hi": (TensorProto.FLOAT, 8000.0)}
    r = cost(single("MelWeightMatrix", {k: ([], t) for k, (t, _) in vals.items()},
                    inits=[const(k, [], t, v) for k, (t, v) in vals.items()], opset=17))
    f = dft // 2 + 1
    assert r.outputs[0].shape == (f, mel)
    assert r.flops == 9 * (mel + 2) + 2 * 2 * f
    assert r.bytes_written == 4 * f * mel
    assert not r.exact
