"""Renderers of the report model (:func:`onnxperf.products.report.build_report`): HTML, JSON, Markdown and a
Netron attachment. They format a finished model; they never compute figures.

HTML: Jinja2 (autoescape on) with the templates shipped in the package ``onnxperf.templates`` (the
top-level ``templates/`` folder), loaded with :mod:`importlib.resources`; CSS, the viewer script and
the vendored Chart.js are inlined, and the model is embedded with ``|tojson`` in a JSON block, so the
file opens offline. A Content-Security-Policy allows only the page's own scripts (by hash) and no
network access at all: even a name that slipped through escaping could run nothing and load nothing.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import math
import re
from importlib import resources
from typing import Any

from onnxperf.ui.numbers import binary_bytes, lower_bound, pct, seconds, si, upper_bound
from onnxperf.base.errors import one_line
from onnxperf.products.render.summary import bottleneck_md
from onnxperf.ui.numbers import cut

#: colours of op types, in the order of ``by_op_type`` (largest FLOPs first); the rest share OTHER
PALETTE = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f",
           "#1f77b4", "#17becf", "#bcbd22", "#8c564b", "#d62728", "#2ca02c", "#9467bd")
OTHER = "#9aa0a6"


# --------------------------------------------------------------------------------------------- HTML

def _asset(name: str) -> str:
    return resources.files("onnxperf.templates").joinpath(name).read_text(encoding="utf-8")


def _script(text: str, what: str) -> str:
    """Text safe inside a <script> element: the HTML parser ends a script at ``</script`` and treats
    ``<!--`` specially; none may appear (vendored code is checked, not rewritten)."""
    low = text.lower()
    if "</script" in low or "<!--" in low:
        raise ValueError(f"{what} contains '</script' or '<!--' and cannot be inlined")
    return text


@functools.lru_cache(maxsize=1)
def _assets() -> dict[str, str]:
    from markupsafe import Markup

    chart = _asset("vendor/chart.umd.min.js")
    chart = re.sub(r"\n//# sourceMappingURL=\S+\s*$", "\n", chart)
    version = re.search(r"Chart\.js v(\d+\.\d+\.\d+)", chart)
    js = _asset("report.js")
    scripts = [_script(chart, "vendor/chart.umd.min.js"), _script(js, "report.js")]
    hashes = " ".join("'sha256-" + base64.b64encode(hashlib.sha256(s.encode("utf-8")).digest()).decode() + "'"
                      for s in scripts)
    csp = (f"default-src 'none'; script-src {hashes}; style-src 'unsafe-inline'; img-src data:; "
           "font-src 'none'; connect-src 'none'; base-uri 'none'; form-action 'none'")
    css = _asset("report.css")
    if "</style" in css.lower():
        raise ValueError("report.css contains '</style'")
    return {"chart_js": Markup(scripts[0]), "report_js": Markup(scripts[1]), "css": Markup(css), "csp": csp,
            "chartjs_version": version.group(1) if version else "4"}


def _g3(x: float | None) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "—"
    return f"{x:.3g}"


def _filters() -> dict[str, Any]:
    def si_(x, unit=""):
        return "—" if x is None else si(x, unit)

    def repr_(x):
        return "" if x is None else (repr(float(x)) if isinstance(x, float) else str(x))

    def width(x):
        return "0%" if not x else f"{min(100.0, 100 * x):.1f}%"

    def spct(x):
        return "—" if x is None else f"{100 * x:+.1f}%"

    def shape(s):
        return "?" if s is None else "[" + ",".join("?" if d is None else str(d) for d in s) + "]"

    def breakable(text):
        """A name (escaped) that wraps after its ``/`` and ``.`` separators, not inside a word."""
        from markupsafe import Markup, escape  # with jinja2, off the paths that render no page

        if text is None:
            return ""
        shown = cut_text(one_line(str(text)))  # what the environment's finalize makes of plain text
        return Markup(re.sub(r"([/.])", r"\1<wbr>", str(escape(shown))))

    return {
        "si": si_, "bytes": lambda x: "—" if x is None else binary_bytes(x),
        "secs": lambda x: "—" if x is None else seconds(x), "pct": lambda x: "—" if x is None else pct(x),
        "spct": spct, "int_": lambda x: "—" if x is None else f"{x:,}", "g3": _g3, "repr_": repr_,
        "width": width, "shape": shape, "breakable": breakable, "fixed2": lambda x: "—" if x is None else f"{x:.2f}",
        "tojson_text": lambda x: x if isinstance(x, str) else json.dumps(x, ensure_ascii=False, sort_keys=True),
        # a total that leaves something out: "≥ 1.06 G (partial)", or "unknown" (never 0)
        "atleast": lambda text, value, partial, short=False: lower_bound(text, value, partial, short),
        "atmost": lambda text, value, partial: upper_bound(text, value, partial, short=True),
    }


#: the longest plain text the page lays out as is (names longer than this are cut, with their length)
TEXT_MAX = 2000


def cut_text(text: str, limit: int = TEXT_MAX) -> str:
    """``text`` within ``limit`` characters: a longer one keeps its start and says how long it was."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text):,} characters)"


def _dumps_compact(obj: Any, **_kw: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


@functools.lru_cache(maxsize=1)
def environment():
    """The cached Jinja2 environment: autoescape on, strict undefined, templates from the package."""
    from jinja2 import Environment, FunctionLoader, StrictUndefined

    def load(name: str):
        src = _asset(name)
        return src, None, lambda: True


    # every {{ value }} that is plain text (model names, producer strings) shows its control and
    # bidi characters as \x.. escapes, as in the text and Markdown outputs: a U+202E in a node name
    # cannot reorder what the page shows. Markup (CSS, |tojson data) passes unchanged.
    # A hostile model's names can add up to megabytes: laid out in full they would hang the reader's
    # browser, so plain text is cut at TEXT_MAX characters (the node table shows every name in full
    # on demand, from the data).
    env = Environment(loader=FunctionLoader(load), autoescape=True, undefined=StrictUndefined,
                      keep_trailing_newline=True, finalize=lambda v: cut_text(one_line(v)) if type(v) is str else v)
    env.filters.update(_filters())
    env.policies["json.dumps_function"] = _dumps_compact
    env.policies["json.dumps_kwargs"] = {}
    return env


#: the most ticks a bytes axis gets: with at most 8 steps of 2^k bytes every label has at most 3
#: significant digits in binary units (5 x 256 MiB = 1.25 GiB), so none is rounded
BINARY_TICKS_MAX = 8
#: room left above the highest value of a bytes axis, so that a point drawn there is not cut off
BINARY_HEADROOM = 1.08


def binary_axis(top_value: float, ticks_max: int = BINARY_TICKS_MAX,
                headroom: float = BINARY_HEADROOM) -> dict[str, int] | None:
    """A bytes axis from 0 at binary steps: ``{"step": 2**k, "max": a multiple of it}``, the
    smallest power-of-two step (1 B at least) that covers ``top_value * headroom`` in at most
    ``ticks_max`` steps; ``max`` is the first multiple of the step at or above that. The ticks are
    0, step, 2 step, ... max: 256 KiB, 512 KiB, 768 KiB, 1 MiB, where a chart library's decimal
    steps give 977 KiB and 1.91 MiB. None for a value that is not positive (no axis to fix)."""
    if not top_value or top_value <= 0 or not math.isfinite(top_value):
        return None
    need = top_value * headroom
    step = 1
    while step * ticks_max < need:
        step *= 2
    return {"step": step, "max": step * math.ceil(need / step)}


def _axes(model: dict[str, Any]) -> dict[str, Any]:
    """The bytes axes of the charts (memory over execution order, the LLM memory chart)."""
    timeline = (model.get("memory") or {}).get("timeline_bytes") or []
    out: dict[str, Any] = {"memory": binary_axis(max(timeline, default=0))}
    figures = (model.get("llm") or {}).get("figures") or {}
    curve = figures.get("curve") or []
    if curve:
        fit = figures.get("largest_context") or {}
        tops = [p["total_memory_bytes"] for p in curve if p.get("total_memory_bytes") is not None]
        out["llm_memory"] = binary_axis(max(tops + [fit.get("budget_bytes") or 0], default=0))
    return out


def view_of(model: dict[str, Any]) -> dict[str, Any]:
    """Presentation settings for the page: a colour per op type (largest FLOPs first), and the
    charts' bytes axes at binary steps (:func:`binary_axis`)."""
    colors: dict[str, str] = {}
    rank: dict[str, int] = {}
    for o in model["by_op_type"]:
        if o["op_type"] not in rank:
            rank[o["op_type"]] = len(rank)
    for op, i in rank.items():
        if i < len(PALETTE):
            colors[op] = PALETTE[i]
    # rates and intensities count FLOPs + integer ops: say FLOP when there are no integer ops
    op = "FLOP" if not model["totals"]["int_ops"] else "op"
    return {"colors": colors, "rank": rank, "other": OTHER, "op": op, "axes": _axes(model)}


def render_html(model: dict[str, Any]) -> str:
    """One self-contained HTML file: no network access when it is opened."""
    tpl = environment().get_template("report.html.j2")
    return tpl.render(m=model, view=view_of(model), **_assets())


# --------------------------------------------------------------------------------------------- JSON

def _dump(x: Any, level: int) -> str:
    """Indented JSON where every table row (a list of scalars or of flat lists, or a record of such
    values in a list of records) stays on one line."""
    pad = "  " * (level + 1)
    if isinstance(x, dict):
        if not x:
            return "{}"
        items = [f"{pad}{json.dumps(k, ensure_ascii=False)}: {_dump(v, level + 1)}" for k, v in x.items()]
        return "{\n" + ",\n".join(items) + "\n" + "  " * level + "}"
    if isinstance(x, list):
        if not x:
            return "[]"
        if all(isinstance(v, dict) and v and all(_flat(e) for e in v.values()) for v in x):
            # a table of records (bottleneck rows, warnings, groups): one record per line
            return "[\n" + ",\n".join(pad + json.dumps(v, ensure_ascii=False, allow_nan=False) for v in x) \
                + "\n" + "  " * level + "]"
        if all(_flat(v) for v in x):
            if all(not isinstance(v, list) for v in x):
                return json.dumps(x, ensure_ascii=False, allow_nan=False, separators=(", ", ": "))
            return "[\n" + ",\n".join(pad + json.dumps(v, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
                                      for v in x) + "\n" + "  " * level + "]"
        return "[\n" + ",\n".join(pad + _dump(v, level + 1) for v in x) + "\n" + "  " * level + "]"
    return json.dumps(x, ensure_ascii=False, allow_nan=False)


def _flat(v: Any) -> bool:
    if isinstance(v, dict):
        return False
    if isinstance(v, list):
        return all(not isinstance(e, (dict, list)) or (isinstance(e, list) and all(not isinstance(f, (dict, list))
                                                                                   for f in e)) for e in v)
    return True


def render_json(model: dict[str, Any]) -> str:
    """The report model as JSON (schema ``onnxperf.report/1``); node and tensor rows one per line."""
    return _dump(model, 0) + "\n"


# ----------------------------------------------------------------------------------------- Markdown

_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|#!~])")


def md_text(text: Any, limit: int = 80) -> str:
    """A model-provided string made inert in GitHub Markdown: on one line, control and other
    non-printable characters (ESC, NUL, bidi overrides) escaped as ``\\x1b``... by
    :func:`onnxperf.base.errors.one_line`, markup escaped, HTML entities for & < >, cut to ``limit``
    characters."""


    s = cut(one_line(" ".join(str(text).split())), limit)
    s = s.replace("&", "&amp;")
    return _MD_SPECIAL.sub(lambda m: {"<": "&lt;", ">": "&gt;"}.get(m.group(1), "\\" + m.group(1)), s)


def render_md(model: dict[str, Any], top: int = 5) -> str:
    """A compact summary for a pull request or a CI job summary ($GITHUB_STEP_SUMMARY)."""
    m, t, c = model["model"], model["totals"], model["coverage"]
    hw = model["hardware"]
    binds = ", ".join(f"{k}={v}" for k, v in model["bindings"]["dims"].items())
    # a report read back from JSON written before the sides were (no "side"): its completeness flags
    part = t.get("side", not t["complete"])
    mpart = t.get("memory_side", not t["memory_complete"])
    out = [f"### onnxperf report: {md_text(m['name'])}", ""]
    facts = [
        ("Producer", f"{md_text(m['producer_name'] or '?')} {md_text(m['producer_version'])}, IR {m['ir_version']}, "
                     + ", ".join(f"{md_text(k)} {v}" for k, v in m["opsets"].items())),
        ("Bindings", md_text(binds) if binds else "none"),
        ("Params", f"{si(t['params'])} ({binary_bytes(t['param_bytes'])})"),
        ("MACs / FLOPs", f"{lower_bound(si(t['macs']), t['macs'], part)} / {lower_bound(si(t['flops']), t['flops'], part)}"),
        ("Bytes read / written", f"{lower_bound(binary_bytes(t['bytes_read']), t['bytes_read'], part)} / "
                                 f"{lower_bound(binary_bytes(t['bytes_written']), t['bytes_written'], part)}"),
        *([("Not costed", md_text(t["uncosted_text"], 300))] if t["uncosted_text"] else []),
        *([("Upper bound", md_text(t["upper_text"], 300))] if t.get("upper_text") else []),
        ("Peak activations / total memory",
         f"{lower_bound(binary_bytes(t['activation_peak_bytes']), t['activation_peak_bytes'], mpart)} / "
         f"{lower_bound(binary_bytes(t['total_memory_bytes']), t['total_memory_bytes'], mpart)}"),
    ]
    if t["predicted_latency_s"] is not None:
        lpart = t.get("latency_side", not t["latency_complete"])
        tput = t["predicted_throughput_items_per_s"]
        facts.append((f"Predicted latency ({md_text(hw['id'])})",
                      f"{lower_bound(seconds(t['predicted_latency_s']), t['predicted_latency_s'], lpart)}, "
                      f"{upper_bound(si(tput), tput, lpart, short=True)} items/s at batch {t['batch']}"))
    if t.get("measured_latency_s") is not None:
        facts.append(("Measured latency", seconds(t["measured_latency_s"])))
    meas = model.get("measured")
    if meas and meas.get("errors"):
        e = meas["errors"]
        facts.append(("Prediction error", "end-to-end " + ("?" if e.get("end_to_end_error") is None
                                                            else f"{100 * e['end_to_end_error']:+.1f}%")
                      + (", per node on host launch times" if meas.get("node_times") == "host" else "")
                      + f", MdAPE {pct(e.get('median_ape'))}, within ±25% {pct(e.get('within_25'))}, "
                        f"Spearman {'?' if e.get('spearman') is None else format(e['spearman'], '.2f')}"))
    share = (f"{pct(c['flops_exact_share'])} of FLOPs" if c["flops_exact_share"] is not None
             else "no FLOPs to count" if t["complete"] else "share of FLOPs unknown (uncosted nodes)")
    facts.append(("Coverage", f"{c['exact_nodes']}/{c['nodes']} nodes by exact rules ({pct(c['node_share_exact'])}), "
                              + share))
    out += ["| | |", "|---|---|"] + [f"| {k} | {v} |" for k, v in facts] + [""]
    timed = t["predicted_latency_s"] is not None
    out.append("| op type | count | FLOPs | % FLOPs | bytes |" + (" % time |" if timed else ""))
    out.append("|---|---:|---:|---:|---:|" + ("---:|" if timed else ""))
    for o in model["by_op_type"][:top]:
        label = f"{o['domain']}::{o['op_type']}" if o["domain"] else o["op_type"]
        op_part = not o["complete"]
        out.append(f"| {md_text(label)} | {o['count']} | {lower_bound(si(o['flops']), o['flops'], op_part, True)} | "
                   f"{pct(o['flops_share'])} | {lower_bound(binary_bytes(o['bytes']), o['bytes'], op_part, True)} |"
                   + (f" {pct(o['predicted_share'])} |" if timed else ""))
    if len(model["by_op_type"]) > top:
        out.append(f"| … {len(model['by_op_type']) - top} more | | | | |" + (" |" if timed else ""))
    groups = model.get("bottleneck_groups")
    if groups:

        out += [""] + bottleneck_md(groups, md_text)
    b = model["bottlenecks"]["predicted"][:top]
    if b:
        out += ["", f"Slowest nodes on {md_text(hw['id'])}:", "",
                "| # | node | op | predicted | share | why |", "|---:|---|---|---:|---:|---|"]
        for x in b:
            out.append(f"| {md_text(x['key'])} | {md_text(x['name'] or '(unnamed)', 48)} | {md_text(x['op_type'])} | "
                       f"{seconds(x['predicted_s'])} | {pct(x['share'])} | {md_text(x['why'], 120)} |")
    warns = [w for w in model["warnings"] if w["level"] in ("warning", "error")]
    if warns:
        out.append("")
        out += [f"> ⚠ {md_text(w['message'], 300)}" for w in warns]
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------------------------------- Netron

#: what a node's metrics are called in Netron's sidebar, and the report column each comes from
NETRON_METRICS = (("MACs", "macs"), ("FLOPs", "flops"), ("integer ops", "int_ops"), ("parameters", "params"),
                  ("bytes read", "bytes_read"), ("bytes written", "bytes_written"),
                  ("intensity (op/B)", "intensity"), ("bound", "bound"), ("predicted time", "predicted_s"),
                  ("measured time", "measured_s"))


def render_netron(model: dict[str, Any]) -> str:
    """A Netron attachment: open the model in Netron, then open this file, and every node shows our
    figures in its sidebar.

    Format (Netron ``source/view.js``, ``metadata.Attachment``): a JSON object with
    ``"signature": "netron:attachment"`` and two lists, ``metadata`` and ``metrics``, of items
    ``{"kind": "model"|"graph"|"node"|"value"|"tensor", "target": NAME, "name": ..., "value": ...,
    "type"?: ...}``. Netron keys an item by ``kind::target`` and matches a node by its name up to the
    first newline; model and graph items use ``target: ""``; for one target a repeated ``name``
    keeps the last value. So: nodes without a name cannot be targeted, and nodes sharing a name
    (after cutting at the newline) would get each other's figures: both are left out and counted in
    the model's metadata. Counts stay exact integers; times are strings with their unit.
    """
    cols = {c: i for i, c in enumerate(model["nodes"]["columns"])}
    rows = model["nodes"]["rows"]
    by_name: dict[str, list[list[Any]]] = {}
    unnamed = 0
    for r in rows:
        target = str(r[cols["name"]]).split("\n", 1)[0]
        if not target:
            unnamed += 1
            continue
        by_name.setdefault(target, []).append(r)
    metrics: list[dict[str, Any]] = []
    metadata: list[dict[str, Any]] = []
    duplicated = 0
    for target, rs in by_name.items():
        if len(rs) > 1:
            duplicated += len(rs)
            continue
        r = rs[0]
        metadata.append({"kind": "node", "target": target, "name": "onnxperf status", "value": r[cols["status"]]})
        for label, col in NETRON_METRICS:
            v = r[cols[col]]
            if v is None or (col == "int_ops" and not v):
                continue
            if col in ("predicted_s", "measured_s"):
                v = seconds(v)
            metrics.append({"kind": "node", "target": target, "name": label, "value": v})
    t = model["totals"]
    mm = [("MACs", t["macs"]), ("FLOPs", t["flops"]), ("parameters", t["params"]),
          ("bytes read", t["bytes_read"]), ("bytes written", t["bytes_written"]),
          ("peak activation bytes", t["activation_peak_bytes"]), ("total memory bytes", t["total_memory_bytes"])]
    if t["predicted_latency_s"] is not None:
        mm.append(("predicted latency", seconds(t["predicted_latency_s"])))
    if t.get("measured_latency_s") is not None:
        mm.append(("measured latency", seconds(t["measured_latency_s"])))
    metrics += [{"kind": "model", "target": "", "name": k, "value": v} for k, v in mm]
    info = [("onnxperf", model["generator"]["version"]), ("report schema", model["schema"]),
            ("hardware", model["hardware"]["id"] if model["hardware"] else "none"),
            ("convention", model["convention"])]
    if unnamed:
        info.append(("nodes without a name (no figures shown)", str(unnamed)))
    if duplicated:
        info.append(("nodes sharing a name (no figures shown)", str(duplicated)))
    metadata = [{"kind": "model", "target": "", "name": k, "value": v} for k, v in info] + metadata
    def items(xs: list[dict[str, Any]]) -> str:
        return ",\n".join("  " + json.dumps(x, ensure_ascii=False, allow_nan=False) for x in xs)

    return ('{\n "signature": "netron:attachment",\n "metadata": [\n' + items(metadata) + '\n ],\n "metrics": [\n'
            + items(metrics) + "\n ]\n}\n")


RENDERERS = {"html": render_html, "json": render_json, "md": render_md}
