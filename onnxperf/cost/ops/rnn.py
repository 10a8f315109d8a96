"""Recurrent ops: RNN, GRU, LSTM (ai.onnx).

Notation: seq sequence length, dirs num_directions (2 when bidirectional), N batch,
I input_size, H hidden_size, G gates (RNN 1, GRU 3, LSTM 4). W is [dirs, G·H, I],
R is [dirs, G·H, H]; X is [seq, N, I] (``layout`` 0) or [N, seq, I] (``layout`` 1, opset 14+).

MACs = seq·dirs·N·(I + H)·G·H: per step, the input projection X·W^T and the recurrent
projection H·R^T of every gate. Each gate's X·W^T + H·R^T is one dot product of length
I + H, so its add is already in the MACs (GRU with ``linear_before_reset`` is the exception:
its candidate gate adds the two products after the reset multiply, one more op).

FLOPs = 2·MACs + seq·dirs·N·H·u, where u (ops per hidden unit per step) sums:

* biases: 2 adds per gate (Wb and Rb, as the spec's equations write them; kernels that
  pre-sum the two bias vectors do 1), when B is given;
* activations: the per-element cost of each activation function, from
  :data:`onnxperf.cost.ops.elementwise.PER_ELEMENT` (Sigmoid 4, Tanh 1, Relu 1 ...), plus
  :data:`EXTRA_ACTIVATIONS` for the two that are not ONNX ops (Affine, ScaledTanh);
* ``clip``: a min and a max on the input of every activation;
* the cell update of :data:`CELLS` (LSTM: C = f·C' + i·c, H = o·h(C); GRU: r·H' and
  H = (1 − z)·h + z·H'); LSTM peepholes (P given): 3 multiplies and 3 adds.

Not modelled: LSTM ``input_forget`` (the forget gate is still computed), the initial states
(read, no arithmetic). Traffic is the default (every input and output once): the weights are
read once, the per-step states are assumed to stay in cache.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from onnxperf.cost.ops.elementwise import PER_ELEMENT
from onnxperf.cost.ops.registry import BadNode, NodeView, OpCost, arith, register

#: activations the recurrent ops accept that are not ONNX operators: ops per element.
#: Affine = alpha·x + beta; ScaledTanh = alpha·tanh(beta·x).
EXTRA_ACTIVATIONS: dict[str, int] = {"Affine": 2, "ScaledTanh": 3}

_ACTIVATION_COST = {k.lower(): v for k, v in {**PER_ELEMENT, **EXTRA_ACTIVATIONS}.items()}

#: ops per hidden unit per step of LSTM peepholes: P·C for the i, f and o gates, and their adds
PEEPHOLE_OPS = 6
#: adds per gate per hidden unit for the biases Wb + Rb
BIAS_ADDS_PER_GATE = 2
#: a clip is a min and a max on an activation's input
CLIP_OPS = 2


@dataclass(frozen=True)
class Cell:
    """One recurrent cell type.

    ``applications``: for every activation evaluated per hidden unit per step, its index in
    the direction's activation list (LSTM: f on i, f and o; g on c; h on C).
    ``cell_ops``: elementwise ops per hidden unit per step outside gates and activations.
    ``peephole_input``: the input index of the peephole weights P (LSTM), or None.
    ``linear_before_reset``: the cell honours the ``linear_before_reset`` attribute (GRU):
    its candidate gate adds X·Wh and r·(H'·Rh + Rbh) after the reset multiply, 1 more op.
    """

    gates: int
    defaults: tuple[str, ...]
    applications: tuple[int, ...]
    cell_ops: int
    peephole_input: int | None = None
    linear_before_reset: bool = False


#: RNN: H = f(X·Wi + H'·Ri + b). GRU: r·H' (1), H = (1 − z)·h + z·H' (sub, 2 mul, add: 4).
#: LSTM: C = f·C' + i·c (2 mul, add), H = o·h(C) (1 mul).
CELLS: dict[str, Cell] = {
    "RNN": Cell(1, ("Tanh",), (0,), 0),
    "GRU": Cell(3, ("Sigmoid", "Tanh"), (0, 0, 1), 5, linear_before_reset=True),
    "LSTM": Cell(4, ("Sigmoid", "Tanh", "Tanh"), (0, 0, 1, 0, 2), 4, peephole_input=7),
}


def activation_cost(name: str) -> int:
    """Ops per element of a recurrent activation (case-insensitive name)."""
    try:
        return _ACTIVATION_COST[name.lower()]
    except KeyError:
        raise BadNode(f"unknown recurrent activation {name!r}") from None


def _direction_activations(acts: list[str], cell: Cell, d: int) -> list[str]:
    k = len(cell.defaults)
    if len(acts) >= (d + 1) * k:
        return acts[d * k:(d + 1) * k]
    if len(acts) >= k:
        return acts[:k]
    return list(cell.defaults)


def _per_unit_ops(n: NodeView, cell: Cell, dirs: int) -> int:
    """Elementwise ops per hidden unit per step, summed over the directions."""
    acts = [a.decode() if isinstance(a, bytes) else str(a) for a in (n.attr("activations") or [])]
    clip = n.attr("clip") is not None
    total = 0
    for d in range(dirs):
        names = _direction_activations(acts, cell, d)
        u = cell.cell_ops
        u += sum(activation_cost(names[i]) for i in cell.applications)
        u += CLIP_OPS * len(cell.applications) if clip else 0
        u += BIAS_ADDS_PER_GATE * cell.gates if n.has_input(3) else 0
        if cell.peephole_input is not None and n.has_input(cell.peephole_input):
            u += PEEPHOLE_OPS
        if cell.linear_before_reset and n.attr("linear_before_reset", 0):
            u += 1  # X·Wh + r·(H'·Rh + Rbh): the two products are added after the reset multiply
        total += u
    return total


def _recurrent_rule(cell: Cell) -> Callable[[NodeView], OpCost]:
    def recurrent(n: NodeView) -> OpCost:
        """RNN/GRU/LSTM: MACs = seq·dirs·N·(I + H)·G·H;
        FLOPs = 2·MACs + seq·N·H·Σ_dirs u (u from the module docstring).
        When ``sequence_lens`` is given and not a constant equal to seq everywhere, every step
        of seq is still counted (an upper bound, exact=False)."""
        x, w, r = n.inp(0), n.inp(1), n.inp(2)
        dirs, gh, i_size = w.shape
        h = r.shape[2]
        if gh != cell.gates * h:
            raise BadNode(f"W has {gh} rows, expected {cell.gates}·{h}")
        seq, batch = (x.shape[1], x.shape[0]) if n.attr("layout", 0) else (x.shape[0], x.shape[1])
        macs = seq * dirs * batch * (i_size + h) * cell.gates * h
        ops = 2 * macs + seq * batch * h * _per_unit_ops(n, cell, dirs)
        exact, note = True, ""
        if n.has_input(4):
            lens = n.const(4)
            if lens is None or not np.all(np.asarray(lens) == seq):
                exact = False
                note = f"sequence_lens may end some sequences early: all {seq} steps are counted"
        return arith(ops, x.elem_type, macs=macs, exact=exact, note=note)

    return recurrent


for _op, _cell in CELLS.items():
    register(_op, _recurrent_rule(_cell), family="rnn")
