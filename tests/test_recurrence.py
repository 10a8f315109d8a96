"""An LSTM timed step by step as onnxruntime's CPU kernel runs it (issue 30, item 4: the LSTM's error): the plan
of its recurrence, the roofline's time on a spec calibrated with the step constants, their fit, and how the
state normalization scales them. Expected values derived from named dims."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxperf
from onnxperf.hardware import load_spec
from onnxperf.insights.advice import STEP_PARTS, node_why
from onnxperf.predict.ort_threads import THREADS_KEY
from onnxperf.predict.recurrence import (ACTIVATIONS, CELL_KEY, GATES, GRU_CELL_KEY, STEP_KEY, STREAM_KEY, Steps,
                                         batch_parallel, calibrated, recurrence_steps, step_s)
from onnxperf.predict.roofline import rnn_gemm_flops, roofline
from onnxperf.products.calibration.fit import STREAM_RATES, StepSample, fit_gru_cell, fit_steps
from onnxperf.products.calibration.suite import GRU_CELL_SHAPE, STEP_SHAPES, recurrence_step_cases
from onnxperf.products.validate.runner import Probe
from onnxperf.products.validate.state import scaled_spec
from onnxperf.ui.numbers import seconds

F32 = 4  # bytes of a float32
SEQ, INPUT, DIRS = 10, 32, 2


def _lstm(hidden: int, batch: int, seq: int = SEQ, inp: int = INPUT, layout: int = 0, op: str = "LSTM"):
    gates = {"LSTM": 4, "GRU": 3, "RNN": 1}[op]
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.random((DIRS, gates * hidden, inp), np.float32), "W"),
             numpy_helper.from_array(rng.random((DIRS, gates * hidden, hidden), np.float32), "R")]
    x = [batch, seq, inp] if layout else [seq, batch, inp]
    attrs = {"layout": layout} if layout else {}
    node = helper.make_node(op, ["x", "W", "R"], ["y"], hidden_size=hidden, direction="bidirectional", **attrs)
    g = helper.make_graph([node], "lstm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])
    m.ir_version = 8
    return m


def _node(m):
    (n,) = onnxperf.analyze(m).main_nodes
    return n


LSTM_G, LSTM_ACTS = 4, 5  # gates i, o, f, c; activations f(i), f(f), f(o), g(c), h(C)


def test_a_batch_of_one_splits_each_steps_product_over_the_pool():
    """N = 1: S = seq·dirs steps, each through the pool; a thread reads R / P = 4·4H·H / P bytes and does
    2·N·4H·H / P FLOPs of the product, the calling thread the cells' 5·N·H activations."""
    h, n, pool = 256, 1, 2
    st = recurrence_steps(_node(_lstm(h, n)), pool)
    assert (GATES["LSTM"], ACTIVATIONS["LSTM"]) == (LSTM_G, LSTM_ACTS)
    assert not st.batch_parallel
    assert st == Steps(SEQ * DIRS, False, n, F32 * LSTM_G * h * h // pool, 2 * n * LSTM_G * h * h // pool,
                       LSTM_ACTS * n * h, SEQ * DIRS)


def test_a_larger_batch_splits_its_rows_across_the_threads():
    """N = 16, H = 64 (batch-parallel): each thread runs r = ⌈N / P⌉ rows through every step on its own, reading
    the whole of R (4·4H·H bytes) each step, with no hand-off through the pool."""
    h, n, pool = 64, 16, 2
    r = math.ceil(n / pool)
    st = recurrence_steps(_node(_lstm(h, n)), pool)
    assert st == Steps(SEQ * DIRS, True, r, F32 * LSTM_G * h * h, 2 * r * LSTM_G * h * h, LSTM_ACTS * r * h, 0)
    st3 = recurrence_steps(_node(_lstm(h, 5)), 4)  # 5 rows on 4 threads: chunks of 2, the slowest runs 2
    assert st3.rows == 2 and st3.cell_units == LSTM_ACTS * 2 * h


def test_a_gru_runs_two_split_gemms_a_step_at_any_batch():
    """A GRU (z, r, h: R is [dirs, 3H, H]) never splits its rows: each step runs H·R_zrᵀ and then the h gate's
    product through the pool, a thread reading 4·3H·H / P bytes and doing 2·N·3H·H / P FLOPs; the calling
    thread evaluates the cells' 3·N·H activations (f(z), f(r), g(h)); 2 hand-offs a step."""
    g, acts, pool = 3, 3, 2
    for h, n in ((64, 16), (512, 1)):
        st = recurrence_steps(_node(_lstm(h, n, op="GRU")), pool)
        assert st == Steps(SEQ * DIRS, False, n, F32 * g * h * h // pool, 2 * n * g * h * h // pool, acts * n * h,
                           2 * SEQ * DIRS)


@pytest.mark.parametrize(("n", "h", "split"), [(1, 64, False), (2, 256, True), (2, 257, False), (4, 512, False),
                                               (5, 512, True), (3, 128, True)])
def test_onnxruntimes_batch_parallel_rule(n, h, split):
    """``SetNumThreads``: rows split across threads when N > 4, or N ≥ 2 and H ≤ 256."""
    assert batch_parallel(n, h) is split


def test_layout_one_reads_the_batch_first_and_a_plain_rnn_is_not_planned():
    a = onnxperf.analyze(_lstm(64, 3, layout=1))
    (n,) = a.main_nodes
    assert recurrence_steps(n, 2, layout=1) == recurrence_steps(_node(_lstm(64, 3)), 2)
    assert recurrence_steps(_node(_lstm(64, 3, op="RNN")), 2) is None


BETA, CELL, HAND, E_MM, OVERHEAD, GRU_CELL = 40e9, 1.5e-8, 1e-6, 0.5, 2e-6, 3.5e-8


def _spec(steps: bool = True, threads: int = 2, gru: bool = True):
    eff = {"default.compute": 0.5, "default.memory": 0.5, "matmul.compute": E_MM, "rnn.compute": 0.3,
           "overhead_s": OVERHEAD, THREADS_KEY: float(threads)}
    if steps:
        eff.update({STREAM_KEY: BETA, CELL_KEY: CELL, STEP_KEY: HAND})
    if steps and gru:
        eff[GRU_CELL_KEY] = GRU_CELL
    return dataclasses.replace(load_spec("xeon-silver-4210x2"), efficiency=eff, efficiency_sources={})


@pytest.mark.parametrize(("op", "h", "n"), [("LSTM", 256, 1), ("LSTM", 64, 16), ("LSTM", 512, 8), ("GRU", 128, 4)])
def test_the_roofline_times_a_recurrence_step_by_step(op, h, n):
    """c' = W_g / (e_matmul·π) + S·(max(B / β, F / φ) + U·c), φ = e_matmul·π / P; o' = o + S_pool·s;
    t = max(c', m) + o' (no overlap fitted for rnn); the node's memory time as before."""
    m = _lstm(h, n, op=op)
    a = onnxperf.analyze(m)
    (node,) = a.main_nodes
    pool = 2
    st = recurrence_steps(node, pool)
    pi = _spec().peak_for("float32")
    rate = E_MM * pi
    cell = GRU_CELL if op == "GRU" else CELL  # a GRU's own c where the spec has it
    want_c = rnn_gemm_flops(node) / rate + st.steps * (max(st.stream_bytes / BETA, st.step_flops / (rate / pool))
                                                        + st.cell_units * cell)
    want_o = OVERHEAD + st.pool_steps * HAND
    before = roofline(a, _spec(steps=False)).nodes[0]
    row = roofline(a, _spec()).nodes[0]
    assert row.compute_s == pytest.approx(want_c)
    assert row.dispatch_s == pytest.approx(want_o)
    assert row.memory_s == pytest.approx(before.memory_s)
    assert row.time_s == pytest.approx(max(want_c, before.memory_s) + want_o)
    assert row.steps == SEQ * DIRS and before.steps == 0
    assert f"{SEQ * DIRS:,} steps one after another" in node_why(row, _spec())
    # a step's parts on the row: B/β, F/φ, U·c, the hand-offs per step; node_why names the largest of those that
    # make up the step's time (the smaller of the stream and the product is hidden under the other)
    parts = (st.stream_bytes / BETA, st.step_flops / (rate / pool), st.cell_units * cell,
             st.pool_steps * HAND / st.steps)
    assert row.step_parts == pytest.approx(parts) and before.step_parts is None
    counted = {STEP_PARTS[0]: parts[0] if parts[0] >= parts[1] else 0, STEP_PARTS[1]: parts[1] if parts[1] > parts[0]
               else 0, STEP_PARTS[2]: parts[2], STEP_PARTS[3]: parts[3]}
    lead = max(counted, key=counted.get)
    assert f"the largest part {lead} ({seconds(counted[lead])})" in node_why(row, _spec())
    if op == "GRU":  # without its own c, a GRU takes the LSTMs'
        plain_gru = roofline(a, _spec(gru=False)).nodes[0]
        assert plain_gru.compute_s == pytest.approx(want_c - st.steps * st.cell_units * (GRU_CELL - CELL))


def test_a_spec_without_the_step_constants_keeps_the_rnn_arithmetic():
    """Without β (or without the pool it was calibrated at): c = W_g / (e_matmul·π) + (W − W_g) / (e_rnn·π)."""
    a = onnxperf.analyze(_lstm(256, 1))
    (node,) = a.main_nodes
    pi = _spec().peak_for("float32")
    gemm = rnn_gemm_flops(node)
    want = gemm / (E_MM * pi) + (node.flops - gemm) / (0.3 * pi)
    assert calibrated(_spec(steps=False)) is None
    assert calibrated(_spec()) == (BETA, CELL, HAND)
    no_pool = dataclasses.replace(_spec(), efficiency={k: v for k, v in _spec().efficiency.items() if k != THREADS_KEY})
    for spec in (_spec(steps=False), no_pool):
        row = roofline(a, spec).nodes[0]
        assert row.compute_s == pytest.approx(want) and row.steps == 0


def test_the_fit_recovers_the_constants_of_the_step_cases():
    """Times made by the model itself from the calibration's shapes (plus a fixed part per case) give back
    β within the grid's step (10^(1/40), 6%), c and s within 2%."""
    pool, core = 2, E_MM * 200e9 / 2
    samples = []
    for case in recurrence_step_cases()[:-1]:  # the LSTMs
        (n,) = onnxperf.analyze(case.model).main_nodes
        st = recurrence_steps(n, pool)
        fixed = 3e-5
        t = fixed + st.steps * step_s(st, core, BETA, CELL) + st.pool_steps * HAND
        samples.append(StepSample(case.name, st, t, fixed))
    got = fit_steps(samples, core)
    assert got[STREAM_KEY] == pytest.approx(BETA, rel=10 ** (1 / 40) - 1)
    assert got[CELL_KEY] == pytest.approx(CELL, rel=0.02)
    assert got[STEP_KEY] == pytest.approx(HAND, rel=0.02)
    assert min(STREAM_RATES) <= BETA <= max(STREAM_RATES)


def test_a_grus_cell_constant_is_what_its_time_leaves_with_beta_and_s_held():
    """c_gru = (y − max(B / β, F / φ) − (hand-offs / S)·s) / U for the calibration's GRU; 0 when nothing is
    left."""
    (n,) = onnxperf.analyze(recurrence_step_cases()[-1].model).main_nodes
    assert n.op_type == "GRU"
    st = recurrence_steps(n, 2)
    core, fixed = E_MM * 200e9 / 2, 3e-5
    t = fixed + st.steps * step_s(st, core, BETA, GRU_CELL) + st.pool_steps * HAND
    assert fit_gru_cell(StepSample("gru", st, t, fixed), core, BETA, HAND) == pytest.approx(GRU_CELL)
    assert fit_gru_cell(StepSample("gru", st, fixed, fixed), core, BETA, HAND) == 0.0
    assert (st.rows, st.cell_units) == (GRU_CELL_SHAPE[1], 3 * GRU_CELL_SHAPE[1] * GRU_CELL_SHAPE[0])


def test_the_fit_needs_three_timed_cases():
    st = Steps(64, False, 1, 1 << 19, 1 << 20, 256, 64)
    assert fit_steps([StepSample("a", st, 1e-3, 0.0), StepSample("b", st, 1e-3, 0.0)], 1e11) == {}
    assert fit_steps([StepSample(str(i), st, 1e-4, 1e-3) for i in range(4)], 1e11) == {}  # no time left for steps


def test_the_step_cases_cover_both_ways_of_running_a_step():
    """The calibration's LSTMs include steps through the pool and rows split across threads, at small and large H."""
    plans = [recurrence_steps(onnxperf.analyze(c.model).main_nodes[0], 2) for c in recurrence_step_cases()[:-1]]
    assert len(plans) == len(STEP_SHAPES)
    assert {p.batch_parallel for p in plans} == {True, False}
    assert len({h for h, _ in STEP_SHAPES}) >= 3


def test_the_state_normalization_scales_the_hand_off_by_dispatch_and_the_rest_by_the_core():
    ref = Probe(triad_bytes_per_s=30e9, matmul_flops_per_s=100e9, dispatch_s_per_node=1e-6)
    slow = Probe(triad_bytes_per_s=30e9, matmul_flops_per_s=80e9, dispatch_s_per_node=1.5e-6)
    eff = scaled_spec(_spec(), slow, ref).efficiency
    assert eff[STEP_KEY] == pytest.approx(HAND * 1.5)
    assert eff[CELL_KEY] == pytest.approx(CELL / 0.8)
    assert eff[GRU_CELL_KEY] == pytest.approx(GRU_CELL / 0.8)
    assert eff[STREAM_KEY] == pytest.approx(BETA * 0.8)
