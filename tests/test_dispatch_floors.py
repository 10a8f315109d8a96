"""What one call of an op costs the runtime beyond a Relu's (issue 30, item 4: Swin's, GPT-2's and ViT's
dispatch-only groups, hundreds of tiny Reshape / Gather / Concat / Slice nodes whose profiled time is the
runtime's work per call, which a calibrated spec predicted as one flat overhead).

Calibration measures it on :func:`~onnxperf.products.calibration.suite.floor_case` (tiny nodes of every op of
``FLOOR_OPS``, interleaved): ``op.<Op>.dispatch_s`` = ``overhead_s`` + f_op - f_Relu is then that op's per-node
overhead in place of ``overhead_s``; validate scales it by the dispatch probe as it does ``overhead_s``."""

from __future__ import annotations

import dataclasses
import math

import onnx
import pytest
from onnx import helper

import onnxperf
from onnxperf.hardware import load_spec
from onnxperf.predict.roofline import dispatch_key, efficiencies, roofline
from onnxperf.products.calibration.run import dispatch_floors
from onnxperf.products.calibration.suite import FLOOR_OPS, floor_case
from onnxperf.products.validate.runner import Probe
from onnxperf.products.validate.state import scaled_spec

from .util import const, model, vi

O = 2e-6  # overhead_s, per node, end to end (measured on Relus)


def _spec(**extra):
    eff = {"overhead_s": O, **extra}
    return dataclasses.replace(load_spec("xeon-8480plus"), efficiency=eff)


def test_an_ops_own_dispatch_cost_replaces_the_overhead():
    """o_node = op.<Op>.dispatch_s where the spec has it, else overhead_s; a per-op efficiency key
    (``Transpose.eltwise``) reads its op type's cost; the thread pool's dispatch still comes on top."""
    s = _spec(**{dispatch_key("Slice"): O + 1.5e-6, dispatch_key("Reshape"): O - 0.5e-6})
    assert efficiencies(s, "movement", op="Slice")[2] == pytest.approx(O + 1.5e-6)
    assert efficiencies(s, "movement", op="Reshape")[2] == pytest.approx(O - 0.5e-6)
    assert efficiencies(s, "activation", op="Relu")[2] == pytest.approx(O)
    assert efficiencies(s, "movement")[2] == pytest.approx(O)
    t = _spec(**{dispatch_key("Transpose"): O + 1e-6, "overhead_parallel_s": 5e-6, "parallel_min_bytes": 100})
    assert efficiencies(t, "movement", op="Transpose.eltwise")[2] == pytest.approx(O + 1e-6)
    assert efficiencies(t, "movement", 100, op="Transpose")[2] == pytest.approx(O + 1e-6 + 5e-6)
    assert efficiencies(load_spec("xeon-8480plus"), "movement", op="Slice")[2] == 0.0  # a preset: no overhead


def test_the_roofline_charges_each_node_its_ops_cost():
    """A Slice and a Relu of 64 floats on a spec with op.Slice.dispatch_s = 1.5 µs: the Slice's dispatch is
    o + 1.5 µs, the Relu's o, and the difference in their predicted times is the 1.5 µs (their traffic alike)."""
    m = model([helper.make_node("Relu", ["x"], ["r"]),
               helper.make_node("Slice", ["x", "b", "e", "a"], ["s"])],
              [vi("x", [4, 16])], [vi("r", [4, 16]), vi("s", [2, 16])],
              [const(n, [1], onnx.TensorProto.INT64, v) for n, v in (("b", [1]), ("e", [3]), ("a", [0]))])
    a = onnxperf.analyze(m)
    rl = roofline(a, _spec(**{dispatch_key("Slice"): O + 1.5e-6}))
    by = {r.op_type: r for r in rl.nodes}
    assert by["Relu"].dispatch_s == pytest.approx(O)
    assert by["Slice"].dispatch_s == pytest.approx(O + 1.5e-6)
    plain = {r.op_type: r for r in roofline(a, _spec()).nodes}
    assert by["Slice"].time_s - plain["Slice"].time_s == pytest.approx(1.5e-6)
    assert by["Relu"].time_s == pytest.approx(plain["Relu"].time_s)


def test_validate_scales_the_per_op_cost_by_the_dispatch_probe():
    """A machine whose dispatch probe reads 1.8 µs per node where the calibration's read 1.2: every per-node
    time of the runtime's own, the per-op costs too, is 1.5x."""
    ref, now = Probe(14e9, 98e9, 1.2e-6), Probe(14e9, 98e9, 1.8e-6)
    s = scaled_spec(_spec(**{dispatch_key("Concat"): 3e-6, dispatch_key("Reshape"): 1.6e-6}), now, ref)
    assert s.efficiency["overhead_s"] == pytest.approx(O * 1.5)
    assert s.efficiency[dispatch_key("Concat")] == pytest.approx(4.5e-6)
    assert s.efficiency[dispatch_key("Reshape")] == pytest.approx(2.4e-6)


def test_the_floor_case_is_valid_and_every_node_costed():
    """Every op of FLOOR_OPS once per round, interleaved, each node on its own 64-float input; onnx's checker
    passes and onnxperf costs every node with nil arithmetic and traffic."""
    c = floor_case(copies=2)
    onnx.checker.check_model(c.model, full_check=True)
    ops = [n.op_type for n in c.model.graph.node]
    assert ops == list(FLOOR_OPS) * 2 and FLOOR_OPS[0] == "Relu"
    a = onnxperf.analyze(c.model)
    assert a.coverage.complete
    assert all(n.bytes_read + n.bytes_written <= 4 * 4 * 16 * 8 for n in a.main_nodes)


def test_calibration_measures_each_ops_cost_beyond_a_relus(tmp_path):
    """Through onnxruntime (2 timed runs): a finite cost for the ops it runs as kernels, Relu itself none (the
    reference), and nothing for an op outside FLOOR_OPS."""
    got = dispatch_floors(tmp_path, runs=2, warmup=1, threads=1, opt="all")
    assert got and "Relu" not in got and set(got) <= set(FLOOR_OPS)
    assert {"Slice", "Concat", "Gather", "Transpose"} <= set(got)
    assert all(math.isfinite(v) and abs(v) < 1e-3 for v in got.values())
