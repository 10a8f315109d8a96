"""``Analysis.to_dataframe()``: the nodes or the op types of an analysis as a pandas DataFrame.

pandas is an optional extra (``pip install "onnxperf[notebook]"``); nothing else in onnxperf needs it.
Columns are typed with pandas' nullable dtypes (``Int64``, ``Float64``, ``boolean``, ``string``), so
a figure that is not known is ``<NA>``, never 0: the cost of a node that is not costed
(``unsupported``, ``unknown_shape``, ``rule_error``), as the CSV output leaves its cells empty, and the
totals of an op type with such a node. Counts stay exact integers. Column names are those of
``onnxperf summary --format csv`` (nodes) and of the JSON's ``by_op_type`` (op types).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from onnxperf.cost.walker import COUNTED, STATUSES, ZERO
from onnxperf.ui.numbers import shape
from onnxperf.base.errors import OptionError

if TYPE_CHECKING:
    from onnxperf.analysis.result import Analysis

INSTALL = 'pip install "onnxperf[notebook]"'
#: the cost figures of a node or an op type, unknown (NA) when it is not wholly costed
COST_COLUMNS = ("macs", "flops", "int_ops", "bytes_read", "bytes_written")


def pandas() -> Any:
    """The pandas module, or an ImportError that says how to install it."""
    try:
        # imported by name, on first use: pandas is the optional ``notebook`` extra, not a dependency
        # (tests/test_packaging.py's scan of the package's imports covers [project].dependencies only)
        return importlib.import_module("pandas")
    except ImportError as exc:
        raise ImportError(f"Analysis.to_dataframe() needs pandas, an optional extra of onnxperf: {INSTALL} "
                          "(or pip install pandas)", name="pandas") from exc


def _frame(pd: Any, columns: dict[str, tuple[str, list[Any]]]):
    return pd.DataFrame({name: pd.array(values, dtype=dtype) for name, (dtype, values) in columns.items()})


def _tensors(refs) -> str:
    return " ".join(f"{t.name}:{t.dtype}{shape(t.shape)}" for t in refs if t)


def nodes_frame(a: Analysis):
    """One row per node, subgraph nodes included (with their ``scope``), in the analysis's order."""
    pd = pandas()
    nodes = a.nodes
    known = [n.status in (COUNTED, ZERO) for n in nodes]
    cols: dict[str, tuple[str, list[Any]]] = {
        "key": ("string", [n.key for n in nodes]), "id": ("Int64", [n.id for n in nodes]),
        "scope": ("string", [n.scope for n in nodes]), "name": ("string", [n.name for n in nodes]),
        "op_type": ("string", [n.op_type for n in nodes]), "domain": ("string", [n.domain for n in nodes]),
        "family": ("string", [n.family for n in nodes]),
        "status": (pd.CategoricalDtype(STATUSES), [n.status for n in nodes]),
        "exact": ("boolean", [n.exact for n in nodes]),
    }
    for c in COST_COLUMNS:
        cols[c] = ("Int64", [getattr(n, c) if k else None for n, k in zip(nodes, known)])
    cols["params"] = ("Int64", [n.params for n in nodes])
    cols["intensity_flops_per_byte"] = ("Float64", [
        n.flops / (n.bytes_read + n.bytes_written) if k and n.bytes_read + n.bytes_written else None
        for n, k in zip(nodes, known)])
    cols["inputs"] = ("string", [_tensors(n.inputs) for n in nodes])
    cols["outputs"] = ("string", [_tensors(n.outputs) for n in nodes])
    cols["note"] = ("string", [n.note for n in nodes])
    if a.roofline is not None:
        rl = {r.key: r for r in a.roofline.nodes}
        timed = [rl.get(n.key) if not n.scope else None for n in nodes]
        timed = [r if r is not None and r.time_s is not None else None for r in timed]
        cols["bound"] = ("string", [None if r is None else r.bound for r in timed])
        cols["predicted_s"] = ("Float64", [None if r is None else r.time_s for r in timed])
        cols["predicted_share"] = ("Float64", [None if r is None else r.share for r in timed])
    return _frame(pd, cols)


def op_types_frame(a: Analysis):
    """One row per op type of the main graph (control-flow nodes carry their bodies), largest FLOPs first."""
    pd = pandas()
    rows = a.by_op_type
    flops = a.totals.flops
    complete = [dict(r.statuses).get(COUNTED, 0) + dict(r.statuses).get(ZERO, 0) == r.count for r in rows]
    cols: dict[str, tuple[str, list[Any]]] = {
        "domain": ("string", [r.domain for r in rows]), "op_type": ("string", [r.op_type for r in rows]),
        "count": ("Int64", [r.count for r in rows]),
    }
    for c in COST_COLUMNS:
        cols[c] = ("Int64", [getattr(r, c) if k else None for r, k in zip(rows, complete)])
    cols["params"] = ("Int64", [r.params for r in rows])
    cols["flops_share"] = ("Float64", [r.flops / flops if k and flops else None for r, k in zip(rows, complete)])
    cols["complete"] = ("boolean", complete)
    for st in STATUSES:
        cols[st] = ("Int64", [dict(r.statuses).get(st, 0) for r in rows])
    if a.roofline is not None:
        times = op_type_times(a)
        timed = [times.get((r.domain, r.op_type)) for r in rows]
        cols["bound"] = ("string", [None if o is None else o.bound for o in timed])
        # a row with a node the roofline could not time: its sum is a lower bound, shown as NA
        cols["predicted_s"] = ("Float64", [None if o is None or o.partial else o.time_s for o in timed])
        cols["predicted_share"] = ("Float64", [None if o is None or o.partial else o.share for o in timed])
    return _frame(pd, cols)


@dataclass(frozen=True)
class OpTypeTime:
    """The predicted time of one (domain, op type) of the main graph: ``time_s`` sums its timed nodes,
    ``share`` of the latency; ``partial``: some node of it has no predicted time (a lower bound)."""

    time_s: float
    share: float
    bound: str
    partial: bool


def op_type_times(a: Analysis) -> dict[tuple[str, str], OpTypeTime]:
    """Per (domain, op type), as the op-type rows are (``a.roofline.by_op_type`` goes by op type
    alone: a ``Gelu`` and a ``com.microsoft::Gelu`` would each get both's time). ``bound``: the
    bound that holds most of the type's time."""
    rl = {r.key: r for r in a.roofline.nodes}
    acc: dict[tuple[str, str], dict[str, Any]] = {}
    for n in a.main_nodes:
        g = acc.setdefault((n.domain, n.op_type), {"t": 0.0, "s": 0.0, "by": {}, "partial": False})
        r = rl.get(n.key)
        if r is None or r.time_s is None:
            g["partial"] = True
            continue
        g["t"] += r.time_s
        g["s"] += r.share or 0.0
        g["by"][r.bound] = g["by"].get(r.bound, 0.0) + r.time_s
    return {k: OpTypeTime(g["t"], g["s"], max(sorted(g["by"]), key=lambda b: g["by"][b]) if g["by"] else "unknown",
                          g["partial"]) for k, g in acc.items()}


FRAMES = {"nodes": nodes_frame, "op_types": op_types_frame}


def to_dataframe(a: Analysis, kind: str = "nodes"):
    """``kind``: ``"nodes"`` (:func:`nodes_frame`) or ``"op_types"`` (:func:`op_types_frame`)."""
    frame = FRAMES.get(kind)
    if frame is None:

        raise OptionError(f"to_dataframe(kind={kind!r}): choose one of {', '.join(FRAMES)}")
    return frame(a)


__all__ = ["FRAMES", "nodes_frame", "op_types_frame", "to_dataframe"]
