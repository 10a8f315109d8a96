"""The report model: everything the analysis knows, as one plain, JSON-serializable dict that every
report renderer (HTML, Markdown, JSON, Netron attachment) formats. Computation happens here; the
renderers in :mod:`onnxperf.products.render.report` only format.

Schema ``onnxperf.report/1`` (keys in this order)::

    schema, generator {name, version}, options {...as given}, convention, model {...}, bindings {...},
    hardware {...} | null, totals {...}, coverage {...}, by_op_type [...], cost_chart {...}, verdict [...],
    nodes {columns, rows}, tensors {columns, rows}, bottlenecks {flops [...], predicted [...], measured [...]},
    bottleneck_groups {...} | null, memory {...}, roofline {...} | null, measured {...} | null,
    largest_fit {...} | null, device_memory {...} | null, llm {...} | null, precision {...} | null,
    warnings [...], conventions [...], notes [...]

Per-node data is compact, one array per node in ``nodes.rows`` with the names in ``nodes.columns``
(:data:`NODE_COLUMNS`); ``inputs`` and ``outputs`` are indices into ``tensors.rows`` (null for an
absent optional input), so a tensor's name and shape are stored once. Integers are exact; per-node
floats (intensity, predicted and measured seconds) are rounded to :data:`FLOAT_DIGITS` significant
digits to keep a 100,000-node report small. Whole-model figures are never rounded.

``measured`` and the ``measured_s`` column stay null until ``--validate`` supplies a validation
result (see :func:`measured_section` for what it may carry).
"""

from __future__ import annotations

import contextlib
import gc
import html as htmllib
import math
import os
from dataclasses import replace
from collections.abc import Mapping
from typing import Any

from onnxperf import __version__
from onnxperf.cost.walker import COUNTED, ZERO
from onnxperf.insights.advice import node_why, ridge
from onnxperf.insights.partial import uncosted_text, upper_text
from onnxperf.products.accuracy import error_figures, large_error_warning
from onnxperf.products.render.report import render_html
from onnxperf.products.render.summary import kernel_model_note
from onnxperf.analysis.result import Analysis

SCHEMA = "onnxperf.report/1"

#: significant digits kept for per-node floats (intensity, seconds)
FLOAT_DIGITS = 5

NODE_COLUMNS: tuple[str, ...] = (
    "key",            # node id in file order ("<scope>/<id>" inside subgraph bodies)
    "name",           # NodeProto.name (may be empty)
    "op_type",
    "domain",         # "" for the default ONNX domain
    "status",         # counted | zero_by_design | unsupported | unknown_shape | rule_error
    "inputs",         # [tensor index | null, ...]
    "outputs",        # [tensor index | null, ...]
    "macs", "flops", "int_ops", "params", "bytes_read", "bytes_written",
    "intensity",      # (flops + int_ops) / (bytes_read + bytes_written), ops per byte; null if no byte moves
    "bound",          # its limiter in the execution plan: compute | fill | memory | dispatch | none | null (no
                      # hardware, or the node has no cost)
    "predicted_s",    # roofline time on the chosen hardware; null without --hw or when unknown
    "measured_s",     # measured time (--validate); null when not measured or not mapped
    "runs",           # how the plan runs it: own | inside (another node's kernel) | free (no work) | null
    "kernel",         # the key of the node whose kernel it runs in; null when it runs nothing
    "run_intensity",  # operations per byte the plan charges it (its kernel's traffic); the chart's x
    "attained_ops_per_s",  # operations / predicted time; the chart's y (on or under its roof)
    "peak_share",     # attained rate / the named peak of its dtype
)
TENSOR_COLUMNS: tuple[str, ...] = ("name", "dtype", "shape")

#: how many nodes the bottleneck lists hold
TOP_BOTTLENECKS = 10
#: the bottleneck groups keep the blocks with the most time and the first node keys of each fusion
#: opportunity (the JSON says how many it left out: ``blocks_left_out``, ``keys_left_out``)
TOP_BLOCKS = 40
OPPORTUNITY_KEYS = 200

CONVENTIONS_TEXT = {
    "default": "Convention default (onnxperf): a MAC is one multiply-accumulate of matmul/conv-like work; FLOPs are "
               "2 per MAC plus every other floating-point operation (bias adds, activations, normalizations, "
               "reductions, softmax, pooling). Integer arithmetic is counted as integer ops, never as FLOPs.",
    "torch": "Convention torch (torch.utils.flop_counter): FLOPs are 2 x MACs of conv, matmul, attention and RNN "
             "products only, without bias; other ops count 0.",
    "fvcore": "Convention fvcore (FlopCountAnalysis): its 'flops' are MACs (one per multiply-add) of conv/matmul-like "
              "ops, plus a few norm, pooling and upsample costs; other ops count 0.",
    "tf": "Convention tf (TF profiler float_ops): FLOPs are 2 x MACs of conv and matmul plus their bias, the "
          "elementwise arithmetic, means, sums, pooling windows and softmax the profiler has a function for; "
          "activations, resize and other ops count 0.",
}


def _r(x: float | None) -> float | None:
    """A per-node float rounded to FLOAT_DIGITS significant digits (None and non-finite stay None)."""
    if x is None or not math.isfinite(x):
        return None
    return float(f"{x:.{FLOAT_DIGITS}g}")


def _finite(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def shape_text(shape) -> str | None:
    """``(1, 'batch', None)`` -> ``"[1,batch,?]"``; None (unknown rank) stays None."""
    if shape is None:
        return None
    return "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


def _tref(t) -> dict[str, Any]:
    return {"name": t.name, "dtype": t.dtype, "shape": None if t.shape is None else list(t.shape)}


class _Tensors:
    """Interns tensors (name, dtype, shape text) in first-seen order."""

    def __init__(self) -> None:
        self.index: dict[tuple[str, str, Any], int] = {}
        self.rows: list[list[Any]] = []
        self.shapes: dict[Any, str | None] = {}

    def add(self, t) -> int | None:
        if t is None:
            return None
        k = (t.name, t.dtype, t.shape)
        i = self.index.get(k)
        if i is None:
            i = self.index[k] = len(self.rows)
            text = self.shapes.get(t.shape, 0)
            if text == 0:
                text = self.shapes[t.shape] = shape_text(t.shape)
            self.rows.append([t.name, t.dtype, text])
        return i


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if obj is None:
        return default
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


ERROR_KEYS = ("end_to_end_error", "median_ape", "within_10", "within_25", "spearman")


def measured_section(validation: Any, predicted: dict[str, float | None]) -> dict[str, Any] | None:
    """The ``measured`` section from a validation result (an object or a mapping; ``None`` gives None).

    Read from ``validation`` (all optional):

    * ``latency_s``: measured end-to-end latency (median of the timed runs), seconds;
    * ``provider`` (str), ``runs`` (int), ``device`` (str): shown in the header;
    * ``node_times_s``: mapping node key -> measured seconds per run (mapped back onto original nodes);
    * ``groups``: iterable of ``(node keys, measured seconds)`` (or mappings with ``keys`` and
      ``measured_s``) when the runtime fused nodes: the scatter then shows one point per group,
      predicted = the sum of the group's predicted node times;
    * ``errors``: the error figures (an object with ``to_dict()``, or a mapping) with keys
      ``end_to_end_error, median_ape, within_10, within_25, spearman`` (fractions; ρ for spearman).
      When absent they are computed from the points with :func:`onnxperf.products.accuracy.error_figures`;
    * ``errors_by_roofline``: the same figures per roofline (``plain``, ``calibrated``), shown side
      by side, as ``onnxperf validate`` prints them;
    * ``warnings`` and ``notes`` (strings): what ``onnxperf validate`` prints as ``Warning`` and
      ``Note`` lines; the page's warnings box carries them (:func:`_warnings`).

    A :class:`~onnxperf.products.validate.compare.Validation` (or its ``to_dict()``) is read as such
    (:func:`_from_validation`).
    """
    if validation is None:
        return None
    if hasattr(validation, "to_dict") and not isinstance(validation, Mapping):
        try:
            as_dict = validation.to_dict()
            if isinstance(as_dict, Mapping):
                validation = as_dict
        except TypeError:
            pass
    if isinstance(validation, Mapping) and validation.get("schema") == "onnxperf.validation/1":
        validation = _from_validation(validation)
    node_times = {str(k): float(v) for k, v in (_get(validation, "node_times_s") or {}).items() if v is not None}
    points: list[list[Any]] = []
    groups = _get(validation, "groups")
    if groups:
        for g in groups:
            keys = _get(g, "keys") if not isinstance(g, (tuple, list)) else g[0]
            ms = _get(g, "measured_s") if not isinstance(g, (tuple, list)) else g[1]
            keys = [str(k) for k in keys]
            preds = [predicted.get(k) for k in keys]
            p = None if any(x is None for x in preds) else sum(preds)  # type: ignore[arg-type]
            points.append([keys, _r(p), _r(float(ms))])
    else:
        for k, ms in node_times.items():
            p = predicted.get(k)
            points.append([[k], _r(p), _r(ms)])
    errors = _get(validation, "errors")
    if errors is not None and hasattr(errors, "to_dict"):
        errors = errors.to_dict()
    if errors is None:
        pairs = [(p, m) for _, p, m in points if p is not None and m is not None]
        if pairs:
            errors = error_figures([p for p, _ in pairs], [m for _, m in pairs]).to_dict()
    errs = {k: _finite(_get(errors, k)) for k in ERROR_KEYS} if errors is not None else None
    if errs is not None:
        for k in ("n", "predicted_total_s", "measured_total_s"):
            v = _get(errors, k)
            if v is not None:
                errs[k] = v
    by_roofline = {}
    for name, figs in (_get(validation, "errors_by_roofline") or {}).items():
        figs = figs.to_dict() if hasattr(figs, "to_dict") else figs
        by_roofline[str(name)] = {k: _finite(_get(figs, k)) for k in ERROR_KEYS}
    calibrated = "calibrated" in by_roofline if by_roofline else _get(validation, "calibrated")
    return {
        "errors_by_roofline": by_roofline or None,
        #: whether the errors are a calibrated spec's (None: not said)
        "calibrated": None if calibrated is None else bool(calibrated),
        "latency_s": _finite(_get(validation, "latency_s")),
        "provider": _get(validation, "provider"),
        "device": _get(validation, "device"),
        "runs": _get(validation, "runs"),
        "points_columns": ["keys", "predicted_s", "measured_s"],
        "points": points,
        "errors": errs,
        #: what makes the figures doubtful (a spec of another machine, a noisy measurement)
        "warnings": [str(w) for w in (_get(validation, "warnings") or [])],
        #: caveats about the measurement (random weights, a truncated profile, a sweep stopped)
        "notes": [str(n) for n in (_get(validation, "notes") or [])],
        #: the machine's state over the blocks and the state-normalized error (validate's ``state``)
        "state": (lambda st: st.to_dict() if hasattr(st, "to_dict") else st)(_get(validation, "state")),
        #: what the measured per-node times are: "kernel", or "host" (a GPU provider: each node's launch)
        "node_times": _get(validation, "node_times") or "kernel",
        "_node_times": node_times,  # removed by build_report
    }


def _from_validation(v: Mapping[str, Any]) -> dict[str, Any]:
    """What :func:`measured_section` reads, from ``Validation.to_dict()`` (schema
    ``onnxperf.validation/1``): the figures ``onnxperf validate`` prints for the same run (mean
    latency, the calibrated figures when there are, its warnings and notes)."""
    lat = v.get("measured_latency") or {}
    plain, cal = v.get("error_plain"), v.get("error_calibrated")
    return {
        "latency_s": lat.get("mean_s"), "runs": lat.get("n"), "provider": ", ".join(v.get("providers") or []) or None,
        "device": f"onnxruntime {v.get('onnxruntime_version')}, opt={v.get('opt')}",
        "groups": [{"keys": [str(i) for i in g["original_node_ids"]], "measured_s": g["measured_s"]}
                   for g in v.get("groups") or [] if not g.get("folded")],
        "errors": cal or plain,
        "errors_by_roofline": {k: f for k, f in (("plain", plain), ("calibrated", cal)) if f is not None},
        "warnings": v.get("warnings") or [], "notes": v.get("notes") or [],
        "state": v.get("state"), "node_times": v.get("node_times"),
    }


def _hardware(sm: Analysis, dtypes_used: list[str]) -> dict[str, Any] | None:
    spec = sm.spec
    if spec is None:
        return None
    d: dict[str, Any] = {}
    if hasattr(spec, "to_dict"):
        try:
            d = dict(spec.to_dict())
        except Exception:  # noqa: BLE001 - a spec-like object without a full to_dict
            d = {}
    d.setdefault("id", getattr(spec, "id", None))
    d.setdefault("name", getattr(spec, "name", getattr(spec, "id", None)))
    d.setdefault("memory_bandwidth_bytes_per_s", spec.memory_bandwidth_bytes_per_s)
    roofs: list[dict[str, Any]] = []
    for dt in ["float32"] + [x for x in dtypes_used if x != "float32"]:
        try:
            peak = float(spec.peak_for(dt))
        except Exception:  # noqa: BLE001 - a dtype without a peak is simply not drawn
            continue
        same = next((r for r in roofs if r["peak_ops_per_s"] == peak), None)
        if same is not None:  # one roof per distinct peak: "float32/int32"
            same["dtype"] += "/" + dt
            continue
        roofs.append({"dtype": dt, "peak_ops_per_s": peak,
                      "ridge_ops_per_byte": peak / spec.memory_bandwidth_bytes_per_s})
    d["roofs"] = roofs
    # the cache levels of a cache-aware spec: each the roof of the bytes it serves (main memory is the roofs')
    d["level_roofs"] = [{"level": lv.name, "bandwidth_bytes_per_s": lv.bandwidth_bytes_per_s}
                        for lv in getattr(spec, "memory_levels", ()) or ()]
    eff = getattr(spec, "efficiency", None) or {}
    d["efficiency"] = {k: float(v) for k, v in sorted(dict(eff).items())}
    return d


@contextlib.contextmanager
def _gc_paused():
    """Building a 100k-node model allocates ~10^6 small lists that trigger full collections over
    the (large, long-lived) analysis: pausing the collector makes it ~3x faster. Nothing cyclic is
    created here."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def build_report(summary: Analysis, validation: Any = None, options: dict[str, Any] | None = None) -> dict[str, Any]:
    """The report model of ``summary`` (and of ``validation``, when given) as plain JSON types.

    ``options`` are the options the user gave (shown in the header and kept in the JSON); any
    JSON-serializable mapping. The same inputs give an identical dict (no timestamps).
    """
    with _gc_paused():
        return _build(summary, validation, options)


def _build(sm: Analysis, validation: Any, options: dict[str, Any] | None) -> dict[str, Any]:
    a = sm
    # the analysis's JSON contract, for its exact figures; per-node lists are left out of it (the
    # report has its own compact rows), which keeps a 100k-node report fast to build
    d = replace(a, nodes=(), roofline=replace(a.roofline, nodes=()) if a.roofline is not None else None,
                bottlenecks=None, llm=None, precision=None).to_dict()  # the llm section is added below, once
    m, t = a.model, a.totals
    rl = sm.roofline
    rl_nodes = {n.key: n for n in rl.nodes} if rl is not None else {}
    predicted = {k: n.time_s for k, n in rl_nodes.items()}
    meas = measured_section(validation, predicted)
    node_times = meas.pop("_node_times") if meas else {}

    tensors = _Tensors()
    rows: list[list[Any]] = []
    for n in a.nodes:
        r = rl_nodes.get(n.key) if not n.scope else None
        nbytes = n.bytes_read + n.bytes_written
        ops = n.flops + n.int_ops
        costed = n.status in (COUNTED, ZERO)
        rows.append([
            n.key, n.name, n.op_type, n.domain, n.status,
            [tensors.add(x) for x in n.inputs], [tensors.add(x) for x in n.outputs],
            n.macs, n.flops, n.int_ops, n.params, n.bytes_read, n.bytes_written,
            _r(ops / nbytes) if costed and nbytes else None,
            (r.bound if r.time_s is not None else None) if r is not None else None,
            _r(r.time_s) if r is not None else None,
            _r(node_times.get(n.key)),
            r.runs if r is not None else None, r.kernel if r is not None else None,
            _r(r.intensity) if r is not None else None, _r(r.attained_ops_per_s) if r is not None else None,
            _r(r.peak_share) if r is not None else None,
        ])

    # by op type: counts, shares of FLOPs, bytes, predicted and measured time
    rl_by_op = {r.op_type: (r.time_s, r.share, r.bound) for r in rl.by_op_type} if rl is not None else {}
    meas_by_op: dict[str, float] = {}
    for n in a.main_nodes:
        if n.key in node_times:
            meas_by_op[n.op_type] = meas_by_op.get(n.op_type, 0.0) + node_times[n.key]
    meas_total = sum(meas_by_op.values())
    total_bytes = t.bytes_total  # None: unknown, and so is every share of it
    by_op = []
    for row in a.by_op_type:
        b = row.bytes_read + row.bytes_written
        row_complete = sum(k for st, k in row.statuses if st in (COUNTED, ZERO)) == row.count
        tm = rl_by_op.get(row.op_type)  # the roofline groups by op type alone
        mt = meas_by_op.get(row.op_type) if meas else None
        by_op.append({
            "op_type": row.op_type, "domain": row.domain, "count": row.count,
            "macs": row.macs, "flops": row.flops, "int_ops": row.int_ops, "params": row.params,
            # an uncosted node's share is unknown (not 0); other shares are of the figures counted
            "bytes": b, "flops_share": row.flops / t.flops if t.flops and row_complete else None,
            "bytes_share": b / total_bytes if total_bytes and row_complete else None,
            "predicted_s": tm[0] if tm else None, "predicted_share": tm[1] if tm else None,
            "bound": tm[2] if tm else None,
            "measured_s": mt, "measured_share": (mt / meas_total if mt is not None and meas_total else None),
            "statuses": dict(row.statuses),
            "complete": row_complete,
        })

    # bottlenecks
    names = {n.key: n for n in a.main_nodes}
    bottlenecks: dict[str, list[dict[str, Any]]] = {"flops": [], "predicted": [], "measured": []}
    for n in a.top_nodes(TOP_BOTTLENECKS):
        nb = n.bytes_read + n.bytes_written
        bottlenecks["flops"].append({
            "key": n.key, "name": n.name, "op_type": n.op_type, "flops": n.flops,
            "share": n.flops / t.flops if t.flops else None, "bytes": nb,
            "intensity": (n.flops + n.int_ops) / nb if nb else None,
        })
    if rl is not None:
        ranked = sorted((r for r in rl.nodes if r.time_s), key=lambda r: (-r.time_s, int(r.key)))[:TOP_BOTTLENECKS]
        precision = getattr(sm.precision, "name", None)
        for r in ranked:
            bottlenecks["predicted"].append({
                "key": r.key, "name": names[r.key].name, "op_type": r.op_type, "predicted_s": r.time_s,
                "share": r.share, "bound": r.bound, "intensity": r.intensity, "ridge_ops_per_byte": ridge(r, sm.spec),
                "dtype": r.dtype, "peak_ops_per_s": r.peak_ops_per_s, "attained_ops_per_s": r.attained_ops_per_s,
                "attained_share_of_peak": r.peak_share, "fill": r.fill, "dispatch_s": r.dispatch_s,
                "measured_s": node_times.get(r.key),
                "why": node_why(r, sm.spec, sm.batch, precision),
            })
    if node_times:
        mranked = sorted(((k, v) for k, v in node_times.items() if k in names),
                         key=lambda kv: (-kv[1], int(kv[0]) if kv[0].isdigit() else 0))[:TOP_BOTTLENECKS]
        for k, v in mranked:
            n = names[k]
            r = rl_nodes.get(k)
            ops = n.flops + n.int_ops
            achieved = ops / v if v else None
            share = achieved / r.peak_ops_per_s if (r is not None and achieved and r.peak_ops_per_s) else None
            why = "measured"
            if r is not None and r.time_s:
                why = f"{r.bound}-bound by the roofline; measured {v / r.time_s:.3g}× the predicted time"
                if share is not None:
                    why += f"; attains {100 * share:.1f}% of peak"
            bottlenecks["measured"].append({
                "key": k, "name": n.name, "op_type": n.op_type, "measured_s": v,
                "share": v / meas_total if meas_total else None,
                "predicted_s": r.time_s if r is not None else None, "bound": r.bound if r is not None else None,
                "intensity": r.intensity if r is not None else None, "attained_share_of_peak": share, "why": why,
            })

    mem = dict(d["memory"])
    timeline = mem.pop("timeline_bytes")
    mem["timeline_bytes"] = timeline

    roof = None
    dtypes_used: list[str] = []
    if rl is not None:
        dtypes_used = sorted({r.dtype for r in rl.nodes if r.time_s is not None and r.ops})
        rd = d["roofline"]
        roof = {
            "hardware": rd["hardware"], "ridge_fp32_flops_per_byte": rd["ridge_fp32_flops_per_byte"],
            "latency_s": rd["latency_s"], "latency_is_lower_bound": rd["latency_is_lower_bound"], "batch": rd["batch"],
            "throughput_items_per_s": rd["throughput_items_per_s"], "unknown_nodes": rd["unknown_nodes"],
            "compute_bound_time_s": rd["compute_bound_time_s"], "memory_bound_time_s": rd["memory_bound_time_s"],
            "dtypes": dtypes_used,
        }

    totals = {
        "complete": t.complete, "uncosted": dict(t.uncosted),
        "uncosted_text": uncosted_text(t) or None, "memory_complete": sm.memory.complete,
        "latency_complete": rl is None or rl.complete,
        # which side of the truth each figure is on ("" exact, "lower", "upper", "unknown"), as the text says it
        "side": t.side, "memory_side": sm.memory.side, "latency_side": rl.side if rl is not None else "",
        "upper_text": upper_text(t) or None,
        "params": t.params, "param_bytes": t.param_bytes, "macs": t.macs, "flops": t.flops, "int_ops": t.int_ops,
        "bytes_read": t.bytes_read, "bytes_written": t.bytes_written,
        "intensity_flops_per_byte": t.intensity_flops_per_byte,
        "activation_peak_bytes": sm.memory.peak_bytes, "total_memory_bytes": sm.memory.total_bytes,
        "predicted_latency_s": rl.latency_s if rl is not None else None,
        "predicted_latency_is_lower_bound": rl.lower_bound if rl is not None else None,
        "predicted_plain_roofline": rl.plain if rl is not None else None,
        "predicted_compute_floor_s": rl.compute_floor_s if rl is not None else None,
        "predicted_kernel_model": (kernel_model_note(rl).strip(" ()") or None) if rl is not None else None,
        "predicted_latency_band": rl.band.to_dict(rl.latency_s) if rl is not None and rl.band is not None else None,
        "predicted_kernel_assumptions": [{"what": w, "nodes": n} for w, n in rl.assumed] if rl is not None else [],
        "predicted_throughput_items_per_s": rl.throughput_per_s(sm.batch) if rl is not None else None,
        "batch": sm.batch,
        "measured_latency_s": meas["latency_s"] if meas else None,
        "measured_throughput_items_per_s": (sm.batch / meas["latency_s"]) if meas and meas["latency_s"] else None,
    }

    model = d["model"]
    model = {"name": os.path.basename(m.path) if m.path else (m.graph_name or "model"), **model}

    return {
        "schema": SCHEMA,
        "generator": {"name": "onnxperf", "version": __version__},
        "options": _plain(options or {}),
        "convention": a.convention,
        "model": model,
        "bindings": d["bindings"],
        "hardware": _hardware(sm, dtypes_used),
        "totals": totals,
        "coverage": d["coverage"],
        "by_op_type": by_op,
        "cost_chart": cost_chart(by_op, rl is not None),
        "verdict": list(sm.bottlenecks.verdict) if sm.bottlenecks is not None else [],
        "nodes": {"columns": list(NODE_COLUMNS), "rows": rows},
        "tensors": {"columns": list(TENSOR_COLUMNS), "rows": tensors.rows},
        "bottlenecks": bottlenecks,
        "bottleneck_groups": bottleneck_groups(sm),
        "memory": mem,
        "roofline": roof,
        "measured": meas,
        "largest_fit": d.get("largest_fit"),
        "device_memory": d.get("device_memory"),
        "llm": sm.llm.to_dict() if getattr(sm, "llm", None) is not None else None,
        "precision": sm.precision.to_dict() if getattr(sm, "precision", None) is not None else None,
        "warnings": _warnings(sm, meas),
        "conventions": _conventions(sm),
        "notes": list(a.notes) + list((meas or {}).get("notes", [])),
    }


#: op types the cost chart names; the others share one bar
COST_BARS = 12
_SHARES = ("flops_share", "bytes_share", "predicted_share", "measured_share")


def cost_chart(by_op: list[dict[str, Any]], predicted: bool) -> dict[str, Any]:
    """The bars of "Where the cost goes": with a prediction, op types ranked by predicted time, the
    :data:`COST_BARS` with the most named, the other timed ones summed in one bar, and those the plan
    gives no time (folded, views, fused away) in one more; without one, ranked by FLOPs (the order of
    ``by_op_type``). A bar's share is the sum of its op types' (an unknown share counts 0)."""
    def bar(label: str, rows: list[dict[str, Any]], kind: str) -> dict[str, Any]:
        return {"label": label, "kind": kind, "op_types": len(rows),
                **{k: sum(r[k] or 0.0 for r in rows) for k in _SHARES}}

    if predicted:
        rows = sorted(by_op, key=lambda r: (-(r["predicted_s"] or 0.0), -(r["flops_share"] or 0.0), r["op_type"]))
        timed = [r for r in rows if r["predicted_s"]]
        idle = [r for r in rows if not r["predicted_s"]]
    else:
        timed, idle = list(by_op), []
    bars = [bar(f"{r['domain']}::{r['op_type']}" if r["domain"] else r["op_type"], [r], "op_type")
            for r in timed[:COST_BARS]]
    rest = timed[COST_BARS:]
    if rest:
        bars.append(bar(f"other ({len(rest)} op types)", rest, "other"))
    if idle:
        bars.append(bar(f"no predicted time ({len(idle)} op type{'s' if len(idle) != 1 else ''})", idle, "no_time"))
    return {"ranked_by": "predicted time" if predicted else "FLOPs", "bars": bars}


def bottleneck_groups(sm: Analysis) -> dict[str, Any] | None:
    """The ``bottleneck_groups`` section: :func:`onnxperf.insights.bottlenecks.bottlenecks` as plain JSON types
    (by op type, by block and block kind, fusion opportunities, uncosted nodes), None without ``--hw``."""
    return None if sm.bottlenecks is None else sm.bottlenecks.to_dict(TOP_BLOCKS, OPPORTUNITY_KEYS)


def _plain(x: Any) -> Any:
    """Options as plain JSON types (tuples -> lists, keys -> str), keys sorted for determinism."""
    if isinstance(x, Mapping):
        return {str(k): _plain(v) for k, v in sorted(x.items(), key=lambda kv: str(kv[0]))}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if x is None or isinstance(x, (bool, int, float, str)):
        return x
    return str(x)


def _n(k: int, noun: str) -> str:
    return f"{k:,} {noun}" + ("" if k == 1 else "s")


def _warnings(sm: Analysis, meas: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """What makes figures partial, each with a code and what to do; with a measurement, every
    warning ``onnxperf validate`` prints for it (a spec of another machine, a noisy measurement)
    and a prediction far off the measured latency."""
    out = sm.warnings()
    if sm.memory.unknown_tensors:
        out.append({"code": "memory_partial", "level": "warning",
                    "message": f"Activation memory is partial: {_n(sm.memory.unknown_tensors, 'tensor')} of "
                               "unknown size."})
    rl = sm.roofline
    if rl is not None and rl.unknown_nodes:
        out.append({"code": "latency_partial", "level": "warning",
                    "message": f"Predicted latency is partial: {_n(rl.unknown_nodes, 'node')} without a cost."})
    elif rl is not None and not rl.complete:
        out.append({"code": "latency_partial", "level": "warning",
                    "message": "Predicted latency is partial: the costs it rests on leave something out ("
                               + uncosted_text(sm.totals) + ")."})
    if meas:
        out += [{"code": "validation", "level": "warning", "message": w} for w in meas.get("warnings", [])]
        out += _error_warning(sm, meas)
    return out


def _error_warning(sm: Analysis, meas: dict[str, Any]) -> list[dict[str, Any]]:
    """A warning when the predicted end-to-end latency is more than :data:`LARGE_ERROR` off the
    measured one, with what to try (the same line ``onnxperf validate`` prints)."""
    errs = meas.get("errors") or {}
    text = large_error_warning(errs.get("end_to_end_error"), errs.get("predicted_total_s"),
                               errs.get("measured_total_s") or meas.get("latency_s"),
                               bool(getattr(sm.spec, "efficiency", None)) if meas.get("calibrated") is None
                               else meas["calibrated"])
    return [] if text is None else [{"code": "prediction_error", "level": "warning", "message": text}]


def _conventions(sm: Analysis) -> list[str]:
    a = sm
    out = [CONVENTIONS_TEXT.get(a.convention, f"convention: {a.convention}"),
           "Bytes read and written: each node reads every input (feature maps and weights) and writes every "
           "output once, with no cache reuse between nodes; intensity = operations / bytes moved.",
           "Peak activation memory: live activation bytes over the execution order (views share their input's "
           "buffer); total memory = weights + activation peak."]
    if sm.roofline is not None and sm.roofline.kernels is not None:
        out.append("Predicted time: the GPU kernel model (docs/hw.md): nodes grouped into the kernels a GPU runtime "
                   "runs (Conv/MatMul/Gemm epilogues, pointwise chains, normalizations; views and shape arithmetic "
                   "free); a kernel reads what it does not compute itself and writes what leaves it; per node "
                   "max(ops / (e_c x peak x fill), bytes / (e_m x bandwidth)), plus a launch overhead per kernel; "
                   "kernels run one after another, so latency is the sum. Throughput = batch / latency.")
    elif sm.roofline is not None:
        out.append("Predicted time per node = max(ops / peak, bytes / bandwidth) on the chosen hardware "
                   "(roofline); nodes run one after another, so latency is the sum. Throughput = batch / latency.")
    if a.shape_engines:
        out.append("Shapes from: " + ", ".join(a.shape_engines) + ".")
    return out


__all__ = ["SCHEMA", "NODE_COLUMNS", "TENSOR_COLUMNS", "build_report", "measured_section"]


class ReportPage(str):
    """The page as text (write it to a file), shown in a notebook in a frame of its own: a cell that ends
    with it displays the report, charts and all, not its length."""

    def _repr_html_(self) -> str:
        return ('<iframe title="onnxperf report" style="width:100%;height:820px;border:1px solid #dee2e6;'
                f'border-radius:8px" srcdoc="{htmllib.escape(str(self), quote=True)}"></iframe>')


def html(analysis: Any) -> ReportPage:
    """The HTML page ``onnxperf report`` writes for ``analysis`` (an :func:`onnxperf.analyze` result)
    and the options it was made with: ``analyze(m, dims={"batch": 1}, hw="rtx3090", memory="8GiB")``
    gives the page of ``onnxperf report m --dim batch=1 --hw rtx3090 --memory 8GiB``, byte for byte.
    Nothing is analyzed again (memory is computed here when ``analyze`` was given no ``hw``,
    ``memory`` or ``precision``). A :class:`ReportPage`: a ``str``, shown in a notebook as the page."""
    return ReportPage(render_html(build_report(analysis, None, report_options(analysis))))


def report_options(a: Analysis) -> dict[str, Any]:
    """The options of ``a`` as ``onnxperf report`` records them in the report (its header and JSON)."""
    given = dict(a.options)
    memory = given.get("memory")
    opts: dict[str, Any] = {
        "dims": dict(a.dims), "input_shapes": {k: list(v) for k, v in a.input_shapes},
        "convention": a.convention, "hw": given.get("hw"), "memory": memory,
        "memory_dim": given.get("memory_dim", "batch") if memory is not None else None,
    }
    if given.get("precision"):
        opts["precision"] = given["precision"]
    return opts


__all__ += ["html"]
