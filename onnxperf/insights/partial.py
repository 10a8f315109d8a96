"""Partial results: what leaves a total short and what to do about it, worded once for every output
(summary, report, check, compare, sweep).

A node that is not costed (``unsupported``, ``unknown_shape`` or ``rule_error``) makes every cost total a lower
bound. Its cost is unknown, never zero: the totals say ``complete: false`` and name the op types
left out, and the warnings below say why and which flag fixes it. They are built from the
:class:`~onnxperf.cost.analysis.Costs` alone; renderers only format them.
"""

from __future__ import annotations

from typing import Any

from onnxperf.cost.analysis import Costs, Totals
from onnxperf.cost.walker import INVALID, UNKNOWN_SHAPE

#: ops whose output size depends on the values of their inputs: no binding makes it static
DATA_DEPENDENT = frozenset({"NonZero", "Unique", "NonMaxSuppression", "Compress", "StringSplit",
                            "com.microsoft::Unique"})

#: how many names or op types a message lists before "and N more"
SHOW = 3


def _n(k: int, noun: str) -> str:
    return f"{k:,} {noun}" + ("" if k == 1 else "s")


def some(names: tuple[str, ...] | list[str], k: int = SHOW) -> str:
    """``a, b, c and 297 more``: a few names, and how many were left out."""
    shown = ", ".join(names[:k])
    return shown + (f" and {len(names) - k:,} more" if len(names) > k else "")


def op_counts(items: tuple[tuple[str, int], ...], k: int = 6) -> str:
    """``Softmax ×4, Tanh ×1``, the largest counts first, cut after ``k`` op types."""
    ranked = sorted(items, key=lambda kv: (-kv[1], kv[0]))
    text = ", ".join(f"{op} ×{n}" for op, n in ranked[:k])
    return text + (f" and {len(ranked) - k} more op types" if len(ranked) > k else "")


def uncosted_text(t: Totals) -> str:
    """``5 nodes: Softmax ×4 (unknown shape); Foo ×1 (unsupported)``: the nodes left out of the
    totals by op type, and those counted in part (``Loop ×1 (trip count unknown: one run counted)``);
    empty when the totals are complete."""
    if t.complete:
        return ""
    parts = []
    for status, ops in t.uncosted_by_status:
        why = {"unknown_shape": "unknown shape", "rule_error": "rule error"}.get(status, "unsupported")
        parts.append(f"{op_counts(ops)} ({why})")
    if t.lower_bounded:
        parts.append(f"{op_counts(t.lower_bounded)} (counted in part: trip count unknown, one run counted)")
    n = t.uncosted_nodes + sum(k for _, k in t.lower_bounded)
    return f"{_n(n, 'node')}: " + "; ".join(parts)


def upper_text(t: Totals) -> str:
    """``NonZero ×3, Loop ×1``: the nodes whose sizes or counts are replaced by the largest the model can
    produce, making the totals an upper bound; empty when none is."""
    return op_counts(t.upper_bounded) if t.upper_bounded else ""


def totals_side_text(t: Totals) -> str:
    """How a heading introduces totals that are not exact: ``partial: lower bounds, some nodes are not
    costed``, ``upper bound: NonZero ×3``, or both."""
    lower = "partial: lower bounds, some nodes are not costed" if not t.complete else ""
    upper = f"upper bound: {upper_text(t)}" if t.upper_bounded and t.bound in ("upper", "unknown") else ""
    return "; ".join(x for x in (lower, upper) if x)


def unresolved_cause(a: Costs) -> tuple[str, str]:
    """(likely cause, the fix) for nodes blocked by dims that are not graph-input dims."""
    c = a.coverage
    invalid = _invalid(a)
    if invalid:
        return (f"the model is invalid: {_node(invalid[0])} has an {invalid[0].note}",
                "re-export the model (onnxruntime refuses it too)")
    free = [d for d in a.free_dims]
    if free:
        return (f"the input dims {some(free)} are unbound, and shape inference could not carry them through "
                "the model's shape arithmetic",
                "bind them: " + " ".join(f"--dim {d}=N" for d in free[:SHOW]))
    if c.inputs_to_shape:
        return (f"graph input {some(list(c.inputs_to_shape))} has an unknown rank or a dim without a name",
                "give it a fixed shape: " + " ".join(f"--input-shape {x}=AxB..." for x in c.inputs_to_shape[:SHOW]))
    if c.shapes_lost_at:
        dd = [op for op, _ in c.shapes_lost_at if op in DATA_DEPENDENT]
        where = f"shapes are lost at {op_counts(c.shapes_lost_at, 4)}" + (
            f" (first: {c.first_lost_at})" if c.first_lost_at else "")
        if dd:
            return (f"{where}: the output size of {', '.join(dd)} depends on input values",
                    "no flag binds a data-dependent size: these nodes stay uncosted "
                    "('onnxperf validate' measures them)")
        if a.dims or a.input_shapes:
            return (f"{where}: shape inference could not compute their output shapes from the known inputs; "
                    "a bound dim beyond what the model supports (a sequence longer than its position table) "
                    "does this",
                    "bind smaller values (--dim NAME=N within the model's limits), or check those nodes' inputs")
        return (f"{where}: shape inference could not compute their output shapes from the known inputs",
                "check those nodes' shape inputs; giving inputs fixed shapes (--input-shape INPUT=AxB...) "
                "can let their shape arithmetic be computed")
    return ("shape inference left some shapes unknown",
            "give the inputs fixed shapes: --input-shape INPUT=AxB...")


def _invalid(a: Costs) -> list:
    """The nodes left unshaped because an attribute is one no runtime accepts, in graph order."""
    return [n for n in a.nodes if n.status == UNKNOWN_SHAPE and n.note.startswith(INVALID)]


def _node(n) -> str:
    return f"#{n.key} {n.op_type} {n.name!r}"


def warnings(a: Costs) -> list[dict[str, Any]]:
    """Why the cost totals are partial, each with a code, a one-line message and what fixes it."""
    c = a.coverage
    out: list[dict[str, Any]] = []
    invalid = _invalid(a)
    if invalid:
        out.append({"code": "invalid_attributes", "level": "error", "nodes": [n.key for n in invalid],
                    "message": f"Invalid model: {_n(len(invalid), 'node')} with an attribute no runtime accepts "
                               f"({_node(invalid[0])}: {invalid[0].note[len(INVALID):]}"
                               + (f"; and {len(invalid) - 1:,} more" if len(invalid) > 1 else "")
                               + "): not shaped and not costed (totals are partial); onnxruntime refuses "
                               "such a model: re-export it"})
    if c.dims_to_bind:
        out.append({"code": "unbound_dims", "level": "warning", "dims": list(c.dims_to_bind),
                    "message": f"Unbound dims: {some(list(c.dims_to_bind), 8)}: {_n(c.unknown_shape, 'node')} not "
                               "costed (totals are partial); bind them: "
                               + " ".join(f"--dim {d}=N" for d in c.dims_to_bind)})
    elif c.unresolved_symbols:
        syms = list(c.unresolved_symbols)
        named = [s for s in syms if s != "?"]
        what = (f"{_n(len(named), 'unresolved dim')} ({some(named)})" if named else "dims without a name")
        if named and "?" in syms:
            what += " and dims without a name"
        cause, fix = unresolved_cause(a)
        out.append({"code": "unresolved_dims", "level": "warning", "dims": syms,
                    "message": f"Unresolved dims: {what} leave {_n(c.unknown_shape, 'node')} not costed "
                               f"(totals are partial). Likely cause: {cause}. Fix: {fix}"})
    if c.rule_errors:
        failed = [n for n in a.main_nodes if n.status == "rule_error"] or [n for n in a.nodes if n.status == "rule_error"]
        out.append({"code": "rule_errors", "level": "error", "op_types": dict(c.rule_error_op_types),
                    "message": f"A cost rule failed on {_n(c.rule_errors, 'node')} ("
                               + op_counts(c.rule_error_op_types, 6) + "): a bug in onnxperf, not in the model; "
                               f"these nodes are not counted (totals are partial). First: {failed[0].note}. "
                               "Please report it; --debug shows the traceback"})
    if c.unsupported:
        out.append({"code": "unsupported_ops", "level": "warning", "op_types": dict(c.unsupported_op_types),
                    "message": "Unsupported ops are not counted (totals are partial): "
                               + op_counts(c.unsupported_op_types, 12)})
    t = a.totals
    if t.lower_bounded:
        out.append({"code": "partly_counted", "level": "warning", "op_types": dict(t.lower_bounded),
                    "message": f"Counted in part: {op_counts(t.lower_bounded)}: the trip count does not follow from "
                               "the model's shapes and constants, so one run of the body is counted (totals are "
                               "partial); 'onnxperf validate' measures the real count's cost"})
    if t.upper_bounded:
        out.append({"code": "upper_bound", "level": "warning", "op_types": dict(t.upper_bounded),
                    "message": f"Upper bound: {op_counts(t.upper_bounded)} replace a size or a count the data "
                               "decides (an If's branch, a loop's trip count, a data-dependent output) by the "
                               "largest the model can produce: the totals are at most this"})
    return out


def reasons(sm: Any) -> list[str]:
    """Why the figures of a :class:`~onnxperf.analysis.result.Analysis` are partial (empty: none is)."""
    out = []
    t = sm.totals
    if not t.complete:
        out.append("not costed: " + uncosted_text(t))
    if not sm.memory.complete:
        out.append(f"{_n(sm.memory.unknown_tensors, 'tensor')} of unknown size")
    if sm.roofline is not None and sm.roofline.unknown_nodes:
        out.append(f"{_n(sm.roofline.unknown_nodes, 'node')} without a predicted time")
    return out
