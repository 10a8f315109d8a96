"""benchmarks/kernel_overlap.py: the per-kernel overlap it compares the kernel model's per-node sum with."""

import pytest
from onnx import helper

import onnxperf
from onnxperf.hardware.files import load_preset
from onnxperf.predict import precision
from onnxperf.predict.roofline import roofline

from .util import benchmark, const, model, vi

K = benchmark("kernel_overlap.py", "onnxperf_bench_kernel_overlap")


def test_a_fused_kernel_overlaps_its_epilogue_write_and_a_lone_kernel_is_unchanged():
    """Conv -> Relu on an L4 at int8, one kernel: the sum is the two rows' times, the Relu's (the kernel's
    write) added whole; the overlap is max(c_conv + c_relu, m_conv + m_relu) + o. One MatMul alone: both
    figures are its time."""
    n, c, hw = 8, 64, 28
    conv = onnxperf.analyze(model([helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
                                   helper.make_node("Relu", ["c"], ["y"])],
                                  [vi("x", [n, c, hw, hw])], [vi("y", None)], [const("w", [c, c, 3, 3])]))
    p = precision.get("int8")
    a = precision.what_if(conv, p)
    spec = load_preset("l4")
    summed, overlapped = K.both(a, spec, p)
    cv, rl = roofline(a, spec, p).nodes
    assert summed == pytest.approx(cv.time_s + rl.time_s)
    assert overlapped == pytest.approx(max(cv.compute_s + rl.compute_s, cv.memory_s + rl.memory_s)
                                       + cv.dispatch_s + rl.dispatch_s)
    assert rl.memory_s > 0 and overlapped < summed
    mm = onnxperf.analyze(model([helper.make_node("MatMul", ["x", "w"], ["y"])], [vi("x", [64, 256])],
                                [vi("y", None)], [const("w", [256, 256])]))
    s1, k1 = K.both(mm, spec, None)
    assert s1 == pytest.approx(k1) and s1 > 0
