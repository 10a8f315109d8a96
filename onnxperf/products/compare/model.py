"""The comparison model (schema ``onnxperf.compare/1``): plain, JSON-serializable data that every
renderer formats. All figures are computed here, never in a renderer.

Layout:

* ``models``: per model facts and totals (the first is the baseline); ``deltas``: each other model
  against the baseline, absolute and relative;
* ``op_histogram``: node count per op type, one column per model;
* ``comparisons``: one per other model: the alignment (rows and blocks), the explanations, which
  detectors ran, the parameters split by role, and the closing figures (MACs, FLOPs, bytes and
  params deltas split into the explanations that account for them and what is left).

Same models, same options: byte-identical JSON.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import onnx

from onnxperf import __version__
from onnxperf.analysis.compose import compose
from onnxperf.base.errors import OptionError
from onnxperf.cost.request import Request
from onnxperf.graph.loader import LoadedModel, load
from onnxperf.shapes.infer import input_dim_names
from onnxperf.ui.numbers import seconds
from onnxperf.ui.progress import advance
from onnxperf.products.compare.align import KINDS, Alignment, align
from onnxperf.products.compare.explain import Context, Explanation, explain
from onnxperf.patterns.matchers import bn_after
from onnxperf.patterns.side import Side

SCHEMA = "onnxperf.compare/1"

#: totals compared side by side: (key, label, kind) — kind tells renderers how to print it
METRICS = (
    ("params", "Parameters", "count"),
    ("param_bytes", "Model size (weights)", "bytes"),
    ("file_size_bytes", "File size", "bytes"),
    ("macs", "MACs", "count"),
    ("flops", "FLOPs", "count"),
    ("bytes", "Bytes read + written", "bytes"),
    ("intensity_flops_per_byte", "Intensity (FLOP/B)", "ratio"),
    ("activation_peak_bytes", "Peak activation memory", "bytes"),
    ("total_memory_bytes", "Weights + peak activations", "bytes"),
    ("predicted_latency_s", "Predicted latency", "seconds"),
    ("measured_latency_s", "Measured latency", "seconds"),
    ("nodes", "Nodes", "count"),
    ("heavy_nodes", "Heavy nodes (aligned)", "count"),
)

#: which side flag of a model's totals each figure depends on: a figure whose side is not "" is not exact
#: (a lower bound, an upper bound, or neither: listed in ``totals.partial`` with its side in
#: ``totals.sides``; its deltas are flagged ``partial``: the difference of two bounds is no bound)
SIDE_BY = {"macs": "side", "flops": "side", "bytes": "side", "intensity_flops_per_byte": "side",
           "activation_peak_bytes": "memory_side", "total_memory_bytes": "memory_side",
           "predicted_latency_s": "latency_side"}

#: parameter roles, in the order the breakdown lists them
ROLES = (
    ("conv_weight", "Conv weights"),
    ("conv_bias", "Conv biases"),
    ("dense_weight", "Gemm/MatMul weights"),
    ("dense_bias", "Dense biases (Gemm C, or Add after MatMul)"),
    ("norm", "Normalization node parameters (scale, shift, statistics)"),
    ("bn_scale", "BatchNorm scale kept as a per-channel Mul"),
    ("bn_shift", "BatchNorm shift kept as a per-channel Add"),
    ("other", "Other parameters"),
)

#: the closing figures: |relative MAC difference| at most this counts as "the same network"
MACS_AGREE = 0.01


def _labels(n: int) -> list[str]:
    return [chr(ord("A") + i) if i < 26 else f"M{i}" for i in range(n)]


def load_sides(request: Request, models: list) -> list[Side]:
    """Analyze every model with the same request (its ``model`` unused): each side is
    ``replace(request, model=..., dims=..., input_shapes=...)`` with the dims and input shapes that model
    has. A dim a model does not have is ignored for that model (and listed), not an error; so is an
    input shape naming an input the model lacks (``input`` in one export, ``input_1`` in another).
    With ``request.default_batch``, an unbound batch dim is bound to 1 in each model, with a note."""
    dims = dict(request.dims)
    shapes = dict(request.input_shapes)
    out = []
    for i, (m, label) in enumerate(zip(models, _labels(len(models)))):
        advance(i, len(models), "models")
        loaded = m if isinstance(m, LoadedModel) else load(m)
        names = set(input_dim_names(loaded))
        real = {vi.name for vi in loaded.proto.graph.input} - set(loaded.graph.initializers)
        mine = {k: v for k, v in shapes.items() if k in real}
        names |= {d for v in mine.values() for d in v if isinstance(d, str)}
        applied = {k: v for k, v in sorted(dims.items()) if k in names}
        ignored = tuple(sorted(k for k in dims if k not in names)) + tuple(
            sorted(f"input {k}" for k in shapes if k not in real))
        side = replace(request, model=loaded, dims=applied, input_shapes=mine)
        sm = compose(side)
        out.append(Side(i, label, sm, tuple(sorted(sm.dims)), ignored, side))
    advance(len(models), len(models), "models")
    return out


def _model_name(side: Side) -> str:
    p = side.analysis.model.path
    return Path(p).name if p else (side.analysis.model.graph_name or f"model {side.label}")


def _totals(side: Side, heavy: int, measured: float | None) -> dict[str, Any]:
    a, sm = side.analysis, side.analysis
    t = a.totals
    return {
        "params": t.params, "param_bytes": t.param_bytes, "file_size_bytes": a.model.file_size_bytes,
        "macs": t.macs, "flops": t.flops, "int_ops": t.int_ops,
        "bytes_read": t.bytes_read, "bytes_written": t.bytes_written, "bytes": t.bytes_total,
        "intensity_flops_per_byte": t.intensity_flops_per_byte,
        "activation_peak_bytes": sm.memory.peak_bytes, "total_memory_bytes": sm.memory.total_bytes,
        "predicted_latency_s": None if sm.roofline is None else sm.roofline.latency_s,
        "measured_latency_s": measured,
        "nodes": a.model.nodes, "heavy_nodes": heavy,
        "complete": t.complete, "memory_complete": sm.memory.complete,
        "latency_complete": sm.roofline is None or sm.roofline.complete,
        "side": t.side, "memory_side": sm.memory.side, "latency_side": "" if sm.roofline is None else sm.roofline.side,
        "uncosted": dict(t.uncosted),
    }


def _model_dict(side: Side, heavy: int, measured: float | None) -> dict[str, Any]:
    a = side.analysis
    m, c = a.model, a.coverage
    warnings = [w["message"] for w in a.warnings()]
    if side.dims_ignored:
        warnings.append("--dim not in this model, ignored: " + ", ".join(side.dims_ignored))
    warnings += [n for n in a.notes if n.startswith("unbound batch dim ")]
    return {
        "index": side.index, "label": side.label, "name": _model_name(side), "path": m.path,
        "producer_name": m.producer_name, "producer_version": m.producer_version, "ir_version": m.ir_version,
        "opsets": {k or "ai.onnx": v for k, v in m.opsets},
        "inputs": [{"name": t.name, "dtype": t.dtype, "shape": None if t.shape is None else list(t.shape)}
                   for t in m.inputs],
        "outputs": [{"name": t.name, "dtype": t.dtype, "shape": None if t.shape is None else list(t.shape)}
                    for t in m.outputs],
        "dims": dict(side.dims_applied), "dims_ignored": list(side.dims_ignored),
        "coverage": {"nodes": c.nodes, "exact_nodes": c.exact_nodes, "unsupported": c.unsupported,
                     "unknown_shape": c.unknown_shape, "rule_errors": c.rule_errors, "complete": c.complete},
        "totals": _totals(side, heavy, measured),
        "warnings": warnings,
    }


def _delta(a: Any, b: Any) -> dict[str, Any]:
    if a is None or b is None:
        return {"delta": None, "rel": None}
    d = b - a
    return {"delta": d, "rel": _rel(d, a)}


def _rel(d: int | float, a: int | float) -> float | None:
    """``d`` relative to ``a``: 0 when nothing changed (even from 0), None when ``a`` is 0."""
    if not d:
        return 0.0
    return None if not a else d / a


def _histogram(sides: list[Side]) -> dict[str, Any]:
    counts = []
    for s in sides:
        counts.append(Counter((s.node(n).domain + "::" if s.node(n).domain not in ("", "ai.onnx") else "")
                              + s.op(n) for n in s.order))
    ops = sorted(set().union(*counts), key=lambda op: (-max(c.get(op, 0) for c in counts), op))
    return {"columns": ["op_type"] + [s.label for s in sides],
            "rows": [[op] + [c.get(op, 0) for c in counts] for op in ops]}


# ------------------------------------------------------------------------------------ alignment

def _node_ref(side: Side, nid: int | None, sigs: dict) -> dict[str, Any] | None:
    if nid is None:
        return None
    c = side.costs[nid]
    return {"id": nid, "name": side.name(nid), "op_type": side.op(nid), "signature": sigs[nid].label(),
            "macs": c.macs, "flops": c.flops, "bytes": c.bytes_read + c.bytes_written}


def _fmt(v: Any) -> Any:
    if isinstance(v, tuple):
        return "×".join(str(x) for x in v) or "-"
    return v


def _alignment_dict(al: Alignment, a: Side, b: Side) -> dict[str, Any]:
    rows = []
    for p in al.pairs:
        ra, rb = _node_ref(a, p.a, al.sig_a), _node_ref(b, p.b, al.sig_b)
        changes = [{"field": f, "a": _fmt(getattr(al.sig_a[p.a], f)), "b": _fmt(getattr(al.sig_b[p.b], f))}
                   for f in p.changes] if p.a is not None and p.b is not None else []
        into = None
        if p.into is not None:
            other, sigs = (b, al.sig_b) if p.a is not None else (a, al.sig_a)
            into = {"side": "b" if p.a is not None else "a", "id": p.into, "name": other.name(p.into),
                    "signature": sigs[p.into].label()}
        rows.append({
            "kind": p.kind, "block": p.block, "a": ra, "b": rb, "changes": changes, "into": into,
            "delta_macs": (rb["macs"] if rb else 0) - (ra["macs"] if ra else 0),
            "delta_flops": (rb["flops"] if rb else 0) - (ra["flops"] if ra else 0),
        })
    blocks = []
    for bl in al.blocks:
        rs = [rows[i] for i in bl.pairs]
        tot = {f"{k}_{s}": sum(r[s][k] for r in rs if r[s]) for k in ("macs", "flops", "bytes") for s in ("a", "b")}
        kinds = Counter(r["kind"] for r in rs)
        names_a = [r["a"]["name"] for r in rs if r["a"]]
        names_b = [r["b"]["name"] for r in rs if r["b"]]
        blocks.append({
            "index": bl.index, "label_a": bl.label_a, "label_b": bl.label_b,
            "first_a": names_a[0] if names_a else None, "last_a": names_a[-1] if names_a else None,
            "first_b": names_b[0] if names_b else None, "last_b": names_b[-1] if names_b else None,
            "rows": list(bl.pairs), **tot,
            "delta_macs": tot["macs_b"] - tot["macs_a"], "delta_flops": tot["flops_b"] - tot["flops_a"],
            "counts": {k: kinds.get(k, 0) for k in KINDS},
            "differs": any(r["kind"] != "same" for r in rs),
        })
    return {"counts": {k: al.count(k) for k in KINDS}, "rows": rows, "blocks": blocks}


# ----------------------------------------------------------------------------------- parameters

def param_roles(side: Side) -> dict[str, tuple[int, int]]:
    """Parameters by role -> (tensors, elements). Each parameter tensor counts once, under the role of
    its first reader in execution order; the elements sum to the analysis' params total."""
    bn_mul, bn_add = set(), set()
    for nid in side.order:
        if side.costs[nid].family in ("conv", "matmul"):
            kind, nodes = bn_after(side, nid)
            if kind in ("mul_add", "mul"):
                bn_mul.add(nodes[0])
                bn_add.update(nodes[1:])
    acc: dict[str, list[int]] = {r: [0, 0] for r, _ in ROLES}
    for t, numel in sorted(side.param_tensors.items()):
        users = side.users(t)
        role = "other"
        if users:
            u = users[0]
            node = side.node(u)
            fam, op = side.costs[u].family, node.op_type
            idx = list(node.input).index(t)
            if fam == "conv" and op in ("Conv", "ConvTranspose", "NhwcConv", "FusedConv"):
                role = "conv_weight" if idx == 1 else ("conv_bias" if idx == 2 else "other")
            elif fam == "matmul":
                role = "dense_bias" if op == "Gemm" and idx == 2 else "dense_weight"
            elif fam == "norm":
                role = "norm"
            elif u in bn_mul:
                role = "bn_scale"
            elif u in bn_add:
                role = "bn_shift"
            elif op == "Add":
                src = [side.producer(x) for x in side.activation_inputs(u)]
                if len(src) == 1 and src[0] is not None and side.costs[src[0]].family == "matmul":
                    role = "dense_bias"
        acc[role][0] += 1
        acc[role][1] += numel
    return {r: (v[0], v[1]) for r, v in acc.items()}


def _params_dict(a: Side, b: Side) -> list[dict[str, Any]]:
    ra, rb = param_roles(a), param_roles(b)
    return [{"role": r, "label": label, "tensors_a": ra[r][0], "params_a": ra[r][1], "tensors_b": rb[r][0],
             "params_b": rb[r][1], "delta": rb[r][1] - ra[r][1]}
            for r, label in ROLES if ra[r][1] or rb[r][1]]


# -------------------------------------------------------------------------------------- closing

def _accounting(total_delta: int | float | None, explanations: list[Explanation], metric: str,
                delta_of: Callable[[Explanation], dict[str, Any]] | None = None) -> dict[str, Any]:
    """Split ``total_delta`` into the explanations that move ``metric`` (each node counted once: a
    later explanation naming an already-counted node is left out) and the rest; ``delta_of`` gives an
    explanation's ``delta`` (and other fields for its part) when it is not one of its own cost fields
    (the predicted time). ``total_delta`` None: unknown (a total of either side is), and so is the rest."""
    taken_a: set[int] = set()
    taken_b: set[int] = set()
    parts = []
    for e in explanations:
        extra = {"delta": e.delta(metric)} if delta_of is None else delta_of(e)
        d = extra["delta"]
        if not d or taken_a & set(e.nodes_a) or taken_b & set(e.nodes_b):
            continue
        taken_a.update(e.nodes_a)
        taken_b.update(e.nodes_b)
        parts.append({"id": e.id, "title": e.title, **extra, "share": None if not total_delta else d / total_delta})
    explained = sum(p["delta"] for p in parts)
    return {"explained": parts, "residual": None if total_delta is None else total_delta - explained}


def node_times(side: Side) -> dict[int, float | None] | None:
    """Main-graph node id -> its predicted time (None: not costed), or None without ``--hw``."""
    rl = side.analysis.roofline
    if rl is None:
        return None
    return {int(r.key): r.time_s for r in rl.nodes}


def predicted_delta(e: Explanation, times_a: dict[int, float | None], times_b: dict[int, float | None]) -> dict[str, Any]:
    """The predicted time of an explanation's nodes on each side and its delta,

        Δt = Σ t_n over its nodes in B − Σ t_n over its nodes in A

    (``partial``: a node of it has no predicted time, so the sums leave it out)."""
    ta = [times_a.get(i) for i in e.nodes_a]
    tb = [times_b.get(i) for i in e.nodes_b]
    a = sum((t for t in ta if t is not None), 0.0)
    b = sum((t for t in tb if t is not None), 0.0)
    return {"a": a, "b": b, "delta": b - a, "partial": None in ta or None in tb}


def _closing(ma: dict, mb: dict, explanations: list[Explanation], params: list[dict],
             predicted: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The closing figures; ``predicted`` (:func:`predicted_delta` of each explanation, with ``--hw``)
    adds ``latency``: the predicted-latency delta split by explanation, the rest ``residual`` (nodes
    no explanation names, and the same nodes timed differently), so that the parts add up to it."""
    ta, tb = ma["totals"], mb["totals"]
    out: dict[str, Any] = {}
    for k in ("macs", "flops", "bytes"):
        # a total that is unknown (None: nothing of it counted) makes the delta unknown, never a number
        d = None if ta[k] is None or tb[k] is None else tb[k] - ta[k]
        out[k] = {"a": ta[k], "b": tb[k], "delta": d, "rel": None if d is None else _rel(d, ta[k]),
                  **_accounting(d, explanations, k)}
    out["macs"]["agree_within"] = MACS_AGREE
    out["macs"]["agree"] = out["macs"]["rel"] is not None and abs(out["macs"]["rel"]) <= MACS_AGREE
    d = tb["params"] - ta["params"]
    by_role = [p for p in params if p["delta"]]
    out["params"] = {"a": ta["params"], "b": tb["params"], "delta": d, "rel": _rel(d, ta["params"]),
                     "by_role": [{"role": p["role"], "label": p["label"], "delta": p["delta"]} for p in by_role],
                     "equal_roles": [{"role": p["role"], "label": p["label"], "params": p["params_a"],
                                      "tensors": p["tensors_a"]} for p in params if not p["delta"]],
                     "residual": d - sum(p["delta"] for p in by_role)}
    la, lb = ta["predicted_latency_s"], tb["predicted_latency_s"]
    out["latency"] = None
    if predicted is not None and la is not None and lb is not None:
        d = lb - la
        of = {id(e): p for e, p in zip(explanations, predicted)}
        acc = _accounting(d, explanations, "predicted_s",
                          lambda e: {"delta": of[id(e)]["delta"], "partial": of[id(e)]["partial"]})
        out["latency"] = {"a": la, "b": lb, "delta": d, "rel": _rel(d, la),
                          "partial": bool(ta["latency_side"] or tb["latency_side"]), **acc}
    out["lines"] = _closing_lines(ma, mb, out)
    return out


def _n(x: int | None) -> str:
    return "unknown" if x is None else f"{x:,}"


def _signed0(x: int | None) -> str:
    return "unknown" if x is None else f"{x:+,}" if x else "0"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _pct(x: float | None) -> str:
    return "?" if x is None else ("0%" if x == 0 else f"{100 * x:+.2f}%")


def _closing_lines(ma: dict, mb: dict, c: dict) -> list[str]:
    A, B = ma["label"], mb["label"]
    m = c["macs"]
    lines = []
    verdict = (f"within {100 * MACS_AGREE:g}%: the same arithmetic" if m["agree"]
               else "cannot tell whether they agree (a side's MACs are unknown)" if m["delta"] is None
               else f"not within {100 * MACS_AGREE:g}%")
    line = f"MACs: {A} {_n(m['a'])}, {B} {_n(m['b'])}, Δ {_signed0(m['delta'])} ({_pct(m['rel'])}), {verdict}."
    if m["delta"]:
        parts = [f"{p['title']} {p['delta']:+,}" + (f" ({100 * p['share']:.1f}%)" if p["share"] is not None else "")
                 for p in m["explained"]]
        line += (" Explained by: " + "; ".join(parts) + "." if parts else " No explanation accounts for it.")
        line += f" Unexplained: {_signed0(m['residual'])}."
    lines.append(line)
    p = c["params"]
    line = f"Params: {A} {_n(p['a'])}, {B} {_n(p['b'])}, Δ {_signed0(p['delta'])} ({_pct(p['rel'])})"
    if p["by_role"]:
        terms = [f"{r['delta']:+,} {r['label']}" if i == 0 else
                 f"{'+' if r['delta'] >= 0 else '−'} {abs(r['delta']):,} {r['label']}" for i, r in enumerate(p["by_role"])]
        line += " = " + " ".join(terms)
        if p["residual"]:
            line += f", unexplained {_signed0(p['residual'])}"
    line += "."
    if p["equal_roles"]:
        line += " Equal on both sides: " + "; ".join(f"{r['label']} {_n(r['params'])} ({_plural(r['tensors'], 'tensor')})"
                                                      for r in p["equal_roles"]) + "."
    lines.append(line)
    for k, label in (("flops", "FLOPs"), ("bytes", "Bytes")):
        f = c[k]
        line = f"{label}: Δ {_signed0(f['delta'])} ({_pct(f['rel'])})"
        if f["explained"]:
            line += ": " + "; ".join(f"{x['title']} {x['delta']:+,}" for x in f["explained"])
            line += f"; other nodes {_signed0(f['residual'])}"
        lines.append(line + ".")
    lat = c.get("latency")
    if lat is not None:
        def sec(x: float) -> str:
            return "0" if not x else ("+" if x > 0 else "-") + seconds(abs(x))
        line = (f"Predicted latency: {A} {seconds(lat['a'])}, {B} {seconds(lat['b'])}, Δ {sec(lat['delta'])} "
                f"({_pct(lat['rel'])})" + (" (partial: a node without a predicted time)" if lat["partial"] else ""))
        if lat["explained"]:
            # shares only when every part moves the way the total does (else they are no fractions of it)
            fractions = all(x["share"] is not None and x["share"] >= 0 for x in lat["explained"])
            line += ": " + "; ".join(f"{x['title']} {sec(x['delta'])}"
                                     + (f" ({100 * x['share']:.1f}%)" if fractions else "")
                                     for x in lat["explained"])
            line += f"; unexplained {sec(lat['residual'])}"
        lines.append(line + ".")
    return lines


# ---------------------------------------------------------------------------------------- build

def build(sides: list[Side], measured: list[float | None] | None = None,
          options: dict[str, Any] | None = None) -> dict[str, Any]:
    """The comparison model of ``sides`` (the first is the baseline)."""
    measured = measured or [None] * len(sides)
    aligns = [align(sides[0], s) for s in sides[1:]]
    heavy = [len(aligns[0].sig_a) if aligns else 0] + [len(al.sig_b) for al in aligns]
    models = [_model_dict(s, h, m) for s, h, m in zip(sides, heavy, measured)]
    for m in models:
        t = m["totals"]
        t["partial"] = [k for k, _, _ in METRICS if k in SIDE_BY and t[SIDE_BY[k]]]
        t["sides"] = {k: t[SIDE_BY[k]] for k in t["partial"]}
    base = models[0]["totals"]
    deltas = [{"label": m["label"], "vs": models[0]["label"],
               "metrics": {k: _delta(base[k], m["totals"][k])
                           | {"partial": k in base["partial"] or k in m["totals"]["partial"]}
                           for k, _, _ in METRICS}} for m in models[1:]]
    comparisons = []
    times_a = node_times(sides[0])
    for s, al, m in zip(sides[1:], aligns, models[1:]):
        ex, checks = explain(Context(sides[0], s, al))
        params = _params_dict(sides[0], s)
        times_b = node_times(s)
        predicted = ([predicted_delta(e, times_a, times_b) for e in ex]
                     if times_a is not None and times_b is not None else None)
        comparisons.append({
            "a": models[0]["label"], "b": m["label"], "a_name": models[0]["name"], "b_name": m["name"],
            "alignment": _alignment_dict(al, sides[0], s),
            "explanations": [{**e.to_dict(), "predicted_s": None if predicted is None else p}
                             for e, p in zip(ex, predicted or [None] * len(ex))],
            "checks": [{"id": c.id, "title": c.title, "found": c.found} for c in checks],
            "params_breakdown": params,
            "closing": _closing(models[0], m, ex, params, predicted),
        })
    hw = sides[0].analysis.spec
    return {
        "schema": SCHEMA,
        "generator": {"name": "onnxperf", "version": __version__},
        "options": {"dims": {}, "hw": None if hw is None else hw.id, "convention": sides[0].analysis.convention,
                    "validate": any(x is not None for x in measured), **(options or {})},
        "hardware": None if hw is None else {"id": hw.id, "name": hw.name},
        "metrics": [{"key": k, "label": label, "kind": kind} for k, label, kind in METRICS],
        "models": models,
        "deltas": deltas,
        "op_histogram": _histogram(sides),
        "comparisons": comparisons,
    }


def compare(models: list[str | os.PathLike | onnx.ModelProto | LoadedModel], dims: dict[str, int] | None = None,
            hw: str | None = None, convention: str = "default",
            measured: list[float | None] | None = None) -> dict[str, Any]:
    """Compare ``models`` (at least two; the first is the baseline) and return the comparison model."""
    if len(models) < 2:
        raise OptionError("compare needs at least two models (the first is the baseline)")
    sides = load_sides(Request(None, dims=dict(dims or {}), hw=hw, convention=convention), list(models))
    options = {"dims": dict(sorted((dims or {}).items())), "hw": hw, "convention": convention,
               "validate": measured is not None}
    return build(sides, measured, options)
