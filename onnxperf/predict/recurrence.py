"""What onnxruntime's CPU LSTM and GRU run step by step, and what each step costs on a calibrated spec.

``UniDirectionalLstm::Compute`` (onnxruntime, deep_cpu_lstm / uni_directional_lstm.cc) runs a direction as:

1. the input projection of every step, X·Wᵀ, as one GEMM of [seq·N, I] by [I, 4H] on the thread pool
   (:func:`onnxperf.predict.roofline.rnn_gemm_flops`: at the matrix products' rate);
2. then, step after step, the recurrent product H_{t-1}·Rᵀ, a GEMM of [rows, H] by [H, 4H], and the cell
   (three sigmoids, two tanh, the state update) of each row.

The two directions of a bidirectional LSTM run one after the other: 2·seq steps. How a step uses the pool
of P threads depends on the batch N and H (``SetNumThreads``):

* **batch-parallel** (N > 4, or N ≥ 2 and H ≤ 256): the N rows are split in chunks of r = ⌈N / P⌉, and each
  thread runs every step of its chunk on its own, one-threaded GEMM included: each thread reads the whole of R
  every step, and the pool is entered once per direction;
* otherwise (N = 1; N = 2..4 with H > 256): each step's GEMM goes through the pool (MLAS splits R's columns,
  each thread reading R / P) and the cells run on the calling thread: a hand-off through the pool per step.

A GRU (``UniDirectionalGru::Compute``) never splits its rows: each step runs two GEMMs through the pool
(H_{t-1}·R_zrᵀ, [N, H] by [H, 2H], then (r ⊙ H_{t-1})·R_hᵀ, [N, H] by [H, H], or H_{t-1}·R_hᵀ before the
reset with ``linear_before_reset``), each splitting R's columns, and the cells on the calling thread.

So a step reads R again, G·H·H elements, 1 MiB of a float32 LSTM at H = 256, where the node's bytes count R once
(benchmarks/results/lstm_steps.md: 7.9-9.5 µs a step at two threads on the 2-core VM, R streamed at 72-136
GB/s). A step's time on the thread that sets it (:func:`step_s`),

    t_step = max(B / β, F / φ) + U · c + [pool] · s

B the bytes of R that thread reads, F its recurrent product's FLOPs (2·r·G·H·H), φ one core's matrix-product
rate (e_matmul · π / P), U the activations its cells evaluate (r·H times :data:`ACTIVATIONS`: an LSTM's
three sigmoids and two tanh, a GRU's two and one), [pool] the hand-offs of a step's GEMMs through the pool
(an LSTM's one where it splits, a GRU's two), and three constants ``hw calibrate`` fits on LSTMs of several
batches and sizes (:data:`STREAM_KEY` β, the rate a thread streams R at; :data:`CELL_KEY` c, one activation
of one hidden unit with its share of the gates' arithmetic; :data:`STEP_KEY` s, a hand-off through the
pool). A GRU takes the LSTMs' β and s, and its own c (:data:`GRU_CELL_KEY`, from one GRU whose time is mostly
its cells: on the 2-core VM its activations cost 1.3x an LSTM's); without it, the LSTMs'. A spec without β keeps the
recurrence as arithmetic at the ``rnn`` family's efficiency.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from onnxperf.base import dtypes
from onnxperf.predict.tensors import static_shape

#: a calibrated spec's rate (bytes/s) at which one thread streams an LSTM's recurrent weights R each step
STREAM_KEY = "rnn.stream_bytes_per_s"
#: a calibrated spec's time (s) of one activation of one hidden unit in a cell (with its share of the gates' and
#: the state's arithmetic) on one thread
CELL_KEY = "rnn.cell_s"
#: a calibrated spec's time (s) of a step's hand-off through the thread pool, where its GEMM is split
STEP_KEY = "rnn.step_s"
#: a calibrated spec's time (s) of one activation of one hidden unit in a GRU's cell, on one thread
GRU_CELL_KEY = "rnn.gru.cell_s"
KEYS = (STREAM_KEY, CELL_KEY, STEP_KEY, GRU_CELL_KEY)
#: LSTM gates (i, o, f, c): R is [dirs, 4·H, H]; a GRU's (z, r, h): [dirs, 3·H, H]
GATES = {"LSTM": 4, "GRU": 3}
#: activations a cell evaluates per hidden unit per step: an LSTM's f(i), f(f), f(o), g(c), h(C); a GRU's f(z),
#: f(r), g(h)
ACTIVATIONS = {"LSTM": 5, "GRU": 3}


@dataclass(frozen=True)
class Steps:
    """The recurrence of one LSTM or GRU node as onnxruntime's CPU kernel runs it on a pool of ``pool`` threads."""

    steps: int  # seq · dirs: the steps run one after another
    batch_parallel: bool  # the rows split across threads, each running every step on its own
    rows: int  # the rows the slowest thread runs per step (r)
    stream_bytes: int  # B: the bytes of R that thread reads per step
    step_flops: int  # F: that thread's recurrent product per step, 2·rows·G·H·H (or 2·N·G·H·H / P split)
    cell_units: int  # U: the activations that thread's cells evaluate per step (rows·H·ACTIVATIONS)
    pool_steps: int  # hand-offs through the pool (each split GEMM's), 0 when batch-parallel


def batch_parallel(batch: int, hidden: int) -> bool:
    """onnxruntime's choice (``UniDirectionalLstm::SetNumThreads``): split the batch rows across threads when
    N > 4, or N ≥ 2 and H ≤ 256."""
    return batch > 4 or (batch >= 2 and hidden <= 256)


def recurrence_steps(n, pool: int, layout: int = 0) -> Steps | None:
    """The recurrence of LSTM or GRU node ``n`` (module docstring) on a pool of ``pool`` threads; ``layout``: the
    node's attribute (1: X is [N, seq, I]). None for another op, or where a shape is not known."""
    if n.op_type not in GATES or n.domain or len(n.inputs) < 3 or any(t is None for t in n.inputs[:3]):
        return None
    gates, acts = GATES[n.op_type], ACTIVATIONS[n.op_type]
    x, r = static_shape(n.inputs[0]), static_shape(n.inputs[2])
    if x is None or r is None or len(x) != 3 or len(r) != 3 or r[1] != gates * r[2]:
        return None
    seq, batch = (x[1], x[0]) if layout else (x[0], x[1])
    dirs, hidden = r[0], r[2]
    pool = max(1, pool)
    elem = dtypes.nbytes(dtypes.elem_type(n.inputs[2].dtype), 1)
    if elem <= 0:
        return None
    r_bytes = elem * gates * hidden * hidden  # one direction's R
    flops = 2 * gates * hidden * hidden  # a row's recurrent product per step
    if n.op_type == "LSTM" and batch_parallel(batch, hidden):
        rows = math.ceil(batch / pool)
        return Steps(seq * dirs, True, rows, r_bytes, rows * flops, acts * rows * hidden, 0)
    # the GEMMs split over the pool by R's columns (an LSTM's one per step, a GRU's two); the cells on the
    # calling thread
    per_step = 1 if n.op_type == "LSTM" else 2
    return Steps(seq * dirs, False, batch, r_bytes // pool, batch * flops // pool, acts * batch * hidden,
                 per_step * seq * dirs)


def step_s(st: Steps, core_flops_per_s: float, stream_bytes_per_s: float, cell_s: float) -> float:
    """The arithmetic of one step on the thread that sets it: max(B / β, F / φ) + U·c (module docstring; the
    pool's hand-off, [pool]·s, is the runtime's dispatch and added apart)."""
    return max(st.stream_bytes / stream_bytes_per_s, st.step_flops / core_flops_per_s) + st.cell_units * cell_s


def calibrated(spec) -> tuple[float, float, float] | None:
    """(β, c, s) of a spec calibrated with the LSTM steps (:data:`KEYS`; a spec leaves out a constant whose fit is
    0), else None: a spec without β."""
    eff = getattr(spec, "efficiency", None) or {}
    if float(eff.get(STREAM_KEY, 0)) <= 0:
        return None
    return float(eff[STREAM_KEY]), float(eff.get(CELL_KEY, 0.0)), float(eff.get(STEP_KEY, 0.0))


def cell_s(spec, op: str, lstm_cell_s: float) -> float:
    """c of ``op``'s cells on a calibrated spec: a GRU's own (:data:`GRU_CELL_KEY`) where the spec has it, else
    the LSTMs' ``lstm_cell_s``."""
    eff = getattr(spec, "efficiency", None) or {}
    return float(eff[GRU_CELL_KEY]) if op == "GRU" and float(eff.get(GRU_CELL_KEY, 0)) > 0 else lstm_cell_s


def layouts(a) -> dict[str, int]:
    """Node key -> the ``layout`` attribute of each main-graph LSTM and GRU of an analysis (0 where it has none),
    from the loaded file; without one, every one is taken as layout 0."""
    loaded = getattr(a, "loaded", None)
    if loaded is None:
        return {}
    g = loaded.graph
    return {n.key: next((at.i for at in g.nodes[n.id].attribute if at.name == "layout"), 0)
            for n in a.main_nodes if n.op_type in GATES and not n.domain}


__all__ = ["ACTIVATIONS", "CELL_KEY", "GATES", "GRU_CELL_KEY", "KEYS", "STEP_KEY", "STREAM_KEY", "Steps",
           "batch_parallel", "calibrated", "cell_s", "layouts", "recurrence_steps", "step_s"]
