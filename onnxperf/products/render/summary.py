"""Renderers of an :class:`~onnxperf.analysis.result.Analysis`: text, json, csv, md."""

from __future__ import annotations

import csv
import io
import textwrap
from collections.abc import Callable, Iterator

from onnxperf.analysis.result import Analysis
from onnxperf.cost.walker import COUNTED, ZERO
from onnxperf.insights.bottlenecks import ops_text
from onnxperf.insights.llm.section import md_rows, text_lines
from onnxperf.insights.partial import op_counts, totals_side_text, uncosted_text, upper_text
from onnxperf.predict.plan import LIMITER_WORDS, PLAIN_TEXT
from onnxperf.ui.jsonrows import dumps, iter_dumps
from onnxperf.ui.numbers import binary_bytes, clean, lower_bound, pct, shape, si, seconds, upper_bound

TOP_K = 10
#: nodes listed by predicted time: the groups (:func:`bottleneck_lines`) say what to do about them
TOP_NODES = 5
#: rows of each bottleneck group the text and Markdown outputs show (op types: the text's roofline
#: section has them all just above)
TOP_GROUPS = 5
TOP_OP_GROUPS = 3


def _io_line(refs) -> list[str]:
    return [f"  {clean(r.name)}  {r.dtype} {shape(r.shape)}" for r in refs]


def coverage_line(a: Analysis) -> str:
    c = a.coverage
    share = (f"{pct(c.flops_exact_share)} of FLOPs from exact rules" if c.flops_exact_share is not None
             else "no FLOPs to count" if c.complete
             else "share of FLOPs from exact rules unknown (FLOPs of uncosted nodes unknown)")
    parts = [f"{c.exact_nodes}/{c.nodes} nodes costed by exact rules ({pct(c.node_share_exact)}), {share}"]
    if c.unsupported:
        parts.append(f"{c.unsupported} unsupported ({op_counts(c.unsupported_op_types, 12)})")
    if c.unknown_shape:
        parts.append(f"{c.unknown_shape} with unknown shapes")
    if c.rule_errors:
        parts.append(f"{c.rule_errors} where a cost rule failed ({op_counts(c.rule_error_op_types, 12)})")
    return "; ".join(parts)


def warnings(a: Analysis) -> list[str]:
    """What makes the totals partial, and what to do about it."""
    return [w["message"] for w in a.warnings()]


def _row_partial(r) -> bool:
    st = dict(r.statuses)
    return st.get("counted", 0) + st.get("zero_by_design", 0) != r.count


def _opsets(opsets) -> str:
    """Domain names come from the model: escaped like every other name (no terminal control)."""
    return ", ".join(f"{clean(d or 'ai.onnx', 60)} {v}" for d, v in opsets)


def render_text(sm: Analysis) -> str:
    a = sm
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
    if sm.precision is not None:
        lines.append(f"Precision  {sm.precision.name} (what-if: {sm.precision.text})")
    lines.append("")
    part = t.side
    lines.append("Totals" + (f"   ({totals_side_text(t)})" if part else ""))
    dt = ", ".join(f"{k} {binary_bytes(v)}" for k, v in t.param_bytes_by_dtype) or "none"

    def count(x: int | None) -> str:  # None: unknown (:class:`onnxperf.cost.analysis.Totals`)
        return "unknown" if x is None else lower_bound(f"{si(x)}  ({x:,})", x, part)

    def exact_bytes(x: int | None) -> str:
        return f"{x:,} B" if x is not None and (x or not part) else ""

    rows = [
        ("Params", f"{si(t.params)}  ({t.params:,})", f"{binary_bytes(t.param_bytes)} ({dt})"),
        ("MACs", count(t.macs), ""),
        ("FLOPs", count(t.flops), ""),
        ("Int ops", count(t.int_ops), ""),
        ("Bytes read", lower_bound(binary_bytes(t.bytes_read), t.bytes_read, part), exact_bytes(t.bytes_read)),
        ("Bytes written", lower_bound(binary_bytes(t.bytes_written), t.bytes_written, part),
         exact_bytes(t.bytes_written)),
        ("Intensity", "?" if t.intensity_flops_per_byte is None else f"{t.intensity_flops_per_byte:.3g} FLOP/B", ""),
    ]
    for k, v, extra in rows:
        lines.append(f"  {k:<14}{v:<34}{extra}".rstrip())
    if not t.complete:
        lines.append(f"  {'Not costed':<14}{clean(uncosted_text(t), 300)}")
    if t.upper_bounded:
        lines.append(f"  {'Upper bound':<14}{clean(upper_text(t), 300)} (a size or a count replaced by the "
                     "largest the model can produce)")
    lines.append("")
    lines.append("By op type")
    hdr = f"  {'op type':<28}{'count':>6}{'MACs':>11}{'FLOPs':>11}{'%FLOPs':>8}{'bytes':>11}{'params':>10}"
    lines.append(hdr)
    for r in a.by_op_type:
        label = clean(f"{r.domain}::{r.op_type}" if r.domain else r.op_type, 27)
        rp = _row_partial(r)
        share = "?" if rp else (pct(r.flops / t.flops) if t.flops else "-")
        flag = "  *" if rp else ""
        b = r.bytes_read + r.bytes_written
        lines.append(f"  {label:<28}{r.count:>6}{lower_bound(si(r.macs), r.macs, rp, True):>11}"
                     f"{lower_bound(si(r.flops), r.flops, rp, True):>11}{share:>8}"
                     f"{lower_bound(binary_bytes(b), b, rp, True):>11}{si(r.params):>10}{flag}")
    if any("  *" in ln for ln in lines):
        lines.append("  * some nodes of this type are unsupported or have unknown shapes: "
                     "≥ is a lower bound, ? unknown" + ("; %FLOPs are shares of the FLOPs counted" if part else ""))
    top = a.top_nodes(TOP_K)
    if top:
        lines.append("")
        lines.append(f"Top {len(top)} nodes by FLOPs")
        for n in top:
            share = pct(n.flops / t.flops) if t.flops else "-"
            outs = " ".join(shape(o.shape) for o in n.outputs if o)
            lines.append(f"  #{n.id:<5} {clean(n.op_type, 18):<18} {clean(n.name, 40):<40} {si(n.flops):>9} {share:>7}  -> {outs}")
    lines += _memory_text(sm)
    lines += _roofline_text(sm)
    if sm.llm is not None:
        lines += text_lines(sm.llm)
    lines.append("")
    lines.append("Coverage   " + clean(coverage_line(a), 1000))
    for w in warnings(a):
        lines.append("Warning    " + clean(w, 700))
    for note in a.notes:
        lines.append("Note       " + clean(note, 400))
    return "\n".join(lines) + "\n"


def _memory_text(sm: Analysis) -> list[str]:
    mem = sm.memory
    out = ["", "Memory"]
    out.append(f"  {'Weights':<22}{binary_bytes(mem.weight_bytes):<12}(fp16 {binary_bytes(mem.weight_bytes_fp16)}, "
               f"int8 {binary_bytes(mem.weight_bytes_int8)})")
    where = f" at node #{mem.peak_node_key} {clean(mem.peak_node_name or '', 40)}" if mem.peak_node_key else ""
    part = mem.side
    partial = "; ".join(x for x in (
        f"partial: {mem.unknown_tensors} tensors of unknown size" if mem.unknown_tensors else "",
        "upper bound: some sizes are the largest the model can produce" if mem.upper else "") if x)
    partial = f"  ({partial})" if partial else ""

    def mb(x: int) -> str:
        return lower_bound(binary_bytes(x), x, part, True)

    out.append(f"  {'Activation peak':<22}{mb(mem.peak_bytes):<12}dynamic{where}{partial}")
    out.append(f"  {'Activations, all':<22}{mb(mem.preallocated_bytes):<12}every tensor in its own buffer")
    out.append(f"  {'Total':<22}{mb(mem.total_bytes):<12}weights + activation peak")
    f = sm.largest
    if f is not None:
        if f.value is None:
            out.append(f"  Largest {f.dim}: none fits {binary_bytes(f.budget_bytes)} "
                       f"({f.dim}=1 needs {binary_bytes(f.next_total_bytes)})")
        else:
            after = (f"; {f.value + 1:,} would need {binary_bytes(f.next_total_bytes)}"
                     if f.next_total_bytes is not None else "")
            out.append(f"  Largest {f.dim} in {binary_bytes(f.budget_bytes)}: {f.value:,} "
                       f"(needs {binary_bytes(f.total_bytes)}{after})")
            if f.note:
                out.append(f"  Note: {f.note}")
        if f.formula is not None:
            out.append(f"  Total memory = {f.formula.format()} bytes")
    return out


def kernel_model_note(r) -> str:
    """`` (GPU kernel model: N kernels, F nodes fused)`` for a prediction made with it, else ``""``."""
    if r.kernels is None:
        return ""
    fused = sum(n for what, n in r.assumed if "fused" in what or "epilogue" in what or "inside" in what)
    return f" (GPU kernel model: {r.kernels} kernels, {fused} nodes fused into them)"


def kernel_model_lines(r, indent: str = "") -> list[str]:
    """What the GPU kernel model assumed (:mod:`onnxperf.predict.gpu_kernels`), or nothing for other specs."""
    if r.kernels is None:
        return []
    out = [f"{indent}GPU kernel model: {r.kernels} kernels launched; assumed fusions (nodes):"]
    out += [f"{indent}  {n:>6}  {clean(what, 100)}" for what, n in r.assumed]
    out.append(f"{indent}  not assumed: {', '.join(r.not_assumed)}")
    return out


def _roofline_text(sm: Analysis) -> list[str]:
    r = sm.roofline
    if r is None:
        return []
    spec = sm.spec
    out = ["", f"Roofline on {clean(getattr(spec, 'name', r.spec_id), 60)} [{r.spec_id}]   ridge {r.ridge_fp32:.3g} FLOP/B (fp32)"]
    tput = r.throughput_per_s(sm.batch)
    part = r.side
    partial = (f"  (partial: {r.unknown_nodes} nodes without cost)" if r.unknown_nodes else
               "  (partial: the costs leave something out)" if part in ("lower", "unknown") else
               "  (an upper bound: the costs are)" if part == "upper" else "")
    dev = sm.device
    cannot = (f"  (cannot run: needs {binary_bytes(dev.total_bytes)} of the device's {binary_bytes(dev.capacity_bytes)})"
              if dev is not None and dev.fits is False else "")
    band = (f" ({r.band.text()})" if r.band is not None else
            " (no error band: no published point held out for this device class and runtime)" if r.kernels is not None else "")
    out.append(f"  Predicted latency   {lower_bound(seconds(r.latency_s), r.latency_s, part, True)}{band}   "
               f"throughput {upper_bound(si(tput) + '/s', tput, part, True)} (batch {sm.batch}){partial}{cannot}")
    if r.plain:
        out.append(f"  {PLAIN_TEXT}; the arithmetic alone at peak takes {seconds(r.compute_floor_s)} (a lower bound)")
    out += kernel_model_lines(r, "  ")
    if r.bytes_by_level:
        total = sum(v for _, v in r.bytes_by_level) or 1.0
        out.append("  Cache-aware roofline: bytes served by " + ", ".join(f"{k} {pct(v / total)}" for k, v in r.bytes_by_level)
                   + " (append :plain to --hw to charge them all at main memory)")
    tot = r.node_time_s or 1.0
    held = [(LIMITER_WORDS[k], v) for k, v in r.time_by_bound().items() if v]
    out.append("  Limited by " + (", ".join(f"{w} {pct(v / tot)}" for w, v in held) or "nothing") + " of node time"
               + (f"; runtime overhead {seconds(r.run_overhead_s)} per run" if r.run_overhead_s else ""))
    if r.assist_s:
        took = sum(1 for n in r.nodes if n.assist_s)
        out.append(f"  Subnormal values: {seconds(r.assist_s)} ({pct(r.assist_s / tot)} of node time, {took} node{'s' if took != 1 else ''}) is "
                   "microcode assists on floats below the smallest normal (an attention mask far below the scores); "
                   "onnxruntime's session.set_denormal_as_zero removes most of them (its worker threads flush to zero, "
                   "the calling thread does not), a mask of -1e4 or less all of the MatMul's")
    if r.assists_unknown:
        out.append(f"  Subnormal values: {r.assists_unknown} Softmax node{'s' if r.assists_unknown != 1 else ''} not "
                   "evaluated (input over 4 Mi elements or of unknown shape): any microcode assists there are not in "
                   "this prediction")
    if r.float_kernel_nodes:
        out.append(f"  float16 on onnxruntime's CPU provider: {r.float_kernel_nodes} node{'s' if r.float_kernel_nodes != 1 else ''} "
                   "without a float16 kernel run on float kernels at float32 width, between "
                   f"{r.inserted_casts} Cast{'s' if r.inserted_casts != 1 else ''} onnxruntime inserts "
                   f"({seconds(r.inserted_cast_s)}, {pct(r.inserted_cast_s / tot)} of node time)")
    if r.span_s and r.span_s >= 0.01 * tot:
        took = sum(1 for n in r.nodes if n.span_s)
        out.append(f"  Broadcast loops: {seconds(r.span_s)} ({pct(r.span_s / tot)} of node time, {took} node{'s' if took != 1 else ''}) is onnxruntime's "
                   "cost per span of broadcasts whose input changes every few elements (an NHWC scale or normalization)")
    if r.narrow_s and r.narrow_s >= 0.01 * tot:
        took = len(r.narrow_nodes)
        out.append(f"  Threads: {seconds(r.narrow_s)} ({pct(r.narrow_s / tot)} of node time, {took} node{'s' if took != 1 else ''}) runs on "
                   f"fewer than onnxruntime's {r.runtime_threads} threads: its QLinear kernels and Gathers split by their own "
                   "cost model (one thread under 156,280 elements, a QLinearMul or QLinearAdd with a broadcast at any size, "
                   "a Gather of one index on its outermost axis)")
    out.append("  By op type           count   pred. time   share  bound      intensity   implied rate")
    for o in r.by_op_type[:TOP_K]:
        i = "-" if o.intensity is None else f"{o.intensity:.3g}"
        rate = "-" if o.ops_per_s is None else f"{si(o.ops_per_s)}op/s"
        out.append(f"  {clean(o.op_type, 20):<20} {o.count:>5} {seconds(o.time_s):>12} {pct(o.share):>7}  {o.bound:<8} "
                   f"{i:>11} {rate:>14}")
    if len(r.by_op_type) > TOP_K:
        out.append(f"  … {len(r.by_op_type) - TOP_K} more op types (--format json has them all)")
    out.append("  Top nodes by predicted time (I: operations per byte the prediction charges)")
    ranked = sorted((n for n in r.nodes if n.time_s), key=lambda n: (-n.time_s, int(n.key) if n.key.isdigit() else 0))[:TOP_NODES]
    names = {n.key: n.name for n in sm.main_nodes}
    for n in ranked:
        i = "-" if n.intensity is None else f"{n.intensity:.3g}"
        out.append(f"  #{n.key:<5} {clean(n.op_type, 18):<18} {clean(names.get(n.key, ''), 34):<34} {seconds(n.time_s):>10} "
                   f"{pct(n.share):>7}  {n.bound:<8} I={i}")
    if sm.bottlenecks is not None:
        out += [""] + bottleneck_lines(sm.bottlenecks.to_dict())
    return out


def _wrapped(text: str, indent: str, width: int = 110, subsequent: str | None = None) -> list[str]:
    """``text`` (it may name op types and blocks from the model: control characters escaped) wrapped."""
    return textwrap.wrap(clean(text, 2000), width, initial_indent=indent,
                         subsequent_indent=indent if subsequent is None else subsequent, break_long_words=False,
                         break_on_hyphens=False) or [indent.rstrip()]


def _group_share(x: dict, key: str = "share") -> str:
    return "?" if x.get(key) is None else pct(x[key])


def bottleneck_md(b: dict, cell: Callable[..., str]) -> list[str]:
    """The bottleneck groups as Markdown tables (``cell`` escapes a model-provided string): the top
    op types, repeated block kinds and fusion opportunities with their shares and actions."""
    out = [f"Bottlenecks on {cell(b['hardware'])} ({b['prediction']}): shares of the {seconds(b['node_time_s'])} "
           "of node time" + (f" (+ {seconds(b['run_overhead_s'])} per run)" if b["run_overhead_s"] else "")
           + (f"; {len(b['uncosted'])} nodes not timed, so every figure is a lower bound" if b["uncosted"] else ""),
           "", *(f"> {cell(v, 600)}" for v in b.get("verdict") or ()), *([""] if b.get("verdict") else []),
           "| group | nodes | share of time | share of bytes | what to do |", "|---|---:|---:|---:|---|"]
    for g in b["by_op_type"][:TOP_GROUPS]:
        label = f"{g['domain']}::{g['op_type']}" if g["domain"] else g["op_type"]
        out.append(f"| op type {cell(label)} ({g['bound']}) | {g['nodes']} | {_group_share(g)} | "
                   f"{_group_share(g, 'bytes_share')} | {cell(g['action'], 300)} |")
    for k in [k for k in b["block_kinds"] if k["count"] > 1][:TOP_GROUPS]:
        out.append(f"| {k['count']} × block {cell(k['label'])} ({cell(ops_text(k['ops'][:4]), 120)}) | "
                   f"{k['count']} blocks | {_group_share(k)} ({_group_share(k, 'share_each')} each) | "
                   f"{_group_share(k, 'bytes_share')} | {cell(k['action'], 300)} |")
    for o in b["opportunities"]:
        out.append(f"| {cell(o['title'], 200)} | {o['nodes']} | {_group_share(o)} | {_group_share(o, 'bytes_share')} | "
                   f"{cell(o['action'], 400)} |")
    return out


def bottleneck_lines(b: dict) -> list[str]:
    """The ``Bottlenecks`` block of the text output, from :meth:`onnxperf.insights.bottlenecks.Bottlenecks.to_dict`
    (the report's ``bottleneck_groups``): the top op types, repeated block kinds and fusion
    opportunities, each with its share of the predicted time and bytes and what to do."""
    head = (f"Bottlenecks on {clean(b['hardware'], 60)} ({b['prediction']}): shares of the "
            f"{seconds(b['node_time_s'])} of node time")
    if b["run_overhead_s"]:
        head += f"; the runtime's own {seconds(b['run_overhead_s'])} per run comes on top"
    out = [head]
    for k, v in enumerate(b.get("verdict") or ()):
        out += _wrapped(v, "  Verdict: " if k == 0 else " " * 11, subsequent=" " * 11)
    if b["uncosted"]:
        names = ", ".join(f"#{u['key']} {clean(u['op_type'], 30)}" for u in b["uncosted"][:6])
        more = f" and {len(b['uncosted']) - 6} more" if len(b["uncosted"]) > 6 else ""
        out.append(f"  Not timed: {len(b['uncosted'])} nodes ({names}{more}): every figure here is a lower bound")
    out.append(f"  {'By op type':<22}{'nodes':>6}{'time':>10}{'share':>8}{'bytes':>8}  bound, and what to do")
    for g in b["by_op_type"][:TOP_OP_GROUPS]:
        label = clean(f"{g['domain']}::{g['op_type']}" if g["domain"] else g["op_type"], 21)
        partial = "≥ " if g["uncosted"] else ""
        out.append(f"  {label:<22}{g['nodes']:>6}{partial + seconds(g['time_s']):>10}{_group_share(g):>8}"
                   f"{_group_share(g, 'bytes_share'):>8}  {g['bound']}")
        out += _wrapped(g["action"], "      ")
    if len(b["by_op_type"]) > TOP_OP_GROUPS:
        out.append(f"  … {len(b['by_op_type']) - TOP_OP_GROUPS} more op types")
    kinds = [k for k in b["block_kinds"] if k["count"] > 1]
    if kinds:
        how = "node names" if b["block_method"] == "names" else "residual merges in the graph"
        o = b["outside"]
        out.append(f"  By block (from {how}: {len(b['blocks']) + b['blocks_left_out']} blocks, "
                   f"{o['nodes']} nodes outside them: {_group_share(o)} of the time)")
        for k in kinds[:TOP_GROUPS]:
            out.append(f"    {k['count']} × {clean(k['label'], 60)}  [{ops_text(k['ops'][:4])}"
                       f"{', …' if len(k['ops']) > 4 else ''}]: {_group_share(k)} of the time, "
                       f"{_group_share(k, 'share_each')} each, {_group_share(k, 'bytes_share')} of the bytes")
            out += _wrapped(k["action"], "      ")
    else:
        out.append("  By block: no repeated blocks found (by node names or residual merges)")
    if b["opportunities"]:
        out.append("  Fusion opportunities")
        for o in b["opportunities"]:
            state = {"yes": "already fused in this prediction", "no": "charged by this prediction",
                     "partly": f"{o['assumed_islands']} of {o['islands']} fused in this prediction"}[o["assumed"]]
            out += _wrapped(o["title"], "    ")
            out.append(f"      {o['nodes']} nodes: {_group_share(o)} of the time, {_group_share(o, 'bytes_share')} of "
                       f"the bytes; {state}")
            out += _wrapped(o["action"], "      ")
    else:
        out.append("  Fusion opportunities: none found (elementwise after a Conv/Gemm/MatMul, normalizations or "
                   "activations written out, layout Transposes, attention written out)")
    out += [f"  Note: {clean(n, 300)}" for n in b["notes"]]
    return out


def render_json(sm: Analysis) -> str:
    """Schema ``onnxperf.analysis/1``: indented, one node (or op type, tensor) per line."""
    return dumps(sm.to_dict(encoded_rows=True))


def stream_json(sm: Analysis) -> Iterator[str]:
    """:func:`render_json`'s text in pieces, made while it is written (no whole copy in memory)."""
    return iter_dumps(sm.to_dict(encoded_rows=True))


CSV_COLUMNS = ("key", "id", "scope", "name", "op_type", "domain", "family", "status", "exact", "macs", "flops",
               "int_ops", "bytes_read", "bytes_written", "params", "intensity_flops_per_byte", "inputs", "outputs", "note")


def render_csv(sm: Analysis) -> str:
    """One row per node (subgraph nodes included, with their scope); roofline columns with --hw."""
    a = sm
    rl = {n.key: n for n in sm.roofline.nodes} if sm.roofline else {}
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS + (("bound", "predicted_time_s") if rl else ()))
    for n in a.nodes:
        total = n.bytes_read + n.bytes_written
        r = rl.get(n.key) if not n.scope else None
        extra = ((r.bound if r else "", "" if r is None or r.time_s is None else f"{r.time_s:.6g}") if rl else ())
        # a node that is not costed has an unknown cost: empty cells, never 0
        known = n.status in (COUNTED, ZERO)
        cost = [n.macs, n.flops, n.int_ops, n.bytes_read, n.bytes_written] if known else [""] * 5
        w.writerow([
            n.key, n.id, n.scope, n.name, n.op_type, n.domain, n.family, n.status, n.exact, *cost,
            n.params, "" if total == 0 or not known else f"{n.flops / total:.6g}",
            " ".join(f"{i.name}:{i.dtype}{shape(i.shape)}" for i in n.inputs if i),
            " ".join(f"{o.name}:{o.dtype}{shape(o.shape)}" for o in n.outputs if o), n.note, *extra,
        ])
    return buf.getvalue()


def _md_cell(text: str, limit: int = 80) -> str:
    return clean(text, limit).replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def render_md(sm: Analysis) -> str:
    a = sm
    m, t = a.model, a.totals
    part, mem = t.side, sm.memory
    mpart = mem.side
    out = [f"### onnxperf summary: `{_md_cell(m.path or '<in memory>').replace('`', '')}`", ""]
    binds = ", ".join(f"{k}={v}" for k, v in a.dims) or "none"
    out += ["| | |", "|---|---|",
            f"| Producer | {_md_cell(m.producer_name)} {_md_cell(m.producer_version)} |",
            f"| Opsets | {_md_cell(_opsets(m.opsets), 1000)} |",
            f"| Nodes | {m.nodes} |", f"| Bindings | {binds} |",
            *([f"| Precision | {sm.precision.name} (what-if: {sm.precision.text}) |"] if sm.precision else []),
            f"| Params | {si(t.params)} ({binary_bytes(t.param_bytes)}) |",
            f"| MACs | {lower_bound(si(t.macs), t.macs, part)} |",
            f"| FLOPs | {lower_bound(si(t.flops), t.flops, part)} |",
            f"| Bytes read / written | {lower_bound(binary_bytes(t.bytes_read), t.bytes_read, part)} / "
            f"{lower_bound(binary_bytes(t.bytes_written), t.bytes_written, part)} |",
            *([f"| Not costed | {_md_cell(uncosted_text(t), 300)} |"] if not t.complete else []),
            *([f"| Upper bound | {_md_cell(upper_text(t), 300)} |"] if t.upper_bounded else []),
            f"| Activation peak / total memory | {lower_bound(binary_bytes(mem.peak_bytes), mem.peak_bytes, mpart)} / "
            f"{lower_bound(binary_bytes(mem.total_bytes), mem.total_bytes, mpart)} |",
            *([f"| Predicted latency ({_md_cell(sm.roofline.spec_id)}) | "
               f"{lower_bound(seconds(sm.roofline.latency_s), sm.roofline.latency_s, sm.roofline.side)}"
               f"{' (plain roofline: an estimate, not a bound)' if sm.roofline.plain else ''}"
               f"{f' ({sm.roofline.band.text()})' if sm.roofline.band is not None else ''}"
               f"{kernel_model_note(sm.roofline)} |"]
              if sm.roofline else []),
            *([f"| Largest {_md_cell(sm.largest.dim)} in {binary_bytes(sm.largest.budget_bytes)} | {sm.largest.value} |"]
              if sm.largest else []),
            *(_llm_md(sm.llm) if sm.llm is not None else []),
            f"| Coverage | {_md_cell(coverage_line(a), 300)} |", ""]
    out += ["| op type | count | MACs | FLOPs | bytes |", "|---|---:|---:|---:|---:|"]
    for r in a.by_op_type[:15]:
        label = f"{r.domain}::{r.op_type}" if r.domain else r.op_type
        rp, b = _row_partial(r), r.bytes_read + r.bytes_written
        out.append(f"| {_md_cell(label)} | {r.count} | {lower_bound(si(r.macs), r.macs, rp, True)} | "
                   f"{lower_bound(si(r.flops), r.flops, rp, True)} | {lower_bound(binary_bytes(b), b, rp, True)} |")
    if sm.bottlenecks is not None:
        out += [""] + bottleneck_md(sm.bottlenecks.to_dict(), _md_cell)
    warns = warnings(a)
    if warns or a.notes:
        out.append("")
        out += [f"> ⚠ {_md_cell(w, 600)}" for w in warns]
        out += [f"> {_md_cell(n, 600)}" for n in a.notes]  # a note is prose: whole, or cut between words
    return "\n".join(out) + "\n"


def _llm_md(section) -> list[str]:
    return md_rows(section, _md_cell)


RENDERERS: dict[str, Callable[[Analysis], str]] = {
    "text": render_text, "json": render_json, "csv": render_csv, "md": render_md,
}
#: formats written in pieces as they are made (see :func:`stream_json`)
STREAMS: dict[str, Callable[[Analysis], Iterator[str]]] = {"json": stream_json}
