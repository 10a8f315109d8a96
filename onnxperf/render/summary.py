"""Renderers of an :class:`~onnxperf.analysis.Analysis`: text, json, csv, md."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable

from ..analysis import Analysis
from .numbers import binary_bytes, clean, pct, shape, si

TOP_K = 10


def _io_line(refs) -> list[str]:
    return [f"  {clean(r.name)}  {r.dtype} {shape(r.shape)}" for r in refs]


def coverage_line(a: Analysis) -> str:
    c = a.coverage
    parts = [f"{c.exact_nodes}/{c.nodes} nodes costed by exact rules ({pct(c.node_share_exact)}), "
             f"{pct(c.flops_exact_share)} of FLOPs from exact rules"]
    if c.unsupported:
        ops = ", ".join(f"{op} ×{k}" for op, k in c.unsupported_op_types)
        parts.append(f"{c.unsupported} unsupported ({ops})")
    if c.unknown_shape:
        parts.append(f"{c.unknown_shape} with unknown shapes")
    return "; ".join(parts)


def warnings(a: Analysis) -> list[str]:
    """What makes the totals partial, and what to do about it."""
    out = []
    c = a.coverage
    if c.dims_to_bind:
        binds = " ".join(f"--dim {d}=N" for d in c.dims_to_bind)
        out.append(f"Unbound dims: {', '.join(c.dims_to_bind)}: {c.unknown_shape} nodes are not costed "
                   f"(totals are partial); bind them: {binds}")
    elif c.unresolved_symbols:
        out.append(f"Unresolved dims (data-dependent or not inferable): {', '.join(c.unresolved_symbols)}: "
                   f"{c.unknown_shape} nodes are not costed (totals are partial)")
    if c.unsupported:
        out.append("Unsupported ops are not counted (totals are partial): "
                   + ", ".join(f"{op} ×{k}" for op, k in c.unsupported_op_types))
    return out


def _opsets(opsets) -> str:
    return ", ".join(f"{d or 'ai.onnx'} {v}" for d, v in opsets)


def render_text(a: Analysis) -> str:
    m, t = a.model, a.totals
    lines: list[str] = []
    opsets = _opsets(m.opsets)
    lines.append(f"Model      {clean(m.path or '<in memory>', 100)}" + (f"  ({binary_bytes(m.file_size_bytes)})" if m.file_size_bytes else ""))
    lines.append(f"Producer   {clean(m.producer_name or '?')} {clean(m.producer_version)}   IR {m.ir_version}   opsets: {opsets}")
    lines.append(f"Graph      {m.nodes} nodes" + (f" (+{m.nodes_in_subgraphs} in subgraphs)" if m.nodes_in_subgraphs else "")
                 + f", {m.initializers} initializers" + (f", {m.inlined_functions} functions inlined" if m.inlined_functions else ""))
    lines.append("Inputs")
    lines += _io_line(m.inputs)
    lines.append("Outputs")
    lines += _io_line(m.outputs)
    binds = [f"{k}={v}" for k, v in a.dims] + [f"{k}={'x'.join(map(str, v))}" for k, v in a.input_shapes]
    lines.append("Bindings   " + (" ".join(binds) if binds else "none") + f"   convention: {a.convention}")
    lines.append("")
    lines.append("Totals")
    dt = ", ".join(f"{k} {binary_bytes(v)}" for k, v in t.param_bytes_by_dtype) or "none"
    rows = [
        ("Params", f"{si(t.params)}  ({t.params:,})", f"{binary_bytes(t.param_bytes)} ({dt})"),
        ("MACs", f"{si(t.macs)}  ({t.macs:,})", ""),
        ("FLOPs", f"{si(t.flops)}  ({t.flops:,})", ""),
        ("Int ops", f"{si(t.int_ops)}  ({t.int_ops:,})", ""),
        ("Bytes read", binary_bytes(t.bytes_read), f"{t.bytes_read:,} B"),
        ("Bytes written", binary_bytes(t.bytes_written), f"{t.bytes_written:,} B"),
        ("Intensity", "?" if t.intensity_flops_per_byte is None else f"{t.intensity_flops_per_byte:.3g} FLOP/B", ""),
    ]
    for k, v, extra in rows:
        lines.append(f"  {k:<14}{v:<34}{extra}")
    lines.append("")
    lines.append("By op type")
    hdr = f"  {'op type':<28}{'count':>6}{'MACs':>11}{'FLOPs':>11}{'%FLOPs':>8}{'bytes':>11}{'params':>10}"
    lines.append(hdr)
    for r in a.by_op_type:
        label = clean(f"{r.domain}::{r.op_type}" if r.domain else r.op_type, 27)
        share = pct(r.flops / t.flops) if t.flops else "-"
        flag = "" if dict(r.statuses).get("counted", 0) + dict(r.statuses).get("zero_by_design", 0) == r.count else "  *"
        lines.append(f"  {label:<28}{r.count:>6}{si(r.macs):>11}{si(r.flops):>11}{share:>8}"
                     f"{binary_bytes(r.bytes_read + r.bytes_written):>11}{si(r.params):>10}{flag}")
    if any("  *" in ln for ln in lines):
        lines.append("  * some nodes of this type are unsupported or have unknown shapes")
    top = a.top_nodes(TOP_K)
    if top:
        lines.append("")
        lines.append(f"Top {len(top)} nodes by FLOPs")
        for n in top:
            share = pct(n.flops / t.flops) if t.flops else "-"
            outs = " ".join(shape(o.shape) for o in n.outputs if o)
            lines.append(f"  #{n.id:<5} {clean(n.op_type, 18):<18} {clean(n.name, 40):<40} {si(n.flops):>9} {share:>7}  -> {outs}")
    lines.append("")
    lines.append("Coverage   " + coverage_line(a))
    for w in warnings(a):
        lines.append("Warning    " + clean(w, 400))
    for note in a.notes:
        lines.append("Note       " + clean(note, 400))
    return "\n".join(lines) + "\n"


def render_json(a: Analysis) -> str:
    return a.to_json()


CSV_COLUMNS = ("key", "id", "scope", "name", "op_type", "domain", "family", "status", "exact", "macs", "flops",
               "int_ops", "bytes_read", "bytes_written", "params", "intensity_flops_per_byte", "inputs", "outputs", "note")


def render_csv(a: Analysis) -> str:
    """One row per node (subgraph nodes included, with their scope)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for n in a.nodes:
        total = n.bytes_read + n.bytes_written
        w.writerow([
            n.key, n.id, n.scope, n.name, n.op_type, n.domain, n.family, n.status, n.exact, n.macs, n.flops,
            n.int_ops, n.bytes_read, n.bytes_written, n.params, "" if total == 0 else f"{n.flops / total:.6g}",
            " ".join(f"{i.name}:{i.dtype}{shape(i.shape)}" for i in n.inputs if i),
            " ".join(f"{o.name}:{o.dtype}{shape(o.shape)}" for o in n.outputs if o), n.note,
        ])
    return buf.getvalue()


def _md_cell(text: str) -> str:
    return clean(text, 80).replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def render_md(a: Analysis) -> str:
    m, t = a.model, a.totals
    out = [f"### onnxperf summary: `{_md_cell(m.path or '<in memory>').replace('`', '')}`", ""]
    binds = ", ".join(f"{k}={v}" for k, v in a.dims) or "none"
    out += ["| | |", "|---|---|",
            f"| Producer | {_md_cell(m.producer_name)} {_md_cell(m.producer_version)} |",
            f"| Opsets | {_opsets(m.opsets)} |",
            f"| Nodes | {m.nodes} |", f"| Bindings | {binds} |",
            f"| Params | {si(t.params)} ({binary_bytes(t.param_bytes)}) |",
            f"| MACs | {si(t.macs)} |", f"| FLOPs | {si(t.flops)} |",
            f"| Bytes read / written | {binary_bytes(t.bytes_read)} / {binary_bytes(t.bytes_written)} |",
            f"| Coverage | {_md_cell(coverage_line(a))} |", ""]
    out += ["| op type | count | MACs | FLOPs | bytes |", "|---|---:|---:|---:|---:|"]
    for r in a.by_op_type[:15]:
        label = f"{r.domain}::{r.op_type}" if r.domain else r.op_type
        out.append(f"| {_md_cell(label)} | {r.count} | {si(r.macs)} | {si(r.flops)} | {binary_bytes(r.bytes_read + r.bytes_written)} |")
    warns = warnings(a)
    if warns or a.notes:
        out.append("")
        out += [f"> ⚠ {_md_cell(w)}" for w in warns]
        out += [f"> {_md_cell(n)}" for n in a.notes]
    return "\n".join(out) + "\n"


RENDERERS: dict[str, Callable[[Analysis], str]] = {
    "text": render_text, "json": render_json, "csv": render_csv, "md": render_md,
}
