#!/usr/bin/env python3
"""How often do onnxperf's outputs contradict themselves? (issue 27, point 3: the measure behind
tests/test_one_story.py, over more outputs and more facts.)

Runs a few scenarios through the onnxperf CLI (as a user would), collects every output that states
per-node or per-op-type facts (summary text/JSON/Markdown, report JSON/Markdown/HTML, the Chrome
trace), then checks the facts against each other the way a demanding reader would. Every fact
compared counts as one check; a disagreement is one contradiction, printed on one line:

    [scenario] check-id  subject: source-a=value | source-b=value

A fact that cannot be evaluated (a field missing, a line not found) is counted as "not checkable",
never as a pass. Nothing here hard-codes an expected number: every value comes from the outputs.

Usage:  python benchmarks/one_story.py [--out DIR] [--only A,B] [--max-print N]   (about 30 s on 2 cores)

The checks: 1 one node, one verdict (and one op type); 2 share of peak = ops / time / the page's peak;
3 one ridge per page; 4 every chart point on or under its roof; 5 advice never offers the --precision the
run has; 6 the cost chart ranks by predicted time; 7 per-op-type time the same everywhere; 8 totals and
latency; 9 one intensity per node (the one the prediction charges); 10 per-node time; 11 the report
JSON embedded in the HTML is the report JSON. Results: benchmarks/results/one_story.md.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures as cf
import html.parser
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ONNXPERF = [sys.executable, "-m", "onnxperf"]

# name, model, fixed args, discover dims (bind batch-like dims to 1, sequence-like to 128), precision
SCENARIOS = [
    ("A", "models/resnet50_torch.onnx", ["--dim", "batch=1", "--hw", "rtx3090"], False, None),
    ("A-fp16", "models/resnet50_torch.onnx", ["--dim", "batch=1", "--hw", "rtx3090", "--precision", "fp16"], False, "fp16"),
    ("B", "models/corpus/swin_t_torch.onnx", ["--hw", "a100-80gb"], True, None),
    ("C", "models/bert_encoder_torch.onnx", ["--hw", "t4"], True, None),
    ("D", "models/corpus/qwen2_decode_dynamo18.onnx", ["--llm", "--context", "1024", "--hw", "h100-sxm"], True, None),
]
SEQ_LEN = 128

# ----------------------------------------------------------------------------------------------
# numbers as printed


UNIT_SCALE = {"s": 1.0, "ms": 1e-3, "µs": 1e-6, "us": 1e-6, "ns": 1e-9,
              "B": 1.0, "KiB": 1024.0, "MiB": 2.0 ** 20, "GiB": 2.0 ** 30, "TiB": 2.0 ** 40}
SI = {"k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
NUM_RE = re.compile(r"^\s*[≥≤~]?\s*([-+]?\d[\d,]*(?:\.\d+)?)(?:[eE]([-+]?\d+))?\s*(\S*)")


def parse_printed(s: str):
    """'3.26 ms' -> (0.00326, tolerance); '97.2%' -> (0.972, 0.0005); '1.31 k/s' -> (1310, 5).
    The tolerance is half a unit of the last printed digit (plus a hair). None if not a number."""
    if s is None:
        return None
    s = s.strip()
    m = NUM_RE.match(s)
    if not m:
        return None
    mant, exp, unit = m.group(1).replace(",", ""), m.group(2), m.group(3)
    dec = len(mant.split(".")[1]) if "." in mant else 0
    v = float(mant)
    tol = 0.5 * 10.0 ** (-dec)
    if exp:
        v *= 10.0 ** int(exp)
        tol *= 10.0 ** int(exp)
    scale = 1.0
    if unit.startswith("%"):
        scale = 0.01
    elif unit in UNIT_SCALE:
        scale = UNIT_SCALE[unit]
    elif unit and unit[0] in SI and len(unit) > 1 and unit not in ("MACs",):
        scale = SI[unit[0]]
    elif unit in SI:
        scale = SI[unit]
    v *= scale
    tol = tol * scale * 1.0001 + abs(v) * 1e-9
    return v, tol


def printed_ok(value, printed: str) -> bool | None:
    p = parse_printed(printed)
    if p is None or value is None:
        return None
    return abs(value - p[0]) <= p[1]


def close(a, b, rel=1e-4, abs_=1e-15) -> bool:
    """JSON against JSON: report node rows round to 5 significant digits, hence 1e-4."""
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= max(abs_, rel * max(abs(a), abs(b)))


def fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


DT = {"float32": "fp32", "float": "fp32", "fp32": "fp32", "float16": "fp16", "half": "fp16", "fp16": "fp16",
      "bfloat16": "bf16", "bf16": "bf16", "float64": "fp64", "double": "fp64", "fp64": "fp64", "tf32": "tf32",
      "int8": "int8", "uint8": "int8", "int4": "int4", "uint4": "int4", "int32": "int32", "int64": "int64",
      "fp8": "fp8", "float8e4m3fn": "fp8", "float8e5m2": "fp8"}


def canon(dt: str | None) -> str | None:
    return None if dt is None else DT.get(dt.lower(), dt.lower())


def roof_for(roofs, dtype):
    c = canon(dtype)
    for r in roofs or []:
        if c in {canon(p) for p in str(r.get("dtype", "")).split("/")}:
            return r
    return None


# ----------------------------------------------------------------------------------------------
# the ledger of facts


class Ledger:
    def __init__(self, scenario: str):
        self.scenario = scenario
        self.checked = collections.Counter()
        self.bad = collections.Counter()
        self.na = collections.Counter()
        self.lines: list[str] = []
        self.na_reasons: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        self.pairs: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)  # check -> "a vs b" -> n
        self.pairs_bad: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)

    def fact(self, check: str, subject: str, ok: bool | None, a_src: str = "", a=None, b_src: str = "", b=None,
             note: str = "") -> None:
        if ok is None:
            self.not_checkable(check, f"{subject}: {a_src} vs {b_src}" if b_src else subject)
            return
        self.checked[check] += 1
        pair = f"{a_src} vs {b_src}"
        self.pairs[check][pair] += 1
        if not ok:
            self.pairs_bad[check][pair] += 1
            self.bad[check] += 1
            tail = f"  ({note})" if note else ""
            self.lines.append(f"[{self.scenario}] {check}  {subject}: {a_src}={fmt(a)} | {b_src}={fmt(b)}{tail}")

    def not_checkable(self, check: str, why: str) -> None:
        self.na[check] += 1
        self.na_reasons[check][why] += 1


# ----------------------------------------------------------------------------------------------
# running the CLI


def run(cmd: list[str], log: list) -> tuple[int, str, str, float]:
    t = time.time()
    p = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"})
    log.append({"cmd": " ".join(cmd), "rc": p.returncode, "seconds": round(time.time() - t, 2),
                "stderr": p.stderr[-2000:]})
    return p.returncode, p.stdout, p.stderr, time.time() - t


def discover_dims(model: str, log: list) -> list[str]:
    """Symbolic dims of the model's inputs (from `onnxperf summary MODEL --format json`): batch-like
    ones bound to 1, sequence-like ones to SEQ_LEN; others (the KV cache's past) left to --llm."""
    rc, out, _, _ = run([*ONNXPERF, "summary", model, "--format", "json", "--no-progress"], log)
    if rc != 0:
        return []
    d = json.loads(out)
    names = list((d.get("bindings") or {}).get("dims") or {})  # dims onnxperf bound by default (batch)
    names += [n for n in (d.get("bindings") or {}).get("free_dims") or [] if n not in names]
    for x in d["model"]["inputs"]:
        for dim in x.get("shape") or []:
            if isinstance(dim, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", dim) and dim not in names:
                names.append(dim)
    args = []
    for n in names:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", n):
            continue
        low = n.lower()
        if "batch" in low:
            args += ["--dim", f"{n}=1"]
        elif "seq" in low or low in ("sequence_length", "seq_len", "length", "tokens"):
            args += ["--dim", f"{n}={SEQ_LEN}"]
    return args


def produce(name, model, fixed, discover, outdir, log):
    """Runs every output of one scenario; returns {kind: path} and the argument list."""
    args = list(fixed)
    if discover:
        args = discover_dims(model, log) + args
    d = os.path.join(outdir, name)
    os.makedirs(d, exist_ok=True)
    p = {k: os.path.join(d, f) for k, f in [
        ("s_txt", "summary.txt"), ("s_json", "summary.json"), ("s_md", "summary.md"), ("trace", "trace.json"),
        ("r_json", "report.json"), ("r_md", "report.md"), ("r_html", "report.html")]}
    base = ["--no-progress"]
    cmds = [
        [*ONNXPERF, "summary", model, *args, *base, "--color", "never", "--format", "text", "-o", p["s_txt"]],
        [*ONNXPERF, "summary", model, *args, *base, "--format", "json", "-o", p["s_json"], "--trace", p["trace"]],
        [*ONNXPERF, "summary", model, *args, *base, "--format", "md", "-o", p["s_md"]],
        [*ONNXPERF, "report", model, *args, *base, "--format", "json", "-o", p["r_json"]],
        [*ONNXPERF, "report", model, *args, *base, "--format", "md", "-o", p["r_md"]],
        [*ONNXPERF, "report", model, *args, *base, "-o", p["r_html"]],
    ]
    return p, args, cmds


# ----------------------------------------------------------------------------------------------
# parsing the outputs


class Node:
    __slots__ = ("tag", "attrs", "children", "parent")

    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.children, self.parent = tag, dict(attrs), [], parent

    def text(self) -> str:
        out = []
        for c in self.children:
            out.append(c if isinstance(c, str) else c.text())
        return "".join(out)

    def iter(self):
        yield self
        for c in self.children:
            if not isinstance(c, str):
                yield from c.iter()

    def find_all(self, tag=None, cls=None, **attrs):
        for n in self.iter():
            if tag and n.tag != tag:
                continue
            if cls and cls not in (n.attrs.get("class") or "").split():
                continue
            if any(n.attrs.get(k.replace("_", "-")) != v for k, v in attrs.items()):
                continue
            yield n

    def first(self, *a, **k):
        return next(self.find_all(*a, **k), None)


VOID = {"meta", "link", "br", "img", "input", "hr", "wbr", "col", "source", "area", "base", "embed", "param", "track"}


class DOM(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {}, None)
        self.cur = self.root
        self.scripts: list[tuple[dict, str]] = []

    def handle_starttag(self, tag, attrs):
        n = Node(tag, attrs, self.cur)
        self.cur.children.append(n)
        if tag not in VOID:
            self.cur = n

    def handle_startendtag(self, tag, attrs):
        self.cur.children.append(Node(tag, attrs, self.cur))

    def handle_endtag(self, tag):
        n = self.cur
        while n is not None and n.tag != tag:
            n = n.parent
        if n is not None and n.parent is not None:
            if tag == "script":
                self.scripts.append((n.attrs, n.text()))
            self.cur = n.parent

    def handle_data(self, data):
        self.cur.children.append(data)


def squash(s: str) -> str:
    return re.sub(r"\s+", " ", s).strip()


def html_table(dom: DOM, tid: str):
    t = dom.root.first("table", id=tid)
    if t is None:
        return None
    rows = []
    body = t.first("tbody") or t
    for tr in body.find_all("tr"):
        cells = []
        for td in tr.children:
            if isinstance(td, Node) and td.tag in ("td", "th"):
                badge = td.first("span", cls="badge")
                cells.append({"text": squash(td.text()), "badge": squash(badge.text()) if badge else None})
        if cells:
            rows.append(cells)
    return rows


def parse_html(path: str):
    with open(path, encoding="utf-8") as f:
        src = f.read()
    dom = DOM()
    dom.feed(src)
    data = view = js = None
    for attrs, text in dom.scripts:
        if attrs.get("id") == "report-data":
            data = json.loads(text)
        elif attrs.get("id") == "report-view":
            view = json.loads(text)
        elif "__onnxperf" in text:
            js = text
    return {"dom": dom, "data": data, "view": view, "js": js}


def md_tables(text: str):
    """Every Markdown table row as a list of cells (escapes undone)."""
    rows = []
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("|") or re.fullmatch(r"\|[\s:|-]+\|", line):
            continue
        cells = [c.strip().replace("\\*", "*").replace("\\_", "_").replace("\\|", "|")
                 for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        rows.append(cells)
    return rows


TIME = r"\d[\d.]*(?:e[+-]?\d+)?\s?(?:s|ms|µs|ns)"


def parse_text(text: str):
    """The summary's text output: the figures a reader would copy from it."""
    T = {"rl_ops": {}, "top_nodes": {}, "bn_ops": {}, "advice": [], "lines": text.splitlines()}
    lines = T["lines"]
    sec = None
    para = None
    for i, ln in enumerate(lines):
        m = re.match(r"^Roofline on .*\[(\S+)\]\s+ridge (\S+) (\S+)/B \((\w+)\)", ln)
        if m:
            T["ridge"] = (m.group(2), m.group(4))
            sec = "roofline"
            continue
        if ln.startswith("Bottlenecks on"):
            sec = "bottlenecks"
            m = re.search(r"shares of the (\S+ \S+) of node time", ln)
            T["bn_node_time"] = m.group(1) if m else None
            continue
        if ln.startswith("Decoder LLM"):
            sec = "llm"
            continue
        if re.match(r"^\S", ln):
            if ln.startswith("Coverage") or ln.startswith("Memory") or ln.startswith("Totals"):
                sec = ln.split()[0].lower()
            elif ln.startswith("Note") or ln.startswith("Model"):
                sec = None
        m = re.match(r"^\s+Predicted latency\s+(\S+ \S+)\s+throughput (\S+(?: \S+)?/s) \(batch (\d+)\)", ln)
        if m:
            T["latency"], T["throughput"], T["batch"] = m.group(1), m.group(2).replace("/s", ""), int(m.group(3))
        m2 = re.match(r"^\s+Limited by (.*) of node time", ln)
        if m2:
            T["limited_line"] = m2.group(1)
            words = {"compute": "compute", "GPU fill": "fill", "memory": "memory", "dispatch": "dispatch"}
            for w, v in re.findall(r"(GPU fill|compute|memory|dispatch) (\S+%)", m2.group(1)):
                T[words[w] + "_share"] = v
        m = re.match(r"^\s+Compute-bound (\S+%) of node time, memory-bound (\S+%)", ln)
        if m:
            T["compute_share"], T["memory_share"] = m.group(1), m.group(2)
        if sec == "totals":
            m = re.match(r"^\s+(Params|MACs|FLOPs|Int ops)\s+.*?\(([\d,]+)\)", ln)
            if m:
                T[{"Params": "params", "MACs": "macs", "FLOPs": "flops", "Int ops": "int_ops"}[m.group(1)]] = int(
                    m.group(2).replace(",", ""))
            m = re.match(r"^\s+Bytes (read|written)\s+.*?([\d,]+) B\s*$", ln)
            if m:
                T["bytes_" + m.group(1)] = int(m.group(2).replace(",", ""))
            m = re.match(r"^\s+Intensity\s+(\S+) FLOP/B", ln)
            if m:
                T["intensity"] = m.group(1)
        if sec == "memory":
            m = re.match(r"^\s+Activation peak\s+(\S+ \S+)", ln)
            if m:
                T["activation_peak"] = m.group(1)
            m = re.match(r"^\s+Total\s+(\S+ \S+)\s+weights", ln)
            if m:
                T["total_memory"] = m.group(1)
        if sec == "roofline":
            m = re.match(r"^\s{2}(\S+)\s+(\d+)\s+(" + TIME + r")\s+(\d+(?:\.\d+)?%)\s+(\w+)\s+(\S+)\s+(.+?)\s*$", ln)
            if m and not ln.strip().startswith("#"):
                T["rl_ops"][m.group(1)] = {"time": m.group(3), "share": m.group(4), "bound": m.group(5),
                                           "intensity": m.group(6), "rate": m.group(7)}
            m = re.match(r"^\s+#(\S+)\s+(\S+)\s+(.*?)\s+(" + TIME + r")\s+(\d+(?:\.\d+)?%)\s+(\w+)\s+I=(\S+)\s*$", ln)
            if m:
                T["top_nodes"][m.group(1)] = {"op": m.group(2), "time": m.group(4), "share": m.group(5),
                                              "bound": m.group(6), "intensity": m.group(7)}
        if sec == "bottlenecks":
            m = re.match(r"^  (\S+)\s+(\d+)\s+(≥ )?(" + TIME + r")\s+(\d+(?:\.\d+)?%)\s+(\d+(?:\.\d+)?%)\s+(\w+)\s*$", ln)
            if m:
                T["bn_ops"][m.group(1)] = {"time": m.group(4), "share": m.group(5), "bytes_share": m.group(6),
                                           "bound": m.group(7)}
            # advice paragraphs: lines indented 6 (wrapped), joined
            if re.match(r"^ {6}\S", ln):
                if para is None:
                    para = []
                    T["advice"].append(para)
                para.append(ln.strip())
            else:
                para = None
        else:
            para = None
        if sec == "llm":
            m = re.match(r"^\s+Decode\s+(\S+ \S+) per token -> (\S+(?: \S)?) tokens/s at batch (\d+).*?, (\S+%) of it "
                         r"memory-bound(?: \((.*)\))?", ln)
            m3 = re.match(r"^\s+Decode\s+(\S+ \S+) per token -> (\S+(?: \S)?) tokens/s at batch (\d+).*?, limited by "
                          r"(GPU fill|compute|memory|dispatch) \((\S+%) of it\)(?: \((.*)\))?", ln)
            if m3:
                T["llm_decode"] = {"latency": m3.group(1), "tokens_per_s": m3.group(2), "batch": int(m3.group(3)),
                                   "bound": {"GPU fill": "fill"}.get(m3.group(4), m3.group(4)),
                                   "bound_share": m3.group(5), "paren": m3.group(6) or ""}
            if m:
                T["llm_decode"] = {"latency": m.group(1), "tokens_per_s": m.group(2), "batch": int(m.group(3)),
                                   "memory_share": m.group(4), "paren": m.group(5) or ""}
    T["advice"] = [" ".join(p) for p in T["advice"]]
    return T


def load(p):
    out = {}
    with open(p["s_txt"], encoding="utf-8") as f:
        out["s_txt_raw"] = f.read()
    out["s_txt"] = parse_text(out["s_txt_raw"])
    with open(p["s_json"], encoding="utf-8") as f:
        out["s_json"] = json.load(f)
    with open(p["s_md"], encoding="utf-8") as f:
        out["s_md_raw"] = f.read()
    with open(p["r_json"], encoding="utf-8") as f:
        out["r_json"] = json.load(f)
    with open(p["r_md"], encoding="utf-8") as f:
        out["r_md_raw"] = f.read()
    with open(p["trace"], encoding="utf-8") as f:
        out["trace"] = json.load(f)
    out["html"] = parse_html(p["r_html"])
    return out


def report_js_source(H):
    if H.get("js"):
        return H["js"], "report.js inlined in the HTML"
    path = os.path.join(REPO, "templates", "report.js")
    with open(path, encoding="utf-8") as f:
        return f.read(), "templates/report.js"


# ----------------------------------------------------------------------------------------------
# the checks


def oplabel(o):
    return f"{o['domain']}::{o['op_type']}" if o.get("domain") else o["op_type"]


def row_dicts(rj):
    cols = rj["nodes"]["columns"]
    return [dict(zip(cols, r)) for r in rj["nodes"]["rows"]]


def check_all(L: Ledger, D: dict, precision: str | None):
    sj, rj, tr, H, T = D["s_json"], D["r_json"], D["trace"], D["html"], D["s_txt"]
    rl = sj.get("roofline")
    if rl is None:
        L.not_checkable("all", "summary JSON has no roofline (no --hw?)")
        return
    rows = row_dicts(rj)
    rows_by_key = {r["key"]: r for r in rows}
    sj_nodes = {n["key"]: n for n in sj["nodes"]}
    rl_nodes = {}
    for n in rl["nodes"]:  # roofline.nodes carry no op type: the analysis' node list has it
        rl_nodes[n["key"]] = {**n, "op_type": (sj_nodes.get(n["key"]) or rows_by_key.get(n["key"]) or {}).get("op_type", "?")}
    tev = [e for e in tr.get("traceEvents", []) if e.get("ph") == "X" and "key" in (e.get("args") or {})]
    tr_by_key = {e["args"]["key"]: e for e in tev}
    preds = rj["bottlenecks"]["predicted"]
    hw = rj.get("hardware") or {}
    roofs = hw.get("roofs") or []
    bw = hw.get("memory_bandwidth_bytes_per_s")
    html_bn = html_table(H["dom"], "bottleneck-table") or []
    html_bn_by_key = {c[0]["text"]: c for c in html_bn}
    has_measured = bool(rj.get("measured"))
    js, js_name = report_js_source(H)

    # ---- 1. one node, one verdict ---------------------------------------------------------------
    C = "1.node-bound"
    for k, n in rl_nodes.items():
        ref = n["bound"]
        r = rows_by_key.get(k)
        if r is None:
            L.not_checkable(C, "node missing from report JSON rows")
        else:
            L.fact(C, f"#{k} {n['op_type']}", r["bound"] == ref, "summary.json roofline.nodes", ref,
                   "report.json nodes.rows", r["bound"])
        e = tr_by_key.get(k)
        if e is None:
            L.not_checkable(C, "node missing from trace")
        else:
            L.fact(C, f"#{k} {n['op_type']}", e["args"].get("bound") == ref, "summary.json roofline.nodes", ref,
                   "trace args.bound", e["args"].get("bound"))
    for b in preds:
        ref = rl_nodes.get(b["key"], {}).get("bound")
        L.fact(C, f"#{b['key']} {b['op_type']}", b["bound"] == ref if ref else None, "summary.json roofline.nodes", ref,
               "report.json bottlenecks.predicted", b["bound"])
        m = re.match(r"^(\w+)-bound|^(fills) \S+ of \d+ SMs|^(too small to fill)", b.get("why") or "")
        said = (m.group(1) or ("fill" if m.group(2) or m.group(3) else None)) if m else None
        L.fact(C, f"#{b['key']} {b['op_type']}", (said == b["bound"]) if m else None,
               "report.json bottlenecks.predicted.bound", b["bound"], "its why text", said)
        hrow = html_bn_by_key.get(b["key"])
        if hrow is None:
            L.not_checkable(C, "row missing from HTML bottleneck-table")
        else:
            badge = next((c["badge"] for c in hrow if c["badge"]), None)
            L.fact(C, f"#{b['key']} {b['op_type']}", badge == b["bound"], "report.json bottlenecks.predicted", b["bound"],
                   "HTML bottleneck-table badge", badge)
    for k, t in T["top_nodes"].items():
        ref = rl_nodes.get(k, {}).get("bound")
        L.fact(C, f"#{k} {t['op']}", t["bound"] == ref if ref else None, "summary.json roofline.nodes", ref,
               "summary text top nodes", t["bound"])
    if not T["top_nodes"]:
        L.not_checkable(C, "no 'Top nodes by predicted time' lines in the text")
    # the HTML node-table bound filter offers every verdict the rows carry
    m = re.search(r"if \(hasPred\) \{ \[([^\]]*)\]\.forEach", js or "")
    if m:
        offered = set(re.findall(r"'(\w+)'", m.group(1)))
        for v in sorted({r["bound"] for r in rows if r["bound"]}):
            L.fact(C, f"HTML bound filter offers '{v}'", v in offered, "report.json rows carry", v,
                   f"{js_name} filter options", "/".join(sorted(offered)))
    else:
        L.not_checkable(C, "bound filter options not found in report.js")

    # op type verdicts
    C = "1.optype-bound"
    rl_ops = {o["op_type"]: o for o in rl["by_op_type"]}
    node_bound_time = collections.defaultdict(collections.Counter)  # op -> bound -> trace time
    for e in tev:
        if "/" in e["args"]["key"]:
            continue
        node_bound_time[e["args"]["op_type"]][e["args"].get("bound")] += e["args"].get("predicted_s") or 0.0
    srcs = []
    bn = sj.get("bottlenecks") or {}
    srcs.append(("summary.json bottlenecks.by_op_type", {o["op_type"]: o["bound"] for o in bn.get("by_op_type", [])}))
    srcs.append(("report.json by_op_type", {o["op_type"]: o["bound"] for o in rj["by_op_type"]}))
    srcs.append(("report.json bottleneck_groups.by_op_type",
                 {o["op_type"]: o["bound"] for o in (rj.get("bottleneck_groups") or {}).get("by_op_type", [])}))
    srcs.append(("summary text roofline table", {k: v["bound"] for k, v in T["rl_ops"].items()}))
    srcs.append(("summary text bottleneck table", {k: v["bound"] for k, v in T["bn_ops"].items()}))
    mdb = {}
    for cells in md_tables(D["s_md_raw"]):
        m = re.match(r"^op type (\S+) \((\w+)\)$", cells[0])
        if m:
            mdb[m.group(1)] = m.group(2)
    srcs.append(("summary.md bottleneck table", mdb))
    rmdb = {}
    for cells in md_tables(D["r_md_raw"]):
        m = re.match(r"^op type (\S+) \((\w+)\)$", cells[0])
        if m:
            rmdb[m.group(1)] = m.group(2)
    srcs.append(("report.md bottleneck table", rmdb))
    hg = html_table(H["dom"], "group-op-table") or []
    srcs.append(("HTML group-op-table badge",
                 {c[0]["text"].split("::")[-1]: next((x["badge"] for x in c if x["badge"]), None) for c in hg}))
    tmaj = {}
    for op, cnt in node_bound_time.items():
        if sum(cnt.values()) > 0:
            tmaj[op] = max(cnt.items(), key=lambda kv: kv[1])[0]
    srcs.append(("trace nodes' verdicts (most of the op type's time)", tmaj))
    for op, o in rl_ops.items():
        for name, mp in srcs:
            if op in mp:
                L.fact(C, f"op {op}", mp[op] == o["bound"], "summary.json roofline.by_op_type", o["bound"], name, mp[op])
    for name, mp in srcs:
        if not mp:
            L.not_checkable(C, f"{name}: no op type verdicts found")

    # share of the time by verdict
    C = "1.bound-share"
    lat = rl["latency_s"]
    tot = sum((e["args"].get("predicted_s") or 0.0) for e in tev if "/" not in e["args"]["key"])
    by_b = collections.Counter()
    for e in tev:
        if "/" not in e["args"]["key"]:
            by_b[e["args"].get("bound")] += e["args"].get("predicted_s") or 0.0
    LIMS = [b for b in ("compute", "fill", "memory", "dispatch") if f"{b}_bound_time_s" in rl]
    stated = {b: rl[f"{b}_bound_time_s"] / lat if lat else None for b in LIMS}
    for b in LIMS:
        if tot and stated[b] is not None:
            L.fact(C, f"{b}-bound share of node time", abs(stated[b] - by_b[b] / tot) <= 0.0005 + 1e-9,
                   "summary.json roofline (x_bound_time_s / latency)", stated[b], "trace (time of nodes with that bound)",
                   by_b[b] / tot)
        key = f"{b}_share"
        if key not in T and "limited_line" in T and stated[b] == 0:
            L.fact(C, f"{b}-bound share of node time", True, "summary.json roofline", stated[b], "summary text",
                   "(not listed: no time)")
        elif key in T:
            L.fact(C, f"{b}-bound share of node time", printed_ok(stated[b], T[key]),
                   "summary.json roofline", stated[b], "summary text", T[key])
        else:
            L.not_checkable(C, "no 'Compute-bound x% of node time' line in the text")
    # the bottleneck groups' time by limiter (node-level sums: a group's own verdict is the limiter holding most)
    gb = collections.Counter()
    for o in bn.get("by_op_type", []):
        for b in LIMS:
            gb[b] += o.get(f"{b}_s") or 0.0
    gtot = sum(o.get("time_s") or 0.0 for o in bn.get("by_op_type", []))
    if gtot:
        for b in LIMS:
            L.fact(C, f"{b}-bound share of node time", abs(stated[b] - gb[b] / gtot) <= 0.0005 + 1e-9,
                   "summary.json roofline", stated[b], f"summary.json bottlenecks.by_op_type ({b}_s summed)",
                   gb[b] / gtot)
    llm = (sj.get("llm") or {}).get("figures") or {}
    dec = llm.get("decode") or {}
    if "bound" in dec and dec.get("bound") and dec["bound"] != "none":
        b = dec["bound"]
        L.fact(C, "LLM decode limiter share", abs(dec["bound_share"] - (stated.get(b) or 0)) <= 0.0005,
               "summary.json llm.figures.decode.bound_share", dec["bound_share"], f"summary.json roofline {b}_bound_time_s/latency",
               stated.get(b))
        if "llm_decode" in T and "bound" in T["llm_decode"]:
            L.fact(C, "LLM decode limiter", T["llm_decode"]["bound"] == b, "summary.json llm decode.bound", b,
                   "summary text LLM 'Decode' line", T["llm_decode"]["bound"])
    if "memory_bound_share" in dec and "bound" not in dec:
        L.fact(C, "LLM decode memory-bound share", abs(dec["memory_bound_share"] - (stated["memory"] or 0)) <= 0.0005,
               "summary.json llm.figures.decode.memory_bound_share", dec["memory_bound_share"],
               "summary.json roofline memory_bound_time_s/latency", stated["memory"])
        if tot:
            L.fact(C, "LLM decode memory-bound share", abs(dec["memory_bound_share"] - by_b["memory"] / tot) <= 0.0005,
                   "summary.json llm.figures.decode.memory_bound_share", dec["memory_bound_share"],
                   "trace (time of memory-bound nodes)", by_b["memory"] / tot)
        if "llm_decode" in T:
            L.fact(C, "LLM decode memory-bound share", printed_ok(dec["memory_bound_share"], T["llm_decode"]["memory_share"]),
                   "summary.json llm decode", dec["memory_bound_share"], "summary text LLM 'Decode' line",
                   T["llm_decode"]["memory_share"])
        else:
            L.not_checkable(C, "no LLM 'Decode' line in the text")

    # ---- 2. share of peak -------------------------------------------------------------------------
    C = "2.share-of-peak"
    for b in preds:
        r = rows_by_key.get(b["key"])
        subj = f"#{b['key']} {b['op_type']} ({b['dtype']})"
        if r is None:
            L.not_checkable(C, "bottleneck row without a node row")
            continue
        ops = (r["flops"] or 0) + (r["int_ops"] or 0)
        roof = roof_for(roofs, b["dtype"])
        peak = roof["peak_ops_per_s"] if roof else (hw.get("peak_flops_per_s") or {}).get(canon(b["dtype"]))
        peak_src = f"roof '{roof['dtype']}'" if roof else f"spec peak_flops_per_s[{canon(b['dtype'])}]"
        t = b["predicted_s"]
        if peak is None or not t:
            L.not_checkable(C, f"no page peak for dtype {b['dtype']}")
            continue
        computed = ops / t / peak
        s = b["attained_share_of_peak"]
        if s is None:
            L.not_checkable(C, "attained_share_of_peak is null" + (" (no arithmetic)" if ops == 0 else " (ops > 0)"))
        else:
            L.fact(C, subj, abs(s - computed) <= 0.01 * max(computed, 1e-12), "report.json attained_share_of_peak", s,
                   f"ops/predicted_s/peak ({peak_src})", computed, note=f"peak {peak:.4g}, ops {ops}, predicted {t:.4g} s")
            hrow = html_bn_by_key.get(b["key"])
            if hrow is not None:
                idx = 7 + (1 if has_measured else 0)  # #, node, op type, predicted, share, [measured], bound, intensity, of peak
                cell = hrow[idx]["text"] if len(hrow) > idx else None
                L.fact(C, subj, printed_ok(s, cell), "report.json attained_share_of_peak", s, "HTML 'of peak' cell", cell)
        why = b.get("why") or ""
        m = re.search(r"attains (\d+(?:\.\d+)?)% of peak", why)
        if m:
            L.fact(C, subj, abs(float(m.group(1)) / 100 - computed) <= 0.0005 + 0.01 * computed,
                   "why 'attains x% of peak'", m.group(1) + "%", f"ops/predicted_s/peak ({peak_src})", computed)
        m = re.search(r"runs at the (\S+) peak", why)
        if m:
            L.fact(C, subj, computed >= 0.99, "why 'runs at the <dtype> peak'", "≈100%",
                   f"ops/predicted_s/peak ({peak_src})", computed)
            L.fact(C, subj, canon(m.group(1)) == canon(b["dtype"]), "why names the peak of", m.group(1),
                   "row dtype", b["dtype"])

    # a node's achieved rate (its ops over its predicted time) cannot beat the attainable rate it is given
    for k, n in rl_nodes.items():
        if n.get("time_s") and n.get("ops") and n.get("attainable_ops_per_s"):
            ach = n["ops"] / n["time_s"]
            L.fact("2b.attainable-rate", f"#{k} {n['op_type']} ({n['bound']})", ach <= n["attainable_ops_per_s"] * 1.001,
                   "summary.json roofline.nodes ops/time_s", ach, "its attainable_ops_per_s", n["attainable_ops_per_s"],
                   note=f"{ach / n['attainable_ops_per_s']:.3g}× attainable")

    # ---- 3. one ridge per page ------------------------------------------------------------------------
    C = "3.ridge"
    ref_ridge = {}
    for r in roofs:
        for p in str(r["dtype"]).split("/"):
            ref_ridge[canon(p)] = r["ridge_ops_per_byte"]
        if bw:
            L.fact(C, f"roof {r['dtype']}", close(r["ridge_ops_per_byte"], r["peak_ops_per_s"] / bw, 1e-6),
                   "hardware.roofs ridge", r["ridge_ops_per_byte"], "its peak / bandwidth", r["peak_ops_per_s"] / bw)
    if not roofs:
        L.not_checkable(C, "report JSON has no hardware.roofs")
    fp32 = ref_ridge.get("fp32")
    for src, v in [("report.json roofline.ridge_fp32_flops_per_byte", (rj.get("roofline") or {}).get("ridge_fp32_flops_per_byte")),
                   ("summary.json roofline.ridge_fp32_flops_per_byte", rl.get("ridge_fp32_flops_per_byte")),
                   ("report.json hardware.ridge_point_flop_per_byte.fp32", (hw.get("ridge_point_flop_per_byte") or {}).get("fp32"))]:
        if fp32 is None or v is None:
            L.not_checkable(C, f"{src}: no fp32 roof on the page or field missing")
        else:
            L.fact(C, "fp32 ridge", close(v, fp32, 1e-6), "hardware.roofs (drawn)", fp32, src, v)
    for dt, v in (hw.get("ridge_point_flop_per_byte") or {}).items():
        if canon(dt) in ref_ridge and canon(dt) != "fp32":
            L.fact(C, f"{dt} ridge", close(v, ref_ridge[canon(dt)], 1e-6), "hardware.roofs (drawn)", ref_ridge[canon(dt)],
                   f"hardware.ridge_point_flop_per_byte.{dt}", v)
    if "ridge" in T:
        val, dt = T["ridge"]
        ref = ref_ridge.get(canon(dt))
        L.fact(C, f"{dt} ridge", printed_ok(ref, val) if ref is not None else None, "hardware.roofs (drawn)", ref,
               "summary text 'Roofline on' header", val)
    for b in preds:
        ref = ref_ridge.get(canon(b["dtype"]))
        subj = f"#{b['key']} {b['op_type']} ({b['dtype']})"
        if ref is None:
            L.not_checkable(C, f"no roof for dtype {b['dtype']}")
            continue
        if b.get("ridge_ops_per_byte") is not None:
            L.fact(C, subj, close(b["ridge_ops_per_byte"], ref, 1e-6), "hardware.roofs (drawn)", ref,
                   "bottlenecks.predicted.ridge_ops_per_byte", b["ridge_ops_per_byte"])
        why = b.get("why") or ""
        m = re.search(r"intensity (\S+) \S+/B is above the ridge", why)
        if m:
            iv = float(m.group(1))
            L.fact(C, subj, iv > ref, "why 'intensity x is above the ridge'", iv, "ridge drawn on the page", ref)
        m = re.search(r"intensity (\S+) \S+/B, (\S+)× below the ridge \((\S+)\)", why)
        if m:
            iv, ratio, rr = float(m.group(1)), float(m.group(2)), m.group(3)
            L.fact(C, subj, printed_ok(ref, rr), "ridge drawn on the page", ref, "why '(ridge x)'", rr)
            L.fact(C, subj, iv < ref, "why 'below the ridge' intensity", iv, "ridge drawn on the page", ref)
    dom = H["dom"]
    card = dom.root.first("div", data_total="intensity_flops_per_byte")
    if card is not None and roofs:
        m = re.search(r"ridge (\S+) on", squash(card.text()))
        L.fact(C, f"{roofs[0]['dtype']} ridge", printed_ok(roofs[0]["ridge_ops_per_byte"], m.group(1)) if m else None,
               "hardware.roofs[0]", roofs[0]["ridge_ops_per_byte"], "HTML intensity card", m.group(1) if m else None)
    sec = dom.root.first("section", id="roofline")
    if sec is not None:
        cap = squash((sec.first("div", cls="caption") or sec).text())
        for dt, val in re.findall(r"(\S+) peak \S+ \S+ \(ridge (\S+) ", cap):
            r = next((x for x in roofs if x["dtype"] == dt), None)
            L.fact(C, f"{dt} ridge", printed_ok(r["ridge_ops_per_byte"], val) if r else None, "hardware.roofs", 
                   r["ridge_ops_per_byte"] if r else None, "HTML roofline caption", val)

    # ---- 4. chart points on or under their roof ------------------------------------------------------
    C = "4.chart-point"
    colors = (H.get("view") or {}).get("colors") or {}
    if not roofs or not bw:
        L.not_checkable(C, "no roofs or bandwidth in report JSON")
    else:
        if hw.get("memory_levels"):
            L.not_checkable(C, "spec has memory levels: chart draws DRAM bandwidth only (points checked against it)")
        seen = {}
        drawn = []
        for i, r in enumerate(rows):
            if "/" in str(r["key"]):
                continue
            tm, o = r["predicted_s"], (r["flops"] or 0) + (r["int_ops"] or 0)
            x = r["run_intensity"] if "run_intensity" in r else r["intensity"]
            y = r["attained_ops_per_s"] if "attained_ops_per_s" in r else (o / tm if tm else None)
            if tm is None or not tm > 0 or not o > 0 or x is None or not x > 0 or y is None or not y > 0:
                continue
            op = r["op_type"] if r["op_type"] in colors else "__other__"
            spot = (op, round(math.log10(x) * 200), round(math.log10(y) * 200))
            if spot in seen:
                seen[spot]["n"] += 1
                continue
            p = {"x": x, "y": y, "row": r, "n": 1}
            seen[spot] = p
            drawn.append(p)
        for p in drawn:
            r = p["row"]
            dt = (rl_nodes.get(r["key"]) or {}).get("dtype")
            roof = roof_for(roofs, dt) if dt else None
            how = f"roof {roof['dtype']}" if roof else "highest roof (node dtype has none)"
            if roof is None:
                roof = max(roofs, key=lambda q: q["peak_ops_per_s"])
            bws = [bw] + [lv["bandwidth_bytes_per_s"] for lv in hw.get("level_roofs") or []]
            lim = min(roof["peak_ops_per_s"], p["x"] * max(bws))
            subj = f"#{r['key']} {r['op_type']} point x={p['x']:.4g} (×{p['n']} nodes)"
            L.fact(C, subj, p["y"] <= lim * 1.001, f"y = ops/predicted_s", p["y"], f"min(peak, x·bw) on {how}", lim,
                   note=f"{p['y'] / lim:.3g}× the roof")
            # position vs verdict: the page says 'points on the slope are memory-bound, on the flat roof compute-bound'
            plain = not any((hw.get("efficiency") or {}).values())
            if r["bound"] in ("compute", "memory") and plain:  # the side-of-ridge rule holds on a plain roofline
                pos = "compute" if p["x"] >= roof["ridge_ops_per_byte"] else "memory"
                L.fact("4.point-side", f"#{r['key']} {r['op_type']} x={p['x']:.4g}", pos == r["bound"],
                       "side of the drawn ridge", pos, "row bound (tooltip)", r["bound"],
                       note=f"ridge {roof['ridge_ops_per_byte']:.3g} of roof {roof['dtype']}")

    # ---- 5. advice vs precision --------------------------------------------------------------------
    if precision:
        C = "5.advice-precision"
        advice = []
        for src, obj in [("summary.json bottlenecks", sj.get("bottlenecks") or {}),
                         ("report.json bottleneck_groups", rj.get("bottleneck_groups") or {})]:
            for part in ("by_op_type", "block_kinds", "opportunities"):
                for g in obj.get(part, []):
                    if g.get("action"):
                        advice.append((f"{src}.{part} {g.get('op_type') or g.get('label') or g.get('id')}", g["action"]))
        for b in preds:
            advice.append((f"report.json bottlenecks.predicted #{b['key']}", b.get("why") or ""))
        for i, a in enumerate(T["advice"]):
            advice.append((f"summary text advice paragraph {i + 1}", a))
        for name, raw in [("summary.md", D["s_md_raw"]), ("report.md", D["r_md_raw"])]:
            for cells in md_tables(raw):
                if len(cells) >= 4 and (cells[0].startswith("op type") or "block" in cells[0] or "×" in cells[0]):
                    advice.append((f"{name} row '{cells[0][:40]}'", cells[-1]))
                elif re.fullmatch(r"\d+", cells[0]) and len(cells) >= 6:
                    advice.append((f"{name} slowest #{cells[0]}", cells[-1]))
        for td in dom.root.find_all("td", cls="why"):
            advice.append(("HTML why/what-to-do cell", squash(td.text())))
        pat = re.compile(r"--precision\s+(?:[\w]+/)*" + re.escape(precision) + r"\b")
        soft = re.compile(r"(?<!--precision )(?<![\w/-])" + re.escape(precision) + r"(?![\w/])(?! peak)")
        for src, text in advice:
            m = pat.search(text)
            L.fact(C, src, m is None, f"run with --precision {precision}; advice says", (m.group(0) if m else "-"),
                   "advice text", squash(text)[:110])
            m2 = soft.search(text) if m is None else None
            L.fact("5b.advice-mentions-dtype", src, m2 is None, f"run with --precision {precision}; advice names",
                   precision if m2 else "-", "advice text", squash(text)[:110])

    # ---- 6. 'Where the cost goes' ranks by predicted time ------------------------------------------
    C = "6.cost-chart-rank"
    m = re.search(r"R\.by_op_type\.slice\(0,\s*(\d+)\)", js or "")
    cc = rj.get("cost_chart")
    if cc and hw:
        bars = cc["bars"]
        named = [b for b in bars if b["kind"] == "op_type"]
        other = sum(b["predicted_share"] for b in bars if b["kind"] == "other")
        for b in named:
            L.fact(C, f"bar '{b['label']}'", not (b["predicted_share"] < 0.0005 and other > 0.05), "its % of predicted time",
                   b["predicted_share"], "'other' bucket", other)
        for b1, b2 in zip(named, named[1:]):
            L.fact("6b.cost-chart-order", f"bar '{b2['label']}'", b1["predicted_share"] >= b2["predicted_share"],
                   "bar above it", b1["predicted_share"], "this bar", b2["predicted_share"])
        hidden = [o for o in rj["by_op_type"] if o["op_type"] not in {b["label"].split("::")[-1] for b in named}]
        if named:
            for o in hidden:
                L.fact("6b.cost-chart-order", f"op type '{oplabel(o)}' in a folded bar", (o.get("predicted_share") or 0)
                       <= named[-1]["predicted_share"], "its % of predicted time", o.get("predicted_share"),
                       "smallest named bar", named[-1]["predicted_share"])
    elif not m:
        L.not_checkable(C, "bar count not found in report.js costChart")
    elif not hw:
        L.not_checkable(C, "no --hw: no predicted shares")
    else:
        nbar = int(m.group(1))
        ops = rj["by_op_type"]
        top, rest = ops[:nbar], ops[nbar:]
        other = sum((o.get("predicted_share") or 0.0) for o in rest)
        best_rest = max(rest, key=lambda o: o.get("predicted_share") or 0.0) if rest else None
        for o in top:
            ps = o.get("predicted_share")
            if ps is None:
                L.not_checkable(C, "predicted_share null")
                continue
            L.fact(C, f"bar '{oplabel(o)}'", not (ps < 0.0005 and other > 0.05), "its % of predicted time", ps,
                   "'other' bucket", other, note=f"a 0.0% bar while 'other' ({len(rest)} op types) holds >5%")
            if best_rest is not None:
                bs = best_rest.get("predicted_share") or 0.0
                L.fact("6b.cost-chart-order", f"bar '{oplabel(o)}'", not (ps < bs and other > 0.05),
                       "its % of predicted time", ps, "largest op type hidden in 'other'", bs, note=oplabel(best_rest))

    # ---- 7. per-op-type predicted time and share -------------------------------------------------------
    C = "7.optype-time"
    sums = collections.defaultdict(float)
    for n in rl_nodes.values():
        if "/" not in n["key"] and n["time_s"]:
            sums[n["op_type"]] += n["time_s"]
    tsums = collections.defaultdict(float)
    for e in tev:
        if "/" not in e["args"]["key"]:
            tsums[e["args"]["op_type"]] += e["args"].get("predicted_s") or 0.0
    json_srcs = [
        ("summary.json bottlenecks.by_op_type", {o["op_type"]: (o["time_s"], o["share"]) for o in bn.get("by_op_type", [])}),
        ("report.json by_op_type", {o["op_type"]: (o["predicted_s"], o["predicted_share"]) for o in rj["by_op_type"]}),
        ("report.json bottleneck_groups.by_op_type",
         {o["op_type"]: (o["time_s"], o["share"]) for o in (rj.get("bottleneck_groups") or {}).get("by_op_type", [])}),
        ("sum of summary.json roofline.nodes", {k: (v, v / lat if lat else None) for k, v in sums.items()}),
        ("sum of trace events", {k: (v, v / lat if lat else None) for k, v in tsums.items()}),
    ]
    txt_srcs = [("summary text roofline table", {k: (v["time"], v["share"]) for k, v in T["rl_ops"].items()}),
                ("summary text bottleneck table", {k: (v["time"], v["share"]) for k, v in T["bn_ops"].items()})]
    sm = {}
    for cells in md_tables(D["s_md_raw"]):
        mm = re.match(r"^op type (\S+) \((\w+)\)$", cells[0])
        if mm and len(cells) >= 3:
            sm[mm.group(1)] = (None, cells[2])
    txt_srcs.append(("summary.md bottleneck table", sm))
    rm, rmo = {}, {}
    for cells in md_tables(D["r_md_raw"]):
        mm = re.match(r"^op type (\S+) \((\w+)\)$", cells[0])
        if mm and len(cells) >= 3:
            rm[mm.group(1)] = (None, cells[2])
    hdr = None
    for cells in md_tables(D["r_md_raw"]):
        if cells and cells[0] == "op type":
            hdr = cells
            continue
        if hdr and "% time" in hdr and len(cells) == len(hdr) and cells[0] in rl_ops:
            rmo[cells[0]] = (None, cells[hdr.index("% time")])
    txt_srcs.append(("report.md bottleneck table", rm))
    txt_srcs.append(("report.md op-type table", rmo))
    ho = {}
    for c in html_table(dom, "op-table") or []:
        if len(c) >= 10:
            ho[c[0]["text"].split("::")[-1]] = (c[8]["text"], c[9]["text"])
    txt_srcs.append(("HTML op-table", ho))
    hgo = {}
    for c in hg:
        if len(c) >= 4:
            hgo[c[0]["text"].split("::")[-1]] = (c[2]["text"], c[3]["text"])
    txt_srcs.append(("HTML group-op-table", hgo))
    for op, o in rl_ops.items():
        for name, mp in json_srcs:
            if op not in mp:
                continue
            t, s = mp[op]
            L.fact(C, f"op {op} time", close(t, o["time_s"], 1e-6, 1e-12), "summary.json roofline.by_op_type", o["time_s"], name, t)
            L.fact(C, f"op {op} share", close(s, o["share"], 1e-6, 1e-12) if s is not None else None,
                   "summary.json roofline.by_op_type", o["share"], name, s)
        for name, mp in txt_srcs:
            if op not in mp:
                continue
            t, s = mp[op]
            if t is not None:
                L.fact(C, f"op {op} time", printed_ok(o["time_s"], t), "summary.json roofline.by_op_type", o["time_s"], name, t)
            if s is not None:
                L.fact(C, f"op {op} share", printed_ok(o["share"], s), "summary.json roofline.by_op_type", o["share"], name, s)
    for name, mp in json_srcs + txt_srcs:
        if not mp:
            L.not_checkable(C, f"{name}: no per-op-type times found")
    ssum = sum(o["share"] for o in rl["by_op_type"])
    L.fact(C, "shares of roofline.by_op_type add up", abs(ssum - 1) <= 1e-6 or not rl["by_op_type"],
           "sum of shares", ssum, "expected", 1.0)

    # ---- 8. latency and totals ---------------------------------------------------------------------------
    C = "8.totals"
    st = sj["totals"]
    rt = rj["totals"]
    for k in ("macs", "flops", "int_ops", "params", "bytes_read", "bytes_written"):
        L.fact(C, k, st.get(k) == rt.get(k), "summary.json totals", st.get(k), "report.json totals", rt.get(k))
        if k in T:
            L.fact(C, k, T[k] == st.get(k), "summary.json totals", st.get(k), "summary text (exact)", T[k])
        else:
            L.not_checkable(C, f"summary text: no exact {k}")
        cardn = dom.root.first("div", data_total=k)
        if cardn is not None:
            v = float(cardn.attrs.get("data-value"))
            L.fact(C, k, v == st.get(k), "summary.json totals", st.get(k), "HTML card data-value", v)
    if "intensity" in T:
        L.fact(C, "intensity", printed_ok(st.get("intensity_flops_per_byte"), T["intensity"]), "summary.json totals",
               st.get("intensity_flops_per_byte"), "summary text", T["intensity"])
    mem = sj["memory"]
    for k, tk, rk in [("activation_peak_bytes", "activation_peak", "activation_peak_bytes"),
                      ("total_bytes", "total_memory", "total_memory_bytes")]:
        L.fact(C, k, mem[k] == rt.get(rk), "summary.json memory", mem[k], f"report.json totals.{rk}", rt.get(rk))
        if tk in T:
            L.fact(C, k, printed_ok(mem[k], T[tk]), "summary.json memory", mem[k], "summary text", T[tk])
        cardn = dom.root.first("div", data_total=rk)
        if cardn is not None:
            L.fact(C, k, float(cardn.attrs["data-value"]) == mem[k], "summary.json memory", mem[k], "HTML card", cardn.attrs["data-value"])
    for name, raw in [("summary.md", D["s_md_raw"]), ("report.md", D["r_md_raw"])]:
        for cells in md_tables(raw):
            if len(cells) != 2:
                continue
            if cells[0] == "MACs":
                L.fact(C, "macs", printed_ok(st["macs"], cells[1]), "summary.json totals", st["macs"], name, cells[1])
            if cells[0] == "FLOPs":
                L.fact(C, "flops", printed_ok(st["flops"], cells[1]), "summary.json totals", st["flops"], name, cells[1])
            if cells[0] == "MACs / FLOPs":
                a, b2 = cells[1].split(" / ")
                L.fact(C, "macs", printed_ok(st["macs"], a), "summary.json totals", st["macs"], name, a)
                L.fact(C, "flops", printed_ok(st["flops"], b2), "summary.json totals", st["flops"], name, b2)
            if cells[0].startswith("Activation peak") or cells[0].startswith("Peak activations"):
                a, b2 = cells[1].split(" / ")
                L.fact(C, "activation_peak_bytes", printed_ok(mem["activation_peak_bytes"], a), "summary.json memory",
                       mem["activation_peak_bytes"], name, a)
                L.fact(C, "total_bytes", printed_ok(mem["total_bytes"], b2), "summary.json memory", mem["total_bytes"], name, b2)
            if cells[0].startswith("Predicted latency"):
                mm = re.match(r"^(\S+ \S+?)(?:,| \(|$)", cells[1])
                L.fact(C, "latency", printed_ok(lat, mm.group(1)) if mm else None, "summary.json roofline.latency_s", lat,
                       name, mm.group(1) if mm else cells[1])
                mm = re.search(r", (\S+(?: \S)?) items/s at batch", cells[1])
                if mm:
                    L.fact(C, "throughput", printed_ok(rl["throughput_items_per_s"], mm.group(1)),
                           "summary.json roofline", rl["throughput_items_per_s"], name, mm.group(1))
    # latency
    lat_srcs = [("report.json totals.predicted_latency_s", rt.get("predicted_latency_s")),
                ("report.json roofline.latency_s", (rj.get("roofline") or {}).get("latency_s")),
                ("summary.json bottlenecks.latency_s", bn.get("latency_s")),
                ("summary.json bottlenecks.node_time_s + run_overhead", (bn.get("node_time_s") or 0) + (bn.get("run_overhead_s") or 0)
                 if bn.get("node_time_s") is not None else None),
                ("trace otherData.predicted_latency_s", (tr.get("otherData") or {}).get("predicted_latency_s")),
                ("trace end (max ts+dur)", max((e["ts"] + e["dur"] for e in tev), default=0) * 1e-6 if tev else None),
                ("sum of roofline.nodes time_s + run_overhead", sum(n["time_s"] or 0 for n in rl["nodes"] if "/" not in n["key"])
                 + (rl.get("run_overhead_s") or 0)),
                ("the four limiters' times + run overhead", sum(rl.get(f"{b}_bound_time_s", 0.0) for b in
                                                                ("compute", "fill", "memory", "dispatch"))
                 + (rl.get("run_overhead_s") or 0)),
                ("summary.json llm decode.latency_s", dec.get("latency_s")),
                ("report.json llm decode.latency_s", (((rj.get("llm") or {}).get("figures") or {}).get("decode") or {}).get("latency_s"))]
    for name, v in lat_srcs:
        if v is None:
            if "llm" not in name:
                L.not_checkable(C, f"latency: {name} missing")
            continue
        L.fact(C, "latency", close(v, lat, 1e-6), "summary.json roofline.latency_s", lat, name, v)
    if "latency" in T:
        L.fact(C, "latency", printed_ok(lat, T["latency"]), "summary.json roofline.latency_s", lat, "summary text", T["latency"])
        L.fact(C, "throughput", printed_ok(rl["throughput_items_per_s"], T["throughput"]), "summary.json roofline",
               rl["throughput_items_per_s"], "summary text", T["throughput"] + "/s")
    else:
        L.not_checkable(C, "no 'Predicted latency' line in the text")
    L.fact(C, "throughput", close(rl["throughput_items_per_s"], rl["batch"] / lat, 1e-6), "summary.json throughput",
           rl["throughput_items_per_s"], "batch / latency", rl["batch"] / lat)
    if T.get("bn_node_time"):
        L.fact(C, "node time", printed_ok(bn.get("node_time_s"), T["bn_node_time"]), "summary.json bottlenecks.node_time_s",
               bn.get("node_time_s"), "summary text 'shares of the x of node time'", T["bn_node_time"])
    cardn = dom.root.first("div", data_total="predicted_latency_s")
    if cardn is not None:
        L.fact(C, "latency", close(float(cardn.attrs["data-value"]), lat, 1e-9), "summary.json roofline.latency_s", lat,
               "HTML latency card data-value", cardn.attrs["data-value"])
        val = squash((cardn.first("div", cls="value") or cardn).text())
        L.fact(C, "latency", printed_ok(lat, val), "summary.json roofline.latency_s", lat, "HTML latency card", val)
        det = squash((cardn.first("div", cls="detail") or cardn).text())
        mm = re.match(r"^(\S+(?: \S)?) items/s", det)
        L.fact(C, "throughput", printed_ok(rl["throughput_items_per_s"], mm.group(1)) if mm else None,
               "summary.json roofline", rl["throughput_items_per_s"], "HTML latency card detail", mm.group(1) if mm else det)
    else:
        L.not_checkable(C, "HTML: no predicted latency card")
    lead = dom.root.first("p", id="bottleneck-groups-lead")
    if lead is not None:
        mm = re.search(r"Shares are of the (\S+ \S+) of node time", squash(lead.text()))
        L.fact(C, "node time", printed_ok(bn.get("node_time_s"), mm.group(1)) if mm else None,
               "summary.json bottlenecks.node_time_s", bn.get("node_time_s"), "HTML bottleneck lead", mm.group(1) if mm else None)
    # lower-bound claims
    lb = bool(rl.get("latency_is_lower_bound"))
    claims = []
    if "llm_decode" in T and T["llm_decode"]["paren"]:
        claims.append(("summary text LLM 'Decode' line", T["llm_decode"]["paren"]))
    llmsec = dom.root.first("section", id="llm")
    if llmsec is not None:
        for card in llmsec.find_all("div", cls="card"):
            tx = squash(card.text())
            if "tokens/s" in tx and "per step" in tx:
                claims.append(("HTML LLM decode card", tx))
    for name, tx in claims:
        says_lb = "lower bound on time" in tx
        L.fact(C, "latency is a lower bound?", says_lb == lb, "summary.json roofline.latency_is_lower_bound", lb,
               name, "lower bound" if says_lb else "not stated as lower bound", note=tx[:100])
    if "llm_decode" in T and dec:
        L.fact(C, "LLM decode latency", printed_ok(dec["latency_s"], T["llm_decode"]["latency"]), "summary.json llm decode",
               dec["latency_s"], "summary text", T["llm_decode"]["latency"])
        L.fact(C, "LLM tokens/s", printed_ok(dec["tokens_per_s"], T["llm_decode"]["tokens_per_s"]), "summary.json llm decode",
               dec["tokens_per_s"], "summary text", T["llm_decode"]["tokens_per_s"])
        L.fact(C, "LLM tokens/s", close(dec["tokens_per_s"], dec["batch"] * dec.get("new", 1) / dec["latency_s"], 1e-6),
               "summary.json llm decode.tokens_per_s", dec["tokens_per_s"], "batch·new / latency",
               dec["batch"] * dec.get("new", 1) / dec["latency_s"])
        L.fact(C, "LLM decode macs", dec["macs"] == st["macs"], "summary.json totals.macs", st["macs"], "llm decode.macs", dec["macs"])
        L.fact(C, "LLM decode bytes", dec["bytes"] == st["bytes_read"] + st["bytes_written"], "summary.json totals read+written",
               st["bytes_read"] + st["bytes_written"], "llm decode.bytes", dec["bytes"])
        lm = llm.get("memory") or {}
        if lm:
            L.fact(C, "LLM total memory", lm.get("total_bytes") == mem["total_bytes"], "summary.json memory.total_bytes",
                   mem["total_bytes"], "llm figures.memory.total_bytes", lm.get("total_bytes"))

    # ---- 9. one node, one intensity ----------------------------------------------------------------
    C = "9.node-intensity"
    ikey = "run_intensity" if rows_by_key and "run_intensity" in next(iter(rows_by_key.values())) else "intensity"
    for k, r in rows_by_key.items():
        ref = r[ikey]
        if ref is None:
            continue
        subj = f"#{k} {r['op_type']}"
        n = rl_nodes.get(k)
        if n is not None and n.get("intensity") is not None:
            L.fact(C, subj, close(n["intensity"], ref, 5e-3), "report.json nodes.rows intensity (chart x)", ref,
                   "summary.json roofline.nodes intensity", n["intensity"])
        e = tr_by_key.get(k)
        if e is not None and e["args"].get("intensity_ops_per_byte") is not None:
            L.fact(C, subj, close(e["args"]["intensity_ops_per_byte"], ref, 5e-3), "report.json nodes.rows intensity (chart x)",
                   ref, "trace args.intensity_ops_per_byte", e["args"]["intensity_ops_per_byte"])
    for b in preds:
        r = rows_by_key.get(b["key"])
        if r is None or r[ikey] is None or b.get("intensity") is None:
            continue
        subj = f"#{b['key']} {b['op_type']}"
        L.fact(C, subj, close(b["intensity"], r[ikey], 5e-3), "report.json nodes.rows intensity (chart x)", r[ikey],
               "bottlenecks.predicted intensity / why", b["intensity"])
    for k, t in T["top_nodes"].items():
        r = rows_by_key.get(k)
        if r is None or r[ikey] is None:
            continue
        L.fact(C, f"#{k} {t['op']}", printed_ok(r[ikey], t["intensity"]), "report.json nodes.rows intensity (chart x)",
               r[ikey], "summary text top nodes I=", t["intensity"])

    # ---- 10. one node, one time ---------------------------------------------------------------------
    C = "10.node-time"
    for k, n in rl_nodes.items():
        r = rows_by_key.get(k)
        subj = f"#{k} {n['op_type']}"
        if r is not None:
            L.fact(C, subj, close(r["predicted_s"], n["time_s"]), "summary.json roofline.nodes time_s", n["time_s"],
                   "report.json rows predicted_s", r["predicted_s"])
        e = tr_by_key.get(k)
        if e is not None:
            L.fact(C, subj, close(e["args"].get("predicted_s"), n["time_s"], 1e-6, 1e-12), "summary.json roofline.nodes time_s",
                   n["time_s"], "trace args.predicted_s", e["args"].get("predicted_s"))
            L.fact(C, subj, close(e["dur"] * 1e-6, n["time_s"] or 0.0, 1e-6, 1e-12), "summary.json roofline.nodes time_s",
                   n["time_s"], "trace dur", e["dur"] * 1e-6)
    for b in preds:
        n = rl_nodes.get(b["key"])
        if n is None:
            continue
        subj = f"#{b['key']} {b['op_type']}"
        L.fact(C, subj, close(b["predicted_s"], n["time_s"], 1e-6), "summary.json roofline.nodes", n["time_s"],
               "bottlenecks.predicted", b["predicted_s"])
        L.fact(C, subj + " share", close(b["share"], n["share"], 1e-6), "summary.json roofline.nodes share", n["share"],
               "bottlenecks.predicted share", b["share"])
        hrow = html_bn_by_key.get(b["key"])
        if hrow is not None:
            L.fact(C, subj, printed_ok(b["predicted_s"], hrow[3]["text"]), "report.json", b["predicted_s"], "HTML bottleneck-table",
                   hrow[3]["text"])
    for k, t in T["top_nodes"].items():
        n = rl_nodes.get(k)
        if n is None:
            continue
        L.fact(C, f"#{k} {t['op']}", printed_ok(n["time_s"], t["time"]), "summary.json roofline.nodes", n["time_s"],
               "summary text top nodes", t["time"])
        L.fact(C, f"#{k} {t['op']} share", printed_ok(n["share"], t["share"]), "summary.json roofline.nodes share",
               n["share"], "summary text top nodes", t["share"])
    for cells in md_tables(D["r_md_raw"]):
        if len(cells) >= 6 and re.fullmatch(r"\d+(?:/\S+)?", cells[0]) and cells[0] in rl_nodes:
            n = rl_nodes[cells[0]]
            L.fact(C, f"#{cells[0]} {n['op_type']}", printed_ok(n["time_s"], cells[3]), "summary.json roofline.nodes",
                   n["time_s"], "report.md slowest nodes", cells[3])

    # ---- 11. the HTML carries the report JSON ----------------------------------------------------------
    C = "11.html-json"
    data = H.get("data")
    if data is None:
        L.not_checkable(C, "no #report-data block in the HTML")
    else:
        for k in sorted(set(rj) | set(data)):
            L.fact(C, f"report key '{k}'", rj.get(k) == data.get(k), "report.json", "(value)" if k in rj else "(absent)",
                   "HTML #report-data", "(different)" if k in data else "(absent)")


# ----------------------------------------------------------------------------------------------


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", help="folder for the outputs and the findings (default: a temporary folder)")
    ap.add_argument("--only", help="comma-separated scenario names (default: all)")
    ap.add_argument("--max-print", type=int, default=0,
                    help="print at most N contradiction lines per scenario and check (0: all; the file has all)")
    ap.add_argument("--jobs", type=int, default=2, help="onnxperf runs in parallel (default 2)")
    a = ap.parse_args(argv)
    outdir = os.path.abspath(a.out) if a.out else tempfile.mkdtemp(prefix="facts_check_")
    os.makedirs(outdir, exist_ok=True)
    only = set(a.only.split(",")) if a.only else None
    scen = [s for s in SCENARIOS if only is None or s[0] in only]
    log: list = []
    t0 = time.time()
    plans = {}
    for name, model, fixed, disc, prec in scen:
        p, args, cmds = produce(name, model, fixed, disc, outdir, log)
        plans[name] = (p, args, cmds, prec, model)
    results = {}
    with cf.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        futs = {ex.submit(run, c, log): (name, i) for name, (p, args, cmds, prec, model) in plans.items()
                for i, c in enumerate(cmds)}
        for f in cf.as_completed(futs):
            name, i = futs[f]
            results[(name, i)] = f.result()
    ledgers = []
    all_lines = []
    for name, (p, args, cmds, prec, model) in plans.items():
        L = Ledger(name)
        failed = [(i, results[(name, i)]) for i in range(len(cmds)) if results[(name, i)][0] != 0]
        print(f"== {name}: onnxperf {{summary,report}} {model} {' '.join(args)}")
        if failed:
            for i, (rc, out, err, _) in failed:
                print(f"   command failed (rc {rc}): {' '.join(cmds[i])}\n   {err.strip()[-400:]}")
            L.not_checkable("all", "an onnxperf command failed")
        else:
            try:
                D = load(p)
                check_all(L, D, prec)
            except Exception as e:  # a parse failure is 'not checkable', loudly
                import traceback
                traceback.print_exc()
                L.not_checkable("all", f"checker error: {e!r}")
        ledgers.append(L)
        per_check = collections.Counter()
        for ln in L.lines:
            c = ln.split()[1]
            per_check[c] += 1
            if a.max_print and per_check[c] > a.max_print:
                continue
            print(ln)
        hidden = sum(max(0, v - a.max_print) for v in per_check.values()) if a.max_print else 0
        if hidden:
            print(f"   ... {hidden} more contradiction lines in {os.path.join(outdir, 'contradictions.txt')}")
        all_lines += L.lines
    print()
    print("per check (scenario: checked / contradictions / not checkable):")
    checks = sorted({c for L in ledgers for c in list(L.checked) + list(L.na)},
                    key=lambda c: (int(re.match(r"(\d+)", c).group(1)) if re.match(r"\d", c) else 99, c))
    for c in checks:
        parts = [f"{L.scenario} {L.checked[c]}/{L.bad[c]}/{L.na[c]}" for L in ledgers]
        print(f"  {c:28s} " + "   ".join(parts))
    print()
    tc = tb = tn = 0
    for L in ledgers:
        n, m, na = sum(L.checked.values()), sum(L.bad.values()), sum(L.na.values())
        tc, tb, tn = tc + n, tb + m, tn + na
        print(f"{L.scenario}: checked {n} facts, {m} contradictions ({na} not checkable)")
    print(f"TOTAL: checked {tc} facts, {tb} contradictions ({tn} not checkable)")
    with open(os.path.join(outdir, "contradictions.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(all_lines) + ("\n" if all_lines else ""))
    with open(os.path.join(outdir, "findings.json"), "w", encoding="utf-8") as f:
        json.dump({"scenarios": [{"name": L.scenario, "checked": dict(L.checked), "contradictions": dict(L.bad),
                                  "not_checkable": dict(L.na),
                                  "not_checkable_reasons": {k: dict(v) for k, v in L.na_reasons.items()},
                                  "facts_by_sources": {k: {p: [n, L.pairs_bad[k][p]] for p, n in v.items()}
                                                       for k, v in L.pairs.items()}}
                                 for L in ledgers],
                   "total": {"checked": tc, "contradictions": tb, "not_checkable": tn},
                   "commands": log, "seconds": round(time.time() - t0, 1)}, f, indent=1, ensure_ascii=False)
    print(f"(outputs, contradictions.txt and findings.json in {outdir}; {time.time() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
