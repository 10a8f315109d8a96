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
the note says which, and ``bound`` which side of the truth the figure is on: ``upper`` for the
costlier branch of an If whose cond is not known and for a Loop's M when its cond may stop it
sooner, ``lower`` for one run of a loop whose trip count is unknown and for a body with nodes not
costed (``unknown`` when a figure holds both).

Loop trip counts come from shape inference (:mod:`onnxperf.shapes.loops`, ``NodeView.trips``): M, or the
loop's own cond run on its counters, as far as they follow statically.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from onnxperf.shapes.loops import UNBOUNDED_TRIPS
from onnxperf.cost.ops.registry import LOWER, UPPER, BadNode, NodeView, OpCost, SubgraphCost, axis_of, combine_bounds, register, scalar


def _fmt(sc: SubgraphCost) -> str:
    return f"{sc.flops:,} FLOPs, {sc.bytes_read + sc.bytes_written:,} bytes"


def _uncosted_note(named: Iterable[tuple[str, SubgraphCost]]) -> str:
    parts = [f"{name} has {sc.uncosted_nodes} of {sc.nodes} nodes not costed (unsupported or unknown shape)"
             for name, sc in named if sc.uncosted_nodes]
    return "; ".join(parts)


def _body_bound(*bodies: SubgraphCost) -> str:
    """The side of a figure that holds these bodies: lower when a node of one is not costed or is a
    lower bound, upper when one is an upper bound."""
    return combine_bounds(*(LOWER for b in bodies if b.uncosted_nodes or b.lower_nodes),
                          *(UPPER for b in bodies if b.upper_nodes))


def _scaled(body: SubgraphCost, times: int, *, exact: bool, notes: list[str], extra_read: int = 0,
            bound: str = "") -> OpCost:
    return OpCost(macs=body.macs * times, flops=body.flops * times, int_ops=body.int_ops * times,
                  bytes_read=body.bytes_read * times + extra_read, bytes_written=body.bytes_written * times,
                  exact=exact, note="; ".join(x for x in notes if x), bound="" if exact else bound)


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
        notes.append(f"counts the costlier branch, {name} (then_branch: {_fmt(then)}; else_branch: {_fmt(other)})"
                     + ("" if exact else ": an upper bound, the cond depends on data"))
    uncosted = _uncosted_note([("then_branch", then), ("else_branch", other)])
    if uncosted:
        exact = False
        notes.append(uncosted)
    considered = (taken,) if c is not None else (then, other)
    bound = combine_bounds("" if c is not None or _cost_key(then) == _cost_key(other) else UPPER,
                           _body_bound(*considered))
    exact = exact and not bound
    return _scaled(taken, 1, exact=exact, notes=notes, extra_read=cond_bytes, bound=bound)


def loop(n: NodeView) -> OpCost:
    """Loop (M, cond, v_initial...): body × trips. The trip count is shape inference's
    (``NodeView.trips``, :func:`onnxperf.shapes.loops.run_loop`): M for a for loop; for a while loop the
    loop's own cond run on its counters; M as an upper bound when the cond depends on data. Without
    it (a count declared nowhere else), in order of trust: the leading dim of a static scan output
    (the number of runs, exact); an initial cond that is the constant false (0); a constant M (an
    upper bound with a cond input). An unknown count counts one run: a lower bound."""
    body = n.subgraphs["body"]
    carried = max(len(n.inputs) - 2, 0)
    notes: list[str] = []
    trips, bound = None, ""
    t = n.trips
    if t is not None and t.count is not None:
        trips, exact = t.count, t.bound == "exact"
        bound = {"exact": "", "upper": UPPER, "lower": LOWER}.get(t.bound, "unknown")
        notes.append(t.how)
    if trips is None:
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
        elif m is not None and 0 <= m < UNBOUNDED_TRIPS and t is None:
            trips = m
            exact = not n.has_input(1)
            bound = "" if exact else UPPER
            notes.append(f"trip count M = {m}" + ("" if exact else
                         " (an upper bound: the loop condition may end it sooner)"))
        else:
            trips, exact, bound = 1, False, LOWER
            why = t.how if t is not None else "trip count unknown (" + (
                "M is absent" if not n.has_input(0) else "M is not a constant" if m is None
                else f"M = {m} means 'until cond is false'") + ")"
            notes.append(f"{why}: counts one run of the body, a lower bound")
    uncosted = _uncosted_note([("body", body)])
    if uncosted:
        exact = False
        notes.append(uncosted)
    bound = combine_bounds(bound, _body_bound(body)) if trips else bound
    exact = exact and not bound
    return _scaled(body, trips, exact=exact, notes=notes, bound=bound)


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
    bound = "" if exact else UPPER
    uncosted = _uncosted_note([("body", body)])
    if uncosted:
        exact = False
        notes.append(uncosted)
    bound = combine_bounds(bound, _body_bound(body))
    return _scaled(body, batch * seq, exact=exact and not bound, notes=notes, bound=bound)


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
    bound = _body_bound(body)
    return _scaled(body, length, exact=not uncosted and not bound, notes=notes, bound=bound)


def sequence_map(n: NodeView) -> OpCost:
    """SequenceMap: body × sequence length. onnxperf does not track the length of sequence
    values, so one iteration is counted (exact=False)."""
    body = n.subgraphs["body"]
    notes = ["sequence length unknown: counts one iteration of the body, a lower bound"]
    uncosted = _uncosted_note([("body", body)])
    if uncosted:
        notes.append(uncosted)
    return _scaled(body, 1, exact=False, notes=notes, bound=combine_bounds(LOWER, _body_bound(body)))


# Output shapes of control-flow nodes are often unknown (a branch's or an iteration's shape
# is data-dependent); these rules never need them: the traffic comes from the bodies.
register("If", if_, family="control_flow", outputs_may_be_unknown=True)
register("Loop", loop, family="control_flow", outputs_may_be_unknown=True)
register("Scan", scan_8, family="control_flow", since=8, outputs_may_be_unknown=True)
register("Scan", scan_9, family="control_flow", since=9, outputs_may_be_unknown=True)
register("SequenceMap", sequence_map, family="control_flow", since=17, outputs_may_be_unknown=True)
