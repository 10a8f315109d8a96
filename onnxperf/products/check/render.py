"""Renderers of check verdicts: text, json, junit, sarif, md. They format; they never compute.

Names inside a model are untrusted: every renderer escapes them for its own format. Text and
Markdown escape control characters (a name cannot break a line or drive a terminal), Markdown
also neutralizes HTML, Markdown syntax and @-mentions, JUnit XML escapes markup and the control
characters XML 1.0 cannot carry, and JSON / SARIF keep names exact (JSON escapes them).
"""

from __future__ import annotations

import html
import json
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from pathlib import PurePath
from urllib.parse import quote

from onnxperf import __version__
from onnxperf.base.errors import one_line
from onnxperf.ui.numbers import binary_bytes, clean, lower_bound, seconds, si
from onnxperf.products.check.budget import LLM_KEYS, Budget
from onnxperf.products.check.lints import LINTS, Finding, NodeRef
from onnxperf.products.check.runner import ERROR, FAIL, PASS, UNKNOWN, Verdict, exit_code

SCHEMA = "onnxperf.check/1"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_NAME_LIMIT = 80


def _counts(verdicts: Sequence[Verdict]) -> dict[str, int]:
    return {"models": len(verdicts), "passed": sum(v.status == PASS for v in verdicts),
            "failed": sum(v.status == FAIL for v in verdicts), "unreadable": sum(v.status == ERROR for v in verdicts)}


def _totals_line(verdicts: Sequence[Verdict]) -> str:
    c = _counts(verdicts)
    return (f"{c['models']} model{'s' if c['models'] != 1 else ''}: {c['passed']} passed, {c['failed']} failed, "
            f"{c['unreadable']} unreadable")


def _severity_counts(findings: Sequence[Finding]) -> str:
    out = []
    for sev in ("error", "warning", "info"):
        k = sum(f.severity == sev for f in findings)
        if k:
            out.append(f"{k} {sev}{'s' if k != 1 and sev != 'info' else ''}")
    return ", ".join(out)


def _macs(f: dict) -> str:
    """A verdict's MACs: ``≥ …`` when partial, ``unknown`` when nothing of them was counted (null in
    the figures, :class:`onnxperf.cost.analysis.Totals`), never 0."""
    if "macs" in f and f["macs"] is None:
        return "unknown"
    return lower_bound(si(f.get("macs")), f.get("macs"), bool(f.get("uncosted_nodes")))


def _headline(v: Verdict) -> str:
    f = dict(v.figures)
    parts = [f"params {si(f.get('params'))}",
             f"MACs {_macs(f)}",
             f"peak {lower_bound(binary_bytes(f.get('activation_peak_bytes')), f.get('activation_peak_bytes'), bool(f.get('unknown_size_tensors')))}"]
    if f.get("latency_s") is not None:
        parts.append(f"latency {seconds(f['latency_s'])} ({f['hw']})" + (" (partial)" if f.get("latency_unknown_nodes") else ""))
    return ", ".join(parts)


def _nodes_text(nodes: Sequence[NodeRef], k: int = 5) -> str:
    if not nodes:
        return ""
    shown = ", ".join(clean(n.label(), 60) for n in nodes[:k])
    return shown + (f" (+{len(nodes) - k} more)" if len(nodes) > k else "")


# ---------------------------------------------------------------- text

def render_text(verdicts: Sequence[Verdict], budget: Budget) -> str:
    """One verdict line per model, then its details (indented), then a totals line."""
    lines: list[str] = []
    for v in verdicts:
        path = clean(v.model, 200)
        if v.status == ERROR:
            lines.append(f"ERROR  {path}  {clean(v.error or '', 400)}")
            continue
        broken = v.failed_budgets
        what = "; ".join(clean(b.message, 200) for b in broken[:2]) if broken else _headline(v)
        sev = _severity_counts(v.findings)
        lines.append(f"{'PASS ' if v.status == PASS else 'FAIL '}  {path}  {what}" + (f"  [{sev}]" if sev else ""))
        for b in broken:
            mark = "over" if b.status == FAIL else "unverified"
            lines.append(f"    budget {mark:<10} {clean(b.message, 300)}")
            if b.nodes:
                lines.append(f"        nodes: {_nodes_text(b.nodes)}")
        for f in v.findings:
            lines.append(f"    {f.severity:<7} {f.lint_id} {f.name}: {clean(f.message, 300)}")
            if f.nodes:
                lines.append(f"        nodes: {_nodes_text(f.nodes)}")
            lines.append(f"        fix: {clean(f.fix, 300)}")
        if v.ignored_dims:
            lines.append(f"    note    bindings this model does not use: {clean(', '.join(v.ignored_dims), 200)}")
        for note in v.defaulted:
            lines.append(f"    note    {clean(note, 200)}")
    lines.append(_totals_line(verdicts))
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- json

def to_dict(verdicts: Sequence[Verdict], budget: Budget) -> dict:
    return {
        "schema": SCHEMA,
        "onnxperf_version": __version__,
        "exit_code": exit_code(verdicts),
        "summary": _counts(verdicts),
        "budget": {"source": budget.source, "hw": budget.hw, "dims": dict(budget.dims),
                   "allow_partial": budget.allow_partial, "strict": budget.strict, "limits": budget.limits(),
                   "lint_levels": dict(budget.lints.levels),
                   # the LLM limits' figures are under a KV runtime model: said where they are evaluated
                   **({"kv_runtime": budget.kv_runtime, "kv_precision": budget.kv_precision, "devices": budget.devices}
                      if any(k in budget.limits() for k in LLM_KEYS) else {})},
        "models": [v.to_dict() for v in verdicts],
        "lints": [{"id": i.lint_id, "name": i.name, "default_severity": i.severity, "summary": i.summary,
                   "fix": i.fix} for i in LINTS.values()],
    }


def render_json(verdicts: Sequence[Verdict], budget: Budget) -> str:
    return json.dumps(to_dict(verdicts, budget), indent=2, ensure_ascii=False) + "\n"


# ---------------------------------------------------------------- junit

def _x(text: object) -> str:
    """Text safe for XML 1.0: non-printable characters (which XML cannot carry) escaped;
    ElementTree escapes the markup."""
    return one_line(text)


def render_junit(verdicts: Sequence[Verdict], budget: Budget) -> str:
    """One testsuite per model; one testcase per budget limit and per enabled lint. Broken limits
    and error-level findings are failures; warnings and infos go to the testcase's system-out."""
    root = ET.Element("testsuites", name="onnxperf check")
    tot = {"tests": 0, "failures": 0, "errors": 0}
    for v in verdicts:
        suite = ET.SubElement(root, "testsuite", name=_x(v.model))
        n = {"tests": 0, "failures": 0, "errors": 0}
        if v.status == ERROR:
            case = ET.SubElement(suite, "testcase", classname=_x(v.model), name="load")
            ET.SubElement(case, "error", message=_x(v.error or ""), type="unreadable").text = _x(v.error or "")
            n["tests"] += 1
            n["errors"] += 1
        for b in v.budgets:
            case = ET.SubElement(suite, "testcase", classname=_x(v.model), name=f"budget {b.key}")
            n["tests"] += 1
            if b.status in (FAIL, UNKNOWN):
                fail = ET.SubElement(case, "failure", message=_x(b.message), type=b.status)
                fail.text = "\n".join([_x(b.message)] + ([f"nodes: {_x(_nodes_text(b.nodes, 20))}"] if b.nodes else []))
                n["failures"] += 1
        if v.status != ERROR:
            for info in LINTS.values():
                if budget.lints.level(info.lint_id, info.severity) == "off":
                    continue
                mine = [f for f in v.findings if f.lint_id == info.lint_id]
                case = ET.SubElement(suite, "testcase", classname=_x(v.model), name=f"lint {info.lint_id} {info.name}")
                n["tests"] += 1
                errors = [f for f in mine if f.severity == "error"]
                body = "\n".join(f"{f.severity}: {_x(f.message)}"
                                 + (f" [nodes: {_x(_nodes_text(f.nodes, 20))}]" if f.nodes else "")
                                 + f" fix: {_x(f.fix)}" for f in mine)
                if errors:
                    ET.SubElement(case, "failure", message=_x(errors[0].message), type="error").text = body
                    n["failures"] += 1
                elif mine:
                    ET.SubElement(case, "system-out").text = body
        for k, val in n.items():
            suite.set(k, str(val))
            tot[k] += val
    for k, val in tot.items():
        root.set(k, str(val))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


# ---------------------------------------------------------------- sarif

_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def _uri(path: str) -> dict:
    p = PurePath(path)
    if p.is_absolute():
        return {"uri": "file://" + quote(p.as_posix())}
    return {"uri": quote(p.as_posix()), "uriBaseId": "%SRCROOT%"}


def _logical(model: str, nodes: Sequence[NodeRef]) -> list[dict]:
    return [{"name": n.name or f"#{n.key}", "fullyQualifiedName": f"{model}::{n.key}",
             "kind": "function" if n.kind == "node" else "variable"} for n in nodes[:20]]


def render_sarif(verdicts: Sequence[Verdict], budget: Budget) -> str:
    """SARIF 2.1.0: one rule per lint (plus the broken budget limits and unreadable input), one
    result per finding and per broken limit, located at the model file; node names go in the
    message and in logicalLocations."""
    rules: list[dict] = []
    index: dict[str, int] = {}

    def rule(rule_id: str, name: str, text: str, help_text: str, level: str) -> int:
        if rule_id not in index:
            index[rule_id] = len(rules)
            rules.append({"id": rule_id, "name": name, "shortDescription": {"text": text},
                          "help": {"text": help_text}, "defaultConfiguration": {"level": level}})
        return index[rule_id]

    for info in LINTS.values():
        rule(info.lint_id, info.name, info.summary, info.fix, _LEVEL[info.severity])
    results: list[dict] = []
    for v in verdicts:
        loc = {"physicalLocation": {"artifactLocation": _uri(v.model)}}
        if v.status == ERROR:
            i = rule("input/unreadable", "unreadable-model", "the model file cannot be read",
                     "fix the file (see the message)", "error")
            results.append({"ruleId": "input/unreadable", "ruleIndex": i, "level": "error",
                            "message": {"text": v.error or ""}, "locations": [loc]})
            continue
        for b in v.failed_budgets:
            rid = f"budget/{b.key}"
            i = rule(rid, f"budget-{b.key}", f"the model breaks the budget limit {b.key}",
                     "make the model smaller or faster, or change the budget", "error")
            results.append({"ruleId": rid, "ruleIndex": i, "level": "error", "message": {"text": b.message},
                            "locations": [{**loc, "logicalLocations": _logical(v.model, b.nodes)}]
                            if b.nodes else [loc]})
        for f in v.findings:
            nodes = _nodes_text(f.nodes, 10)
            text = f.message + (f" Nodes: {nodes}." if nodes else "") + f" Fix: {f.fix}"
            results.append({"ruleId": f.lint_id, "ruleIndex": index[f.lint_id], "level": _LEVEL[f.severity],
                            "message": {"text": text},
                            "locations": [{**loc, "logicalLocations": _logical(v.model, f.nodes)}] if f.nodes else [loc]})
    doc = {
        "$schema": SARIF_SCHEMA, "version": "2.1.0",
        "runs": [{"tool": {"driver": {"name": "onnxperf", "version": __version__, "semanticVersion": __version__,
                                      "rules": rules}},
                  "columnKind": "unicodeCodePoints", "results": results}],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


# ---------------------------------------------------------------- markdown

#: characters with a meaning inside a Markdown line (emphasis, code, links, tables, strike-through,
#: math, @-mentions). Line-start syntax (#, -, +, 1.) cannot occur: untrusted text never starts a line.
_MD_SPECIAL = set("\\`*_[]|~@$")


def md_text(text: object, limit: int = _NAME_LIMIT) -> str:
    """Untrusted text for a Markdown line or table cell: control characters escaped, HTML turned
    into entities (``&``, ``<``, ``>``), Markdown syntax, table pipes and @-mentions backslash-escaped."""
    s = html.escape(clean(str(text), limit), quote=False)
    return "".join("\\" + ch if ch in _MD_SPECIAL else ch for ch in s)


def _html_text(text: object, limit: int = 200) -> str:
    return html.escape(clean(str(text), limit), quote=True)


_ICON = {PASS: "✅", FAIL: "❌", ERROR: "⛔"}


def render_md(verdicts: Sequence[Verdict], budget: Budget) -> str:
    """A pull-request comment: a table with one row per model, then the details of each model that
    failed or has findings, folded."""
    c = _counts(verdicts)
    title = "all pass" if c["passed"] == c["models"] else f"{c['passed']} of {c['models']} pass"
    out = [f"### onnxperf check: {title}", ""]
    out += ["| | Model | Params | MACs | Activation peak | Latency | Findings |",
            "|---|---|---:|---:|---:|---:|---|"]
    for v in verdicts:
        if v.status == ERROR:
            out.append(f"| {_ICON[ERROR]} | {md_text(v.model)} | | | | | unreadable: {md_text(v.error or '', 200)} |")
            continue
        f = dict(v.figures)
        lat = f"{seconds(f['latency_s'])} ({md_text(f['hw'])})" if f.get("latency_s") is not None else "–"
        broken = len(v.failed_budgets)
        notes = ", ".join(x for x in ([f"{broken} budget limit{'s' if broken != 1 else ''} broken"] if broken else [])
                          + ([_severity_counts(v.findings)] if v.findings else [])) or "–"
        macs = _macs(f)
        peak = lower_bound(binary_bytes(f.get("activation_peak_bytes")), f.get("activation_peak_bytes"),
                        bool(f.get("unknown_size_tensors")))
        out.append(f"| {_ICON[v.status]} | {md_text(v.model)} | {si(f.get('params'))} | {md_text(macs)} | "
                   f"{md_text(peak)} | {lat} | {notes} |")
    for v in verdicts:
        if v.status == ERROR or not (v.failed_budgets or v.findings):
            continue
        out += ["", f"<details><summary>{_html_text(v.model)}: {v.status}</summary>", ""]
        for b in v.failed_budgets:
            out.append(f"- ❌ `{b.key}`: {md_text(b.message, 300)}"
                       + (f" Nodes: {md_text(_nodes_text(b.nodes), 300)}" if b.nodes else ""))
        for fd in v.findings:
            icon = {"error": "❌", "warning": "⚠️", "info": "ℹ️"}[fd.severity]
            out.append(f"- {icon} **{fd.lint_id}** `{fd.name}`: {md_text(fd.message, 300)}"
                       + (f" Nodes: {md_text(_nodes_text(fd.nodes), 300)}" if fd.nodes else "")
                       + f" Fix: {md_text(fd.fix, 300)}")
        out += ["", "</details>"]
    out += ["", f"<sub>onnxperf {__version__} · {md_text(_totals_line(verdicts), 200)}</sub>"]
    return "\n".join(out) + "\n"


RENDERERS: dict[str, Callable[[Sequence[Verdict], Budget], str]] = {
    "text": render_text, "json": render_json, "junit": render_junit, "sarif": render_sarif, "md": render_md,
}

__all__ = ["RENDERERS", "SCHEMA", "md_text", "render_json", "render_junit", "render_md", "render_sarif",
           "render_text", "to_dict"]
