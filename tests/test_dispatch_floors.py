"""benchmarks/dispatch_floors.py (issue 30, item 4): its synthetic case runs every shape op it names as a tiny
kernel of its own (nothing folds: the activation's dims are symbolic), and its rank statistic (onnxperf.products.accuracy.spearman) averages ties."""

from __future__ import annotations

import numpy as np
import onnx
import pytest

from .util import benchmark

df = benchmark("dispatch_floors.py", "onnxperf_bench_dispatch_floors")

SHAPE_OPS = {"Shape", "Gather", "Unsqueeze", "Squeeze", "Div", "Mod", "Sub", "Add", "Mul", "Concat", "Reshape",
             "Slice", "ConstantOfShape", "Range", "Equal", "Where", "Expand", "Cast", "Pow", "Transpose"}


def test_the_shape_case_runs_each_shape_op_as_a_tiny_kernel(tmp_path):
    pytest.importorskip("onnxruntime")
    blocks = 2
    m = df.shape_case(blocks=blocks)
    onnx.checker.check_model(m)
    p = tmp_path / "case.onnx"
    onnx.save(m, str(p))
    events = df.profile(str(p), {"x": np.zeros((1, 3136, 96), np.float32)}, runs=2)
    times, args, order = df.medians(events)
    small = {args[k]["op_name"] for k in order if df.tiny(args[k])}
    assert SHAPE_OPS <= small
    big = [k for k in order if not df.tiny(args[k])]
    # per block only the 1.2 MB Add moves data; the Shape and the Reshapes of it are views
    assert {args[k]["op_name"] for k in big} == {"Add"} and len(big) == blocks
    counts = {op: sum(args[k]["op_name"] == op for k in order) for op in ("Concat", "Unsqueeze", "Where")}
    assert counts == {"Concat": 5 * blocks, "Unsqueeze": 5 * blocks, "Where": blocks}


def test_spearman_averages_ties_and_refuses_a_constant():
    assert df.spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert df.spearman([1, 1, 2, 2], [1, 2, 3, 4]) == pytest.approx(np.corrcoef([0.5, 0.5, 2.5, 2.5], [0, 1, 2, 3])[0, 1])
    assert df.spearman([1, 1, 1], [1, 2, 3]) is None
