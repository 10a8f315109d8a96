"""The threads onnxruntime's QLinear kernels choose by Eigen's cost model, and what the roofline and the
calibration do with them (issue 30, item 4: EfficientNet-B0's QOperator export, -20% state-normalized: its
QLinearSigmoids and QLinearMuls under 156,280 elements, and every squeeze-excite scale, ran on one of the
VM's two threads). Expected values derived from named dims."""

from __future__ import annotations

import dataclasses
import math
from types import SimpleNamespace

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxperf
from onnxperf.hardware import load_spec
from onnxperf.insights.advice import node_why
from onnxperf.predict.ort_threads import (LOAD_CYCLES, PER_THREAD_CYCLES, STARTUP_CYCLES, STORE_CYCLES, THREADS_KEY,
                                          cost_threads, gather_axes, gather_threads, kernel_threads)
from onnxperf.predict.roofline import roofline
from onnxperf.products.calibration import fit
from onnxperf.products.calibration.run import case_threads
from onnxperf.products.calibration.suite import broadcast_case, suite

U8 = TensorProto.UINT8
MS = "com.microsoft"
#: Eigen's cycles for one element of cost (1 byte loaded, 1 stored, 1 cycle)
PER_ELEMENT = 1 * LOAD_CYCLES + 1 * STORE_CYCLES + 1
#: the fewest such elements that two threads take: n·c >= startup + per-thread + 0.1 · per-thread
TWO_AT = math.ceil((STARTUP_CYCLES + 1.1 * PER_THREAD_CYCLES) / PER_ELEMENT)


def test_eigens_cost_model_splits_a_per_element_loop_at_156280():
    assert TWO_AT == 156_280
    assert cost_threads(TWO_AT - 1, 1, 1, 1, pool=2) == 1
    assert cost_threads(TWO_AT, 1, 1, 1, pool=2) == 2
    # the measured pair (benchmarks/results/ort_threads.md): 150,016 on one thread, 163,840 on two
    assert cost_threads(150_016, 1, 1, 1, pool=2) == 1 and cost_threads(163_840, 1, 1, 1, pool=2) == 2
    # k = floor((n·c - 100,000) / 100,000 + 0.9) within [1, P]
    n = 10 ** 6
    assert cost_threads(n, 1, 1, 1, pool=64) == math.floor((n * PER_ELEMENT - 1e5) / 1e5 + 0.9) == 13
    assert cost_threads(n, 1, 1, 1, pool=4) == 4
    assert cost_threads(n, 1, 1, 1, pool=1) == 1
    assert cost_threads(1, 1e9, 1e9, 1e9, pool=8) == 1  # one unit never splits


def _qlinear(op: str, a_shape, b_shape=None, out_shape=None, attrs=None):
    scal = [numpy_helper.from_array(np.array(0.02, np.float32), "sc"), numpy_helper.from_array(np.array(128, np.uint8), "zp")]
    out_shape = out_shape or a_shape
    if b_shape is not None:
        node = helper.make_node(op, ["a", "sc", "zp", "b", "sc", "zp", "sc", "zp"], ["y"], domain=MS)
        ins = [helper.make_tensor_value_info("a", U8, list(a_shape)), helper.make_tensor_value_info("b", U8, list(b_shape))]
    else:
        node = helper.make_node(op, ["a", "sc", "zp", "sc", "zp"], ["y"], domain=MS, **(attrs or {}))
        ins = [helper.make_tensor_value_info("a", U8, list(a_shape))]
    g = helper.make_graph([node], "q", ins, [helper.make_tensor_value_info("y", U8, list(out_shape))], scal)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)])
    m.ir_version = 8
    return m


def _node(model):
    (n,) = onnxperf.analyze(model).main_nodes
    return n


C, H, W = 96, 56, 56  # an EfficientNet-B0 stage: 301,056 elements


@pytest.mark.parametrize("h,w,want", [(H, W, 2), (28, 28, 1), (40, 40, 1), (41, 41, 2)])
def test_a_qlinear_sigmoid_splits_by_its_element_count(h, w, want):
    """C·H·W elements of cost (1, 1, 1): 96·28·28 = 75,264 and 96·40·40 = 153,600 on one thread, 96·41·41 =
    161,376 and 96·56·56 on two."""
    n = _node(_qlinear("QLinearSigmoid", (1, C, h, w)))
    assert kernel_threads(n, 2) == want == (2 if C * h * w >= TWO_AT else 1)


def test_a_qlinear_mul_splits_one_span_and_runs_a_broadcast_on_one_thread():
    """Same shapes, or a scalar input: one span, split by its elements; a squeeze-excite scale
    [1, C, H, W] · [1, C, 1, 1] (C spans) on one thread, whatever its size."""
    assert kernel_threads(_node(_qlinear("QLinearMul", (1, C, H, W), (1, C, H, W))), 2) == 2
    assert kernel_threads(_node(_qlinear("QLinearMul", (1, C, 28, 28), (1, C, 28, 28))), 2) == 1
    assert kernel_threads(_node(_qlinear("QLinearAdd", (1, C, H, W), ())), 2) == 2
    assert kernel_threads(_node(_qlinear("QLinearMul", (1, C, H, W), (1, C, 1, 1))), 2) == 1
    assert kernel_threads(_node(_qlinear("QLinearMul", (1, C, 4 * H, 4 * W), (1, C, 1, 1))), 8) == 1


def test_a_quantized_global_average_pool_splits_by_channels_or_by_images():
    """Channels-first: N·C units of (H·W, 1, 8·H·W); channels-last (its attribute, or the graph's NHWC
    transformer): N units of (H·W·C, C, 8·H·W·C), one at batch 1."""
    c, hw = 1152, 7 * 7
    per_channel = hw * LOAD_CYCLES + STORE_CYCLES + 8 * hw
    assert c * per_channel >= STARTUP_CYCLES + 1.1 * PER_THREAD_CYCLES  # so two threads channels-first
    nchw = _node(_qlinear("QLinearGlobalAveragePool", (1, c, 7, 7), out_shape=(1, c, 1, 1)))
    assert kernel_threads(nchw, 2) == 2
    assert kernel_threads(nchw, 2, nhwc=True) == 1
    nhwc = _node(_qlinear("QLinearGlobalAveragePool", (1, 7, 7, c), out_shape=(1, 1, 1, c),
                          attrs={"channels_last": 1}))
    assert kernel_threads(nhwc, 2, channels_last=True) == 1
    assert kernel_threads(_node(_qlinear("QLinearGlobalAveragePool", (1, 8, 8, 4), out_shape=(1, 8, 1, 1))), 2) == 1


def test_other_kernels_and_unknown_shapes_take_the_pool():
    g = helper.make_graph([helper.make_node("Sigmoid", ["x"], ["y"])], "f",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, C, 28, 28])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, C, 28, 28])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    assert kernel_threads(_node(m), 2) is None
    unknown = SimpleNamespace(domain=MS, op_type="QLinearSigmoid", inputs=(), outputs=(SimpleNamespace(shape=("h", 28)),))
    assert kernel_threads(unknown, 2) is None


def _spec(threads: float | None, parallel_s: float = 4e-6):
    eff = {"default.compute": 0.5, "default.memory": 0.5, "overhead_s": 2e-6, "overhead_parallel_s": parallel_s,
           "parallel_min_bytes": 256 * 1024}
    if threads is not None:
        eff[THREADS_KEY] = threads
    return dataclasses.replace(load_spec("xeon-silver-4210x2"), efficiency=eff, efficiency_sources={})


def test_the_roofline_runs_a_one_thread_kernel_at_p_over_k_without_the_pools_dispatch():
    """c' = c·P/k, m' = m·P/k, t' = max(c', m') + o + [k > 1]·o_p, on a spec calibrated at P threads; a spec
    without ``runtime.threads`` keeps the calibrated times."""
    small = onnxperf.analyze(_qlinear("QLinearSigmoid", (1, C, 28, 28)))  # 75,264 elements: one thread
    big = onnxperf.analyze(_qlinear("QLinearSigmoid", (1, C, H, W)))  # two
    for pool in (2, 4):
        before = roofline(small, _spec(None)).nodes[0]
        after = roofline(small, _spec(pool)).nodes[0]
        assert after.threads == 1
        assert after.compute_s == pytest.approx(before.compute_s * pool)
        assert after.memory_s == pytest.approx(before.memory_s * pool)
        assert after.dispatch_s == pytest.approx(2e-6)  # 150,530 bytes: below the bytes rule anyway
        assert after.time_s == pytest.approx(max(after.compute_s, after.memory_s) + 2e-6)
    before, after = roofline(big, _spec(None)).nodes[0], roofline(big, _spec(2)).nodes[0]
    assert after.threads == 2 and after.time_s == pytest.approx(before.time_s)
    assert roofline(small, _spec(None)).nodes[0].threads is None


def test_a_broadcast_qlinear_mul_over_the_bytes_rule_pays_no_pool_dispatch():
    """A squeeze-excite scale of 1,204,224 elements moves 2.4 MB (over ``parallel_min_bytes``) but runs on one
    thread: its dispatch is o alone, and its node_why says so."""
    a = onnxperf.analyze(_qlinear("QLinearMul", (1, C, 2 * H, 2 * W), (1, C, 1, 1)))
    before, after = roofline(a, _spec(None)).nodes[0], roofline(a, _spec(2)).nodes[0]
    assert before.dispatch_s == pytest.approx(2e-6 + 4e-6)
    assert after.dispatch_s == pytest.approx(2e-6) and after.threads == 1
    assert after.memory_s == pytest.approx(2 * before.memory_s)
    assert "one of 2 threads" in node_why(after, _spec(2))


def test_the_suite_kernels_and_the_broadcast_pair_choose_as_predicted(tmp_path):
    """Every QLinear elementwise suite case runs 1 Mi elements (two threads: the fitted efficiencies are
    the pool's); the quantized broadcast pair's one-span case splits, its broadcast does not."""
    for case in suite():
        if case.family in ("op.QLinearAdd", "op.QLinearMul", "op.QLinearSigmoid"):
            onnx.save(case.model, str(tmp_path / "c.onnx"))
            assert case_threads(onnxperf.analyze(tmp_path / "c.onnx"), 2) == 2, case.name
    for bcast, want in ((False, 2), (True, 1)):
        onnx.save(broadcast_case(bcast, quantized=True).model, str(tmp_path / "b.onnx"))
        assert case_threads(onnxperf.analyze(tmp_path / "b.onnx"), 2) == want
        onnx.save(broadcast_case(bcast).model, str(tmp_path / "f.onnx"))
        assert case_threads(onnxperf.analyze(tmp_path / "f.onnx"), 2) is None  # a float Add: the pool's


def test_the_fit_charges_the_pools_dispatch_by_threads_where_known():
    """A sample on one thread pays no ``overhead_parallel_s`` in the refit, whatever its bytes; one of
    unknown threads by the bytes rule."""
    o_k, o_p = 2e-6, 5e-6
    tiny = [fit.Sample("add_tiny", "elementwise", 0.0, 1e-9, o_k), fit.Sample("relu_tiny", "activation", 0.0, 1e-9, o_k)]
    # mid-size cases whose traffic takes no time: all beyond o_k is the pool's dispatch
    mid = [fit.Sample(c, "elementwise", 0.0, 0.0, o_k + o_p, nbytes=256 * 1024) for c in fit.MID]
    big = 10 ** 6
    one = fit.Sample("one_thread", "op.X", 0.0, 40e-6, o_k + 40e-6 / 0.8, nbytes=big, threads=1)
    two = fit.Sample("two_threads", "op.Y", 0.0, 40e-6, o_k + o_p + 40e-6 / 0.8, nbytes=big, threads=2)
    bytes_rule = fit.Sample("by_bytes", "op.Z", 0.0, 40e-6, o_k + o_p + 40e-6 / 0.8, nbytes=big)
    eff = fit.fit_efficiency(tiny + mid + [one, two, bytes_rule])
    assert eff["overhead_parallel_s"] == pytest.approx(o_p)
    for fam in ("op.X", "op.Y", "op.Z"):
        assert eff[f"{fam}.memory"] == pytest.approx(0.8)


def test_the_plan_and_its_outputs_say_which_kernels_run_narrow(tmp_path, capsys):
    """The result carries the pool and the narrow kernels' time (one place); the JSON has them per node and
    in total; the text summary states their share, formatted from the result."""
    from onnxperf.cli import main as cli_main
    from onnxperf.hardware.files import to_toml
    from onnxperf.ui.numbers import seconds

    model = _qlinear("QLinearMul", (1, C, 2 * H, 2 * W), (1, C, 1, 1))  # a squeeze-excite scale: one thread
    a = onnxperf.analyze(model)
    rl = roofline(a, _spec(2))
    (r,) = rl.nodes
    assert rl.runtime_threads == 2 and rl.narrow_nodes == (r,) and rl.narrow_s == pytest.approx(r.time_s)
    d = rl.to_dict()
    assert d["runtime_threads"] == 2 and d["narrow_kernel_s"] == pytest.approx(r.time_s)
    assert d["nodes"][0]["threads"] == 1
    plain = roofline(a, _spec(None))
    assert plain.runtime_threads is None and plain.narrow_s == 0 and plain.to_dict()["nodes"][0]["threads"] is None
    (tmp_path / "spec.toml").write_text(to_toml(_spec(2)))
    onnx.save(model, str(tmp_path / "m.onnx"))
    assert cli_main(["summary", str(tmp_path / "m.onnx"), "--hw", str(tmp_path / "spec.toml")]) == 0
    line = next(ln for ln in capsys.readouterr().out.splitlines() if "Threads:" in ln)
    assert seconds(rl.narrow_s) in line and "1 node)" in line and "2 threads" in line


def test_a_tiny_narrow_kernel_is_explained_by_its_dispatch():
    """A QLinearSigmoid of 64 elements runs on one thread too, but its time is the dispatch: node_why says that."""
    a = onnxperf.analyze(_qlinear("QLinearSigmoid", (1, 64)))
    r = roofline(a, _spec(2)).nodes[0]
    assert r.threads == 1 and r.bound == "dispatch"
    assert node_why(r, _spec(2)).startswith("dispatch-bound")


def test_validate_says_when_the_run_uses_another_pool_than_the_calibration(monkeypatch):
    """A spec calibrated at P threads set beside a run at T != P: a warning names both; none when they agree,
    and none for a spec that does not record its pool. The default pool is one thread per physical core."""
    from onnxperf.products.validate import machine

    monkeypatch.setattr(machine, "detect_cpu", lambda: SimpleNamespace(physical_cores=2))
    assert machine.pool_threads(None) == 2 and machine.pool_threads(3) == 3
    said = machine.threads_mismatch(_spec(2), 1)
    assert said is not None and "calibrated at 2 onnxruntime threads" in said and "used 1" in said
    assert "--threads 1" in said
    assert machine.threads_mismatch(_spec(2), None) is None
    assert machine.threads_mismatch(_spec(2), 2) is None
    assert machine.threads_mismatch(_spec(None), 1) is None
    assert machine.threads_mismatch(_spec(4), None) is not None


def _gather(data_shape, idx_shape, axis=None, dtype=TensorProto.FLOAT):
    """Gather of data (an input) by constant indices, ``axis`` attribute set when given."""
    idx = numpy_helper.from_array(np.zeros(idx_shape, np.int64), "i")
    kw = {} if axis is None else {"axis": axis}
    node = helper.make_node("Gather", ["x", "i"], ["y"], **kw)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", dtype, list(data_shape))],
                          [helper.make_tensor_value_info("y", dtype, None)], [idx])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return onnxperf.analyze(m)


def _gather_k(a, pool=2):
    (n,) = a.main_nodes
    return kernel_threads(n, pool, axis=gather_axes(a).get(n.key))


@pytest.mark.parametrize("data, idx, axis, units, block, want", [
    ((3, 1, 12, 197, 64), (), 0, 1, 1 * 12 * 197 * 64 * 4, 1),  # ViT-B/16's q/k/v split: one unit
    ((4, 1024, 1024), (), None, 1, 1024 * 1024 * 4, 1),  # the default axis 0
    ((1024, 4, 256), (), 1, 1024, 256 * 4, 2),  # 1,024 units of 1 KiB: 1,048,576 cycles
    ((64, 4, 16), (), 1, 64, 16 * 4, 1),  # 64 units of 64 B: 4,096 cycles, under the start-up
    ((30522, 768), (1, 128), 0, 128, 768 * 4, 2),  # an embedding lookup: 393,216 cycles
])
def test_a_gather_splits_its_indices_times_outer_dims_by_block_bytes(data, idx, axis, units, block, want):
    """M·N units (dims before the axis times the indices) of cost (0, 0, B), B the bytes after the axis."""
    assert _gather_k(_gather(data, idx, axis)) == want == cost_threads(units, 0, 0, block, 2)
    assert _gather_k(_gather(data, idx, axis), pool=1) == 1


def test_a_gather_of_unknown_shape_or_axis_is_not_modelled():
    a = _gather((3, 64, 64), (), 0)
    n = a.main_nodes[0]
    assert gather_axes(a) == {n.key: 0}
    assert gather_threads(n, None, 2) is None  # no axis known
    assert gather_threads(n, 3, 2) is None  # out of range
    assert gather_threads(n, -3, 2) == 1  # negative axes count from the end
    dyn = SimpleNamespace(op_type="Gather", domain="", inputs=(SimpleNamespace(shape=("n", 64), dtype="float32"),
                                                                SimpleNamespace(shape=(), dtype="int64")), outputs=())
    assert gather_threads(dyn, 0, 2) is None
    assert kernel_threads(dyn, 2, axis=0) is None


def test_the_roofline_runs_a_one_unit_gather_at_p_times_its_traffic():
    """m' = m·P/k with k = 1 for the q/k/v split; the suite's gather_rows (512 rows of 3 KiB) splits, so the
    calibrated gather efficiency stays the pool's."""
    a = _gather((3, 1, 12, 197, 64), (), 0)
    before, after = roofline(a, _spec(None)).nodes[0], roofline(a, _spec(2)).nodes[0]
    assert after.threads == 1 and after.memory_s == pytest.approx(2 * before.memory_s)
    assert "one of 2 threads" in node_why(after, _spec(2)) and "Gather of one index" in node_why(after, _spec(2))
    (rows,) = [c for c in suite() if c.name == "gather_rows"]
    assert case_threads(onnxperf.analyze(rows.model), 2) == 2
