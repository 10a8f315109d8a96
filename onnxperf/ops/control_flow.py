"""Control flow (ai.onnx): If, Loop, Scan, SequenceMap.

The cost walker costs every subgraph body first (its nodes get their own records, with a
non-empty ``scope``) and hands the body totals to these rules in ``NodeView.subgraphs``
(attribute name -> :class:`SubgraphCost`). A control node's cost is its body's cost times
the number of times the body runs; the model totals count main-graph nodes only, so body
work is counted once, through the control node.

Traffic is the body's traffic times the iterations (the If adds its condition). The control
node's own outputs are not counted again: they are the body's outputs, already written there.

A figure is inexact (exact=False) when the iteration count or the branch taken depends on
data, and when a body holds nodes that could not be costed (unsupported or unknown shape):
the note says which.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from .registry import BadNode, NodeView, OpCost, SubgraphCost, axis_of, register, scalar

#: a Loop trip count at or above this is a "run until the condition says stop" sentinel
#: (exporters write INT64_MAX or INT32_MAX), not a count
UNBOUNDED_TRIPS = 2**31 - 1


def _fmt(sc: SubgraphCost) -> str:
    return f"{sc.flops:,} FLOPs, {sc.bytes_read + sc.bytes_written:,} bytes"


def _uncosted_note(named: Iterable[tuple[str, SubgraphCost]]) -> str:
    parts = [f"{name} has {sc.uncosted_nodes} of {sc.nodes} nodes not costed (unsupported or unknown shape)"
             for name, sc in named if sc.uncosted_nodes]
    return "; ".join(parts)


def _scaled(body: SubgraphCost, times: int, *, exact: bool, notes: list[str], extra_read: int = 0) -> OpCost:
    return OpCost(macs=body.macs * times, flops=body.flops * times, int_ops=body.int_ops * times,
                  bytes_read=body.bytes_read * times + extra_read, bytes_written=body.bytes_written * times,
                  exact=exact, note="; ".join(x for x in notes if x))


def _cost_key(sc: SubgraphCost) -> tuple[int, int, int, int]:
    return (sc.flops, sc.bytes_read + sc.bytes_written, sc.int_ops, sc.macs)


def if_(n: NodeView) -> OpCost:
    """If: the branch taken when ``cond`` is a constant; otherwise the costlier branch, by
    FLOPs, then bytes (then int ops, MACs), exact=False unless both branches cost the same.
    bytes_read = cond + the branch's reads; bytes_written = the branch's writes."""
    then, other = n.subgraphs["then_branch"], n.subgraphs["else_branch"]
    cond_bytes = n.inp(0).nbytes if n.has_input(0) else 0
    c = scalar(n.const(0))
    notes = []
    if c is not None:
        name, taken = ("then_branch", then) if c else ("else_branch", other)
        exact = True
        notes.append(f"cond is the constant {bool(c)}: counts {name} ({_fmt(taken)})")
    else:
        if _cost_key(other) > _cost_key(then):
            name, taken = "else_branch", other
        else:
            name, taken = "then_branch", then
        exact = _cost_key(then) == _cost_key(other)
        notes.append(f"counts the costlier branch, {name} (then_branch: {_fmt(then)}; else_branch: {_fmt(other)})")
    uncosted = _uncosted_note([("then_branch", then), ("else_branch", other)])
    if uncosted:
        exact = False
        notes.append(uncosted)
    return _scaled(taken, 1, exact=exact, notes=notes, extra_read=cond_bytes)


def loop(n: NodeView) -> OpCost:
    """Loop (M, cond, v_initial...): body × trips. trips, in order of trust:

    1. the leading dim of a scan output (outputs after the loop-carried ones), when static:
       it is the number of iterations that ran, exact;
    2. an initial ``cond`` that is the constant false: 0;
    3. a constant M (below :data:`UNBOUNDED_TRIPS`): exact when there is no ``cond`` input
       (a for loop); with a ``cond`` the body's condition may stop earlier, so M is an upper
       bound (exact=False);
    4. otherwise one iteration, exact=False."""
    body = n.subgraphs["body"]
    carried = max(len(n.inputs) - 2, 0)
    notes: list[str] = []
    trips = None
    for o in n.outputs[carried:]:
        if o is not None and o.rank >= 1:
            trips, exact = o.shape[0], True
            notes.append(f"{trips} iterations, from the length of scan output {o.name!r}")
            break
    if trips is None:
        m = scalar(n.const(0)) if n.has_input(0) else None
        cond0 = scalar(n.const(1)) if n.has_input(1) else None
        if cond0 == 0:
            trips, exact = 0, True
            notes.append("the initial cond is the constant false: the body never runs")
        elif m is not None and 0 <= m < UNBOUNDED_TRIPS:
            trips = m
            exact = not n.has_input(1)
            notes.append(f"trip count M = {m}" + ("" if exact else
                         " (an upper bound: the loop condition may end it sooner)"))
        else:
            trips, exact = 1, False
            why = "M is absent" if not n.has_input(0) else (
                "M is not a constant" if m is None else f"M = {m} means 'until cond is false'")
            notes.append(f"trip count unknown ({why}): counts one iteration")
    uncosted = _uncosted_note([("body", body)])
    if uncosted:
        exact = False
        notes.append(uncosted)
    return _scaled(body, trips, exact=exact, notes=notes)


def _scan_inputs(n: NodeView, first: int) -> list:
    k = int(n.attr("num_scan_inputs", 0))
    if k <= 0:
        raise BadNode("num_scan_inputs must be positive")
    ins = list(n.inputs[first:])
    if k > len(ins):
        raise BadNode(f"num_scan_inputs = {k} but only {len(ins)} inputs")
    return ins[len(ins) - k:]


def scan_8(n: NodeView) -> OpCost:
    """Scan-8 (sequence_lens, states..., scan inputs [batch, seq, ...]): the body runs once
    per batch element per step: body × batch·seq. With ``sequence_lens`` that is not a
    constant equal to seq, an upper bound (exact=False)."""
    body = n.subgraphs["body"]
    first = _scan_inputs(n, 1)[0]
    batch, seq = first.shape[0], first.shape[1]
    notes = [f"{batch}×{seq} body runs (batch × scanned length)"]
    exact = True
    if n.has_input(0):
        lens = n.const(0)
        if lens is None or not np.all(np.asarray(lens) == seq):
            exact = False
            notes.append("sequence_lens may end some sequences early: every step counted")
    uncosted = _uncosted_note([("body", body)])
    if uncosted:
        exact = False
        notes.append(uncosted)
    return _scaled(body, batch * seq, exact=exact, notes=notes)


def scan_9(n: NodeView) -> OpCost:
    """Scan-9+ (states..., scan inputs): body × L, L the first scan input's dim on its
    ``scan_input_axes`` entry (default 0, negative counts from the back)."""
    body = n.subgraphs["body"]
    first = _scan_inputs(n, 0)[0]
    axes = n.attr("scan_input_axes") or [0]
    axis = axis_of(axes[0], first.rank)
    length = first.shape[axis]
    notes = [f"{length} iterations (scan input {first.name!r}, axis {axis})"]
    uncosted = _uncosted_note([("body", body)])
    if uncosted:
        notes.append(uncosted)
    return _scaled(body, length, exact=not uncosted, notes=notes)


def sequence_map(n: NodeView) -> OpCost:
    """SequenceMap: body × sequence length. onnxperf does not track the length of sequence
    values, so one iteration is counted (exact=False)."""
    body = n.subgraphs["body"]
    notes = ["sequence length unknown: counts one iteration of the body"]
    uncosted = _uncosted_note([("body", body)])
    if uncosted:
        notes.append(uncosted)
    return _scaled(body, 1, exact=False, notes=notes)


# Output shapes of control-flow nodes are often unknown (a branch's or an iteration's shape
# is data-dependent); these rules never need them: the traffic comes from the bodies.
register("If", if_, family="control_flow", outputs_may_be_unknown=True)
register("Loop", loop, family="control_flow", outputs_may_be_unknown=True)
register("Scan", scan_8, family="control_flow", since=8, outputs_may_be_unknown=True)
register("Scan", scan_9, family="control_flow", since=9, outputs_may_be_unknown=True)
register("SequenceMap", sequence_map, family="control_flow", since=17, outputs_may_be_unknown=True)
