"""Renderers of the comparison model (:func:`onnxperf.products.compare.model.build`): text, Markdown, JSON, HTML.
They format a finished model; they never compute figures.

HTML: the report's cached Jinja2 environment (autoescape on, strict undefined) when it is there, as an
overlay with a few filters of our own, else an equivalent one; the template ``templates/compare.html.j2``
and ``compare.css`` are inlined, the model is embedded with ``|tojson`` in a non-executed JSON block,
and a Content-Security-Policy forbids every script and every network access: the page is static HTML.
"""

from __future__ import annotations

import functools
import json
import re
from importlib import resources
from typing import Any

from onnxperf.base.errors import one_line
from onnxperf.ui.numbers import binary_bytes, clean, lower_bound, seconds, si
from onnxperf.products.render.report import environment as report_environment

FORMATS = ("text", "json", "md", "html")


# ------------------------------------------------------------------------------------- numbers

def value(x: Any, kind: str) -> str:
    """A total as text: exact counts, binary bytes, seconds, ratios."""
    if x is None:
        return "—"
    if kind == "count":
        return f"{x:,}"
    if kind == "bytes":
        return binary_bytes(x)
    if kind == "seconds":
        return seconds(x)
    return f"{x:.2f}"


def total(x: dict[str, Any], key: str, kind: str) -> str:
    """Model ``x``'s figure ``key`` as text: ``≥ 1,234`` when it is a lower bound (some node not
    costed, some tensor of unknown size), ``≤ 1,234`` when an upper bound, ``?`` when nothing of it is
    known (never 0)."""
    v = x["totals"][key]
    t = x["totals"]
    side = t.get("sides", {}).get(key, key in t["partial"])  # a model dict from before the sides: a lower bound
    return lower_bound(value(v, kind), v, side, short=True)


def metric_delta(d: dict[str, Any], kind: str) -> str:
    """A delta, or ``?`` when either side is a lower bound: the difference of two is no bound."""
    return "?" if d.get("partial") else delta(d["delta"], kind)


def metric_rel(d: dict[str, Any]) -> str:
    return "?" if d.get("partial") else rel(d["rel"])


def delta(x: Any, kind: str) -> str:
    """A signed difference: ``+53,120``, ``+1.15 MiB``, ``-12.3 µs``."""
    if x is None:
        return "—"
    if not x:
        return "0"
    sign = "+" if x > 0 else "−"
    return sign + value(abs(x), kind)


def rel(x: float | None) -> str:
    return "—" if x is None else ("0" if x == 0 else f"{100 * x:+.2f}%".replace("-", "−"))


def signed(x: int | None) -> str:
    """``+1,024``, ``−3``, ``0``; ``unknown`` for None (a delta of an unknown total: never 0)."""
    return "unknown" if x is None else "0" if not x else f"{x:+,}".replace("-", "−")


def known(x: int | None) -> str:
    """An exact count, ``unknown`` for None (a total of which nothing was counted: never 0)."""
    return "unknown" if x is None else f"{x:,}"


def shown(models: list[dict[str, Any]], key: str) -> bool:
    """Whether the totals table has a row for ``key``: some model has the figure, or some model's figure
    is unknown (None while partial: printed ``?``, never left out); not a figure no model has (a
    measured latency without --measure)."""
    return any(x["totals"][key] is not None or key in x["totals"]["partial"] for x in models)


def predicted_delta(p: dict[str, Any] | None) -> str:
    """An explanation's predicted-time delta: ``+181 µs``, ``≥ +3 µs`` when a node of it has no
    predicted time (``?`` then if nothing of it is timed), ``—`` without ``--hw``."""
    if p is None:
        return "—"
    text = delta(p["delta"], "seconds")
    return text if not p["partial"] else ("?" if not p["delta"] else f"{text} (partial)")


def _kind_counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{v} {k}" for k, v in counts.items())


def block_title(b: dict[str, Any]) -> str:
    la = b["label_a"] or (b["first_a"] or "")
    lb = b["label_b"] or (b["first_b"] or "")
    return " ↔ ".join(x for x in (la, lb) if x) or f"block {b['index']}"


def row_text(r: dict[str, Any]) -> str:
    """One alignment row: ``changed  Conv 1×1 256→128 → Conv 1×1 256→128 /2  (stride 1→2, macs …)``."""
    a = r["a"]["signature"] if r["a"] else "—"
    b = r["b"]["signature"] if r["b"] else "—"
    extra = ""
    if r["changes"]:
        extra = "; ".join(f"{c['field'].replace('_', ' ')} {_v(c['a'])} → {_v(c['b'])}" for c in r["changes"])
    if r["into"]:
        extra = f"folded into {r['into']['signature']} {clean(repr(r['into']['name']), 60)} on {r['into']['side'].upper()}"
    return f"{r['kind']:<8} {a} → {b}" + (f"  ({extra})" if extra else "")


def producer(x: dict[str, Any]) -> str:
    """``pytorch 2.14.1``: the producer's name (``?`` when empty) and version, the version left out when
    empty. tf2onnx writes its version followed by its git commit, ``None`` when it has none
    (``1.17.0 None``): that placeholder is dropped here; the JSON keeps the string as written."""
    version = (x["producer_version"] or "").strip()
    if version.endswith(" None"):
        version = version[: -len(" None")].rstrip()
    return f"{x['producer_name'] or '?'} {version}".rstrip()


def _v(x: Any) -> str:
    return "—" if x is None else f"{x:,}" if isinstance(x, int) else str(x)


# ---------------------------------------------------------------------------------------- text

def _table(rows: list[list[str]], align: str) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for r in rows:
        cells = [c.ljust(w) if a == "l" else c.rjust(w) for c, w, a in zip(r, widths, align)]
        out.append("  ".join(cells).rstrip())
    return out


def _wrap(text: str, width: int = 100, indent: str = "     ") -> list[str]:
    words, lines, cur = text.split(), [], ""
    for w in words:
        if cur and len(cur) + 1 + len(w) > width - len(indent):
            lines.append(indent + cur)
            cur = w
        else:
            cur = f"{cur} {w}" if cur else w
    if cur:
        lines.append(indent + cur)
    return lines


def render_text(m: dict[str, Any]) -> str:
    models = m["models"]
    out = [f"onnxperf compare: {len(models)} models, baseline {models[0]['label']}"]
    for x in models:
        dims = ", ".join(f"{k}={v}" for k, v in x["dims"].items()) or "none"
        out.append(f"  {x['label']}  {clean(x['name'], 70)}  {clean(producer(x), 80)} · opsets "
                   + ", ".join(f"{clean(k)} {v}" for k, v in x["opsets"].items())
                   + f" · {x['totals']['nodes']:,} nodes · dims {clean(dims)}")
        for w in x["warnings"]:
            out.append(f"     warning: {clean(w, 200)}")
    hw = m["hardware"]
    out.append(f"Hardware: {clean(hw['name'])} ({clean(hw['id'])})" if hw else "Hardware: none (--hw adds predicted latency)")
    out.append("")
    head = ["Totals"] + [x["label"] for x in models]
    for x in models[1:]:
        head += [f"Δ {x['label']}−{models[0]['label']}", "Δ%"]
    rows = [head]
    for met in m["metrics"]:
        k, kind = met["key"], met["kind"]
        if not shown(models, k):
            continue
        r = [met["label"]] + [total(x, k, kind) for x in models]
        for d in m["deltas"]:
            r += [metric_delta(d["metrics"][k], kind), metric_rel(d["metrics"][k])]
        rows.append(r)
    out += _table(rows, "l" + "r" * (len(head) - 1))
    out.append("")
    h = m["op_histogram"]
    rows = [["Op types (nodes)"] + h["columns"][1:] + (["Δ"] if len(models) == 2 else [])]
    for r in h["rows"]:
        rows.append([clean(r[0], 40)] + [str(c) if c else "·" for c in r[1:]]
                    + ([signed(r[2] - r[1]) if r[2] != r[1] else ""] if len(models) == 2 else []))
    out += _table(rows, "l" + "r" * (len(rows[0]) - 1))
    for c in m["comparisons"]:
        out += [""] + _comparison_text(c)
    return "\n".join(out) + "\n"


def _comparison_text(c: dict[str, Any]) -> list[str]:
    A, B = c["a"], c["b"]
    al = c["alignment"]
    out = [f"== {B} vs {A}: {clean(c['b_name'], 60)} vs {clean(c['a_name'], 60)} =="]
    n = len(al["rows"])
    out.append(f"Alignment of the heavy nodes (Conv, Gemm/MatMul, attention, norms): {n} rows: "
               f"{_kind_counts(al['counts'])}.")
    diff = [b for b in al["blocks"] if b["differs"]]
    out.append(f"Blocks where they differ: {len(diff)} of {len(al['blocks'])}"
               + (":" if diff else " (every block aligns node for node)."))
    for b in diff:
        out.append(f"  block {b['index']}  {clean(block_title(b), 90)}   MACs {b['macs_a']:,} → {b['macs_b']:,} "
                   f"({signed(b['delta_macs'])})")
        same = 0
        for i in b["rows"]:
            r = al["rows"][i]
            if r["kind"] == "same":
                same += 1
                continue
            out.append(f"    {clean(row_text(r), 160)}")
        if same:
            out.append(f"    … and {same} same")
    out += ["", f"Explanations ({len(c['explanations'])}):"]
    for k, e in enumerate(c["explanations"], 1):
        d = e["delta"]
        out.append(f"  {k}. [{e['id']}] {clean(e['title'], 120)}")
        where = "both sides" if e["side"] == "both" else (A if e["side"] == "a" else B)
        out.append(f"     on {where}: {e['node_count']:,} node{'s' if e['node_count'] != 1 else ''}, "
                   f"{e['flops']:,} FLOPs, {binary_bytes(e['bytes'])}; Δ{B}−{A}: MACs {signed(d['macs'])}, "
                   f"FLOPs {signed(d['flops'])}, bytes {signed(d['bytes'])}, params {signed(d['params'])}"
                   + (f", predicted {predicted_delta(e['predicted_s'])}" if e.get("predicted_s") else ""))
        out += _wrap(clean(e["detail"], 2000))
        out += [f"     - {clean(i, 300)}" for i in e["items"]]
    quiet = [ch["id"] for ch in c["checks"] if not ch["found"]]
    if quiet:
        out.append(f"  Checked, nothing found: {', '.join(quiet)}")
    out += ["", "Parameters by role"]
    rows = [["role", f"{A} tensors", f"{A} params", f"{B} tensors", f"{B} params", "Δ"]]
    for p in c["params_breakdown"]:
        rows.append([p["label"], str(p["tensors_a"]), f"{p['params_a']:,}", str(p["tensors_b"]), f"{p['params_b']:,}",
                     signed(p["delta"])])
    out += ["  " + x for x in _table(rows, "lrrrrr")]
    out += ["", "Closing figures"]
    for line in c["closing"]["lines"]:
        out += _wrap(clean(line, 3000), indent="  ")
    return out


# ------------------------------------------------------------------------------------ Markdown

_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|#!~])")


def md(text: Any, limit: int = 120) -> str:
    """A model-provided string made inert in GitHub Markdown: one line, control and other non-printable
    characters (ESC, NUL, bidi overrides) escaped as ``\\x1b``... (:func:`~onnxperf.base.errors.one_line`),
    markup escaped, cut."""
    s = one_line(" ".join(str(text).split()))
    if len(s) > limit:
        s = s[: limit - 1] + "…"
    s = s.replace("&", "&amp;")
    return _MD_SPECIAL.sub(lambda x: {"<": "&lt;", ">": "&gt;"}.get(x.group(1), "\\" + x.group(1)), s)


def render_md(m: dict[str, Any]) -> str:
    models = m["models"]
    out = [f"### onnxperf compare: {md(models[0]['name'])} (baseline) vs "
           + ", ".join(md(x["name"]) for x in models[1:]), ""]
    head = ["", *[f"{x['label']}: {md(x['name'], 40)}" for x in models]]
    for x in models[1:]:
        head += [f"Δ {x['label']}−{models[0]['label']}", "Δ%"]
    out += ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for met in m["metrics"]:
        k, kind = met["key"], met["kind"]
        if not shown(models, k):
            continue
        r = [met["label"]] + [total(x, k, kind) for x in models]
        for d in m["deltas"]:
            r += [metric_delta(d["metrics"][k], kind), metric_rel(d["metrics"][k])]
        out.append("| " + " | ".join(r) + " |")
    h = m["op_histogram"]
    diff_ops = [r for r in h["rows"] if len(set(r[1:])) > 1]
    if diff_ops:
        out += ["", "Op types whose count differs: " + ", ".join(
            f"{md(r[0], 40)} " + "/".join(str(v) for v in r[1:]) for r in diff_ops)]
    for c in m["comparisons"]:
        out += [""] + _comparison_md(c)
    return "\n".join(out) + "\n"


def _comparison_md(c: dict[str, Any]) -> list[str]:
    A, B = c["a"], c["b"]
    al = c["alignment"]
    out = [f"#### {B} vs {A}", "", *(f"- {md(line, 2000)}" for line in c["closing"]["lines"]), "",
           f"Heavy nodes aligned: {_kind_counts(al['counts'])}."]
    diff = [b for b in al["blocks"] if b["differs"]]
    if diff:
        out += ["", "| block | MACs " + A + " | MACs " + B + " | Δ | what changed |", "|---|---:|---:|---:|---|"]
        for b in diff:
            what = "; ".join(md(row_text(al["rows"][i]), 160) for i in b["rows"] if al["rows"][i]["kind"] != "same")
            out.append(f"| {md(block_title(b), 80)} | {b['macs_a']:,} | {b['macs_b']:,} | {signed(b['delta_macs'])} "
                       f"| {what} |")
    timed = c["closing"].get("latency") is not None
    out += ["", "| explanation | side | nodes | Δ MACs | Δ FLOPs | Δ bytes | Δ params |" + (" Δ predicted |" if timed else ""),
            "|---|---|---:|---:|---:|---:|---:|" + ("---:|" if timed else "")]
    for e in c["explanations"]:
        d = e["delta"]
        side = "both" if e["side"] == "both" else (A if e["side"] == "a" else B)
        out.append(f"| {md(e['title'])} | {side} | {e['node_count']} | {signed(d['macs'])} | {signed(d['flops'])} "
                   f"| {signed(d['bytes'])} | {signed(d['params'])} |"
                   + (f" {predicted_delta(e.get('predicted_s'))} |" if timed else ""))
    if timed:
        lat = c["closing"]["latency"]
        out.append(f"| unexplained (other nodes, and the same nodes timed differently) | | | | | | | "
                   f"{delta(lat['residual'], 'seconds')} |")
    quiet = [ch["id"] for ch in c["checks"] if not ch["found"]]
    if quiet:
        out += ["", "Checked, nothing found: " + ", ".join(f"`{q}`" for q in quiet) + "."]
    out += ["", "| params by role | " + A + " | " + B + " | Δ |", "|---|---:|---:|---:|"]
    for p in c["params_breakdown"]:
        out.append(f"| {md(p['label'])} | {p['params_a']:,} ({p['tensors_a']}) | {p['params_b']:,} ({p['tensors_b']}) "
                   f"| {signed(p['delta'])} |")
    return out


# ---------------------------------------------------------------------------------------- JSON

def render_json(m: dict[str, Any]) -> str:
    """The comparison model as JSON (schema ``onnxperf.compare/1``): stable key order, exact integers."""
    return json.dumps(m, indent=1, ensure_ascii=False, allow_nan=False) + "\n"


# ---------------------------------------------------------------------------------------- HTML

CSP = ("default-src 'none'; script-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src 'none'; "
       "connect-src 'none'; base-uri 'none'; form-action 'none'")


def _asset(name: str) -> str:
    return resources.files("onnxperf.templates").joinpath(name).read_text(encoding="utf-8")


def _filters() -> dict[str, Any]:
    return {"cmp_value": value, "cmp_delta": delta, "cmp_rel": rel, "cmp_total": total, "cmp_metric_delta": metric_delta,
            "cmp_metric_rel": metric_rel, "cmp_signed": signed, "cmp_bytes": binary_bytes,
            "cmp_si": lambda x: "—" if x is None else si(x), "cmp_row": row_text, "cmp_block": block_title,
            "cmp_int": lambda x: "—" if x is None else f"{x:,}", "cmp_v": _v, "cmp_predicted": predicted_delta,
            "cmp_known": known, "cmp_shown": shown}


@functools.lru_cache(maxsize=1)
def environment():
    """The report's cached environment, overlaid with our filters (its own filters are left alone);
    a fresh autoescaping environment when the report module is not there."""
    try:

        env = report_environment().overlay()
        env.filters = dict(env.filters)
    except ImportError:  # the HTML report is not installed: same settings, our own loader
        from jinja2 import Environment, FunctionLoader, StrictUndefined

        env = Environment(loader=FunctionLoader(lambda name: (_asset(name), None, lambda: True)), autoescape=True,
                          undefined=StrictUndefined, keep_trailing_newline=True)
    env.filters.update(_filters())
    return env


def render_html(m: dict[str, Any]) -> str:
    """One self-contained, static HTML page: no script runs, nothing is fetched."""
    from markupsafe import Markup

    css = _asset("compare.css")
    if "</style" in css.lower():
        raise ValueError("compare.css contains '</style'")
    return environment().get_template("compare.html.j2").render(m=m, css=Markup(css), csp=CSP)


RENDERERS = {"text": render_text, "json": render_json, "md": render_md, "html": render_html}
