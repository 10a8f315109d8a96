"""An :class:`~onnxperf.analysis.result.Analysis` in a notebook: ``_repr_html_`` is :func:`repr_html`.

:func:`view` builds plain rows from the analysis (every figure formatted here, with the functions the
text output uses: a partial total reads ``≥ 1.06 G (partial)``, an unknown one ``unknown``, never 0);
the template ``notebook.html.j2`` only lays them out. The fragment is self-contained (its own scoped
style, no script, nothing fetched) and rendered by the report's Jinja2 environment, autoescape on,
so a model's names, which are untrusted, show as text.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from onnxperf.cost.walker import COUNTED, ZERO
from onnxperf.base.errors import one_line
from onnxperf.insights.partial import uncosted_text, upper_text
from onnxperf.ui.numbers import binary_bytes, lower_bound, pct, seconds, shape, si, upper_bound
from onnxperf.products.frames import op_type_times
from onnxperf.products.render.report import environment

if TYPE_CHECKING:
    from onnxperf.analysis.result import Analysis

#: rows of the op-type table and of each node list
TOP_OP_TYPES = 15
TOP_NODES = 10
#: a name longer than this is cut in the tables (the data frames have every name in full)
NAME_MAX = 60


def _cut(text: str, limit: int = NAME_MAX) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _card(label: str, value: str, detail: str = "", partial: bool = False) -> dict[str, Any]:
    return {"label": label, "value": value, "detail": detail, "partial": partial}


def _cards(a: Analysis) -> list[dict[str, Any]]:
    t, c = a.totals, a.coverage
    part = t.side

    def exact(x: int | None, what: str) -> str:
        if x is None:  # nothing of it counted (:class:`onnxperf.cost.analysis.Totals`): unknown, never 0
            return "unknown: see Not costed"
        if not part:
            return f"{x:,} {what}".rstrip()
        if part == "upper":
            return f"{x:,} at most: an upper bound ({upper_text(t)})"
        return f"{x:,} counted, the rest unknown"

    dt = ", ".join(f"{k} {binary_bytes(v)}" for k, v in t.param_bytes_by_dtype) or "none"
    cards = [
        _card("Parameters", si(t.params), f"{t.params:,} · {binary_bytes(t.param_bytes)} ({dt})"),
        _card("MACs", lower_bound(si(t.macs), t.macs, part), exact(t.macs, "multiply-accumulates"), part),
        _card("FLOPs", lower_bound(si(t.flops), t.flops, part),
              exact(t.flops, "") + (f" · {lower_bound(si(t.int_ops), t.int_ops, part, True)} integer ops"
                                    if t.int_ops else ""), part),
        _card("Bytes read", lower_bound(binary_bytes(t.bytes_read), t.bytes_read, part),
              exact(t.bytes_read, "B"), part),
        _card("Bytes written", lower_bound(binary_bytes(t.bytes_written), t.bytes_written, part),
              exact(t.bytes_written, "B"), part),
        _card("Intensity", "?" if t.intensity_flops_per_byte is None else f"{t.intensity_flops_per_byte:.3g} FLOP/B",
              "FLOPs / bytes moved" if t.intensity_flops_per_byte is not None else "unknown: the totals are bounds"
              if part else "nothing moves"),
    ]
    mem = a.memory
    if mem is not None:
        mpart = mem.side
        unknown = f"; {mem.unknown_tensors:,} tensors of unknown size" if mem.unknown_tensors else ""
        where = f" at node #{mem.peak_node_key} {_cut(mem.peak_node_name or '', 40)}" if mem.peak_node_key else ""
        cards.append(_card("Peak activations", lower_bound(binary_bytes(mem.peak_bytes), mem.peak_bytes, mpart),
                           f"{mem.peak_bytes:,} B{where}{unknown}", mpart))
        cards.append(_card("Total memory", lower_bound(binary_bytes(mem.total_bytes), mem.total_bytes, mpart),
                           f"{mem.total_bytes:,} B: weights {binary_bytes(mem.weight_bytes)} + activation peak", mpart))
    rl = a.roofline
    if rl is not None:
        lpart = rl.side
        tput = rl.throughput_per_s(a.batch)
        detail = f"{upper_bound(si(tput), tput, lpart, True)} items/s at batch {a.batch} on {rl.spec_id}"
        if rl.plain:
            detail += "; plain roofline: an estimate, not a bound"
        if rl.unknown_nodes:
            detail += f"; {rl.unknown_nodes:,} nodes without a cost"
        cards.append(_card("Predicted latency", lower_bound(seconds(rl.latency_s), rl.latency_s, lpart), detail, lpart))
    f = a.largest
    if f is not None:
        value = "none fits" if f.value is None else f"{f.value:,}"
        detail = (f"in {binary_bytes(f.budget_bytes)}" + (f" (needs {binary_bytes(f.total_bytes)})"
                                                          if f.total_bytes is not None else "")
                  + (f"; {f.note}" if f.note else ""))
        cards.append(_card(f"Largest {f.dim}", value, detail))
    share = (f"{pct(c.flops_exact_share)} of FLOPs" if c.flops_exact_share is not None
             else "no FLOPs to count" if c.complete else "share of FLOPs unknown (uncosted nodes)")
    cards.append(_card("Coverage", pct(c.node_share_exact),
                       f"{c.exact_nodes:,}/{c.nodes:,} nodes by exact rules, {share}", not c.complete))
    return cards


def _op_types(a: Analysis) -> dict[str, Any]:

    t = a.totals
    rl = op_type_times(a) if a.roofline is not None else None
    rows = []
    flagged = False
    for r in a.by_op_type[:TOP_OP_TYPES]:
        st = dict(r.statuses)
        rp = st.get(COUNTED, 0) + st.get(ZERO, 0) != r.count
        flagged |= rp
        b = r.bytes_read + r.bytes_written
        row = [_cut(f"{r.domain}::{r.op_type}" if r.domain else r.op_type, 40) + (" *" if rp else ""), f"{r.count:,}",
               lower_bound(si(r.macs), r.macs, rp, True), lower_bound(si(r.flops), r.flops, rp, True),
               "?" if rp else (pct(r.flops / t.flops) if t.flops else "-"),
               lower_bound(binary_bytes(b), b, rp, True), si(r.params)]
        if rl is not None:
            o = rl.get((r.domain, r.op_type))
            row += ["-", "-", "-"] if o is None else [lower_bound(seconds(o.time_s), o.time_s, o.partial, True),
                                                      "?" if o.partial else pct(o.share), o.bound]
        rows.append(row)
    columns = ["op type", "count", "MACs", "FLOPs", "% FLOPs", "bytes", "params"]
    if rl is not None:
        columns += ["predicted", "% time", "bound"]
    return {"columns": columns, "text_columns": [0], "rows": rows, "more": max(0, len(a.by_op_type) - TOP_OP_TYPES),
            "note": ("* some nodes of this type are not costed: ≥ is a lower bound, ? unknown" if flagged else "")}


def _top(a: Analysis) -> dict[str, Any]:
    t = a.totals
    rows = [[f"#{n.key}", _cut(n.op_type, 30), _cut(n.name), si(n.flops), pct(n.flops / t.flops) if t.flops else "-",
             " ".join(shape(o.shape) for o in n.outputs if o)] for n in a.top_nodes(TOP_NODES)]
    return {"columns": ["node", "op type", "name", "FLOPs", "share", "outputs"], "text_columns": [0, 1, 2, 5],
            "rows": rows}


def _slowest(a: Analysis) -> dict[str, Any] | None:
    rl = a.roofline
    if rl is None:
        return None
    names = {n.key: n.name for n in a.main_nodes}
    ranked = sorted((n for n in rl.nodes if n.time_s), key=lambda n: (-n.time_s, int(n.key) if n.key.isdigit() else 0))
    rows = [[f"#{n.key}", _cut(n.op_type, 30), _cut(names.get(n.key, "")), seconds(n.time_s), pct(n.share), n.bound,
             "-" if n.intensity is None else f"{n.intensity:.3g}"] for n in ranked[:TOP_NODES]]
    return {"columns": ["node", "op type", "name", "predicted", "share", "bound", "intensity"],
            "text_columns": [0, 1, 2, 5], "rows": rows, "hardware": rl.spec_id}


def view(a: Analysis) -> dict[str, Any]:
    """What the fragment shows, as plain strings and lists (nothing left to compute in the template)."""
    m = a.model
    binds = [f"{k}={v}" for k, v in a.dims] + [f"{k}={'x'.join(map(str, v))}" for k, v in a.input_shapes]
    facts = [f"{m.producer_name or 'unknown producer'} {m.producer_version}".strip(), f"IR {m.ir_version}",
             ", ".join(f"{d or 'ai.onnx'} {v}" for d, v in m.opsets),
             f"{m.nodes:,} nodes" + (f" (+{m.nodes_in_subgraphs:,} in subgraphs)" if m.nodes_in_subgraphs else ""),
             "bindings: " + (" ".join(binds) if binds else "none"), f"convention: {a.convention}"]
    if a.spec is not None:
        facts.append(f"hardware: {getattr(a.spec, 'name', a.spec.id)} ({a.spec.id})")
    if a.precision is not None:
        facts.append(f"precision: {a.precision.name} (what-if)")
    return {
        "title": _cut(os.path.basename(m.path) if m.path else (m.graph_name or "model"), 100),
        "facts": facts,
        "cards": _cards(a),
        "not_costed": uncosted_text(a.totals),
        #: the Python spelling of the --dim flags the warnings name
        "bind_hint": ("analyze(..., dims={" + ", ".join(f"{d!r}: N" for d in a.coverage.dims_to_bind) + "})"
                      if a.coverage.dims_to_bind else ""),
        "op_types": _op_types(a),
        "top": _top(a),
        "slowest": _slowest(a),
        "warnings": [{"level": w["level"], "message": w["message"]} for w in a.warnings()],
        "notes": list(a.notes),
    }


def text_line(a: Analysis) -> str:
    """One line for IPython's text view: the model and its main figures (``≥`` where partial)."""
    t = a.totals
    part = t.side
    m = a.model
    name = _cut(os.path.basename(m.path) if m.path else (m.graph_name or "model"), 80)
    out = (f"<onnxperf Analysis {name!r}: {m.nodes:,} nodes, params {si(t.params)}, "
           f"MACs {lower_bound(si(t.macs), t.macs, part)}, FLOPs {lower_bound(si(t.flops), t.flops, part)}, "
           f"coverage {pct(a.coverage.node_share_exact)}")
    if a.roofline is not None:
        rl = a.roofline
        out += f", predicted {lower_bound(seconds(rl.latency_s), rl.latency_s, rl.side)} on {rl.spec_id}"
    return one_line(out + ">")


def repr_html(a: Analysis) -> str:
    """The analysis as an HTML fragment for a notebook (Jupyter, VS Code): cards, the cost by op
    type, the top nodes (and the slowest on the hardware, with ``hw``), warnings and notes."""

    return environment().get_template("notebook.html.j2").render(v=view(a))


__all__ = ["repr_html", "text_line", "view"]
