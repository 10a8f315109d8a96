"""The timeline: the predicted per-node schedule (and, with a validation, the measured one beside it)
as Chrome trace-event JSON, the format that ui.perfetto.dev and chrome://tracing open.

Pure functions: :func:`build_trace` makes a plain dict from a :class:`~onnxperf.analysis.result.Analysis` (and a
validation result), :func:`render_trace` its JSON text; the CLI writes it with :func:`write_trace`.

Layout (schema ``onnxperf.trace/1``, see docs/trace.md):

- **Process 1, "predicted (<hardware>)"**: one complete event (``ph: "X"``) per main-graph node, in the
  analysis's node order (the stable topological order every other output uses), laid end to end from
  ts 0: the roofline runs nodes one after another, so node *i+1* starts where node *i* ends and the
  last one ends at the predicted latency. A calibrated spec's per-run overhead (``overhead_run_s``)
  is one more slice, ``(run overhead)``, after the nodes.
- **An uncosted node** (no rule, unknown shape, a rule error) is there once, with ``dur`` 0 and
  ``args.uncosted`` saying why: its time is unknown, not zero, and none is invented.
- **Fusions** keep one slice per node, each with the time the roofline charged it, so the slices still
  add up to the latency and every node is found once: a node that runs inside another's kernel (an
  epilogue, a constant folded into a conv's weights, the Q/DQ nodes of a QLinearConv, a GPU kernel's
  pointwise members) has ``args.fusion`` (what kind) and ``args.fused_into`` (the key of the node that
  starts the kernel), and that node lists them in ``args.fused_members``. Members charged nothing
  (absorbed, folded, inside) are zero-length; an epilogue keeps its arithmetic.
- **Two threads**: the nodes that take time (and the uncosted ones) on thread 1; the nodes the plan runs
  no work for (folded when the runtime loads the model or builds its engine, views: 92% of Swin-T's
  nodes on a GPU preset) on thread 2, "no work at run time", each a zero-length slice at the point of
  the schedule where it stands, so the timeline shows the work and every node is still found once.
- **Name scopes**: on thread 1, the nodes whose names share a scope (``/layer1/layer1.0/conv1/Conv`` is in
  ``layer1`` and ``layer1/layer1.0``) are enclosed, run by run, in one slice per scope (``cat: scope``, up
  to :data:`SCOPE_DEPTH` levels), which the viewers draw as the parents of the node slices: a block's
  time at a glance. A scope slice spans exactly its nodes' slices; it has no ``args.key``.
- **Subgraphs** (If/Loop/Scan bodies) get no slices of their own: the roofline times a control-flow
  node as a whole, its rule carrying its bodies' cost (a Loop's times its trip count), so its one slice
  holds them, with ``args.subgraph_nodes`` (how many) and ``args.partial`` when some are uncosted.
  Slicing a body would mean apportioning a time the model never gave per body node.
- **Process 2, "measured (onnxruntime <version>, <provider>)"** (with a validation): the same nodes in
  the same order. A group of nodes onnxruntime measured as one kernel (a fused Conv+Relu) is one slice,
  at its first node, with the group's measured time and ``args.nodes`` naming its members; the other
  members are zero-length slices with ``args.measured_in``. Nodes onnxruntime folded or removed when it
  built the session are zero-length with ``args.folded``. Kernels mapped to no node, and the rest of the
  measured latency, close the process as ``(unmapped kernels)`` and ``(outside kernels)``.

Times are in microseconds (the format's unit) rounded to 6 decimals (picoseconds); other floats to 9
significant digits. Names from the model are plain JSON strings (never markup), made valid UTF-8.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

from onnxperf import __version__
from onnxperf.base.errors import OptionError
from onnxperf.cost.walker import UNCOSTED
from onnxperf.predict.plan import ABSORBED_TEXT, FOLDED_TEXT, NO_KERNEL_TEXT, OWN, members
from onnxperf.ui.output import write_output

SCHEMA = "onnxperf.trace/1"
PREDICTED_PID = 1
MEASURED_PID = 2
TID = 1
#: the thread of the nodes the plan runs no work for (folded, views)
IDLE_TID = 2
#: name-scope levels drawn as parent slices
SCOPE_DEPTH = 3
#: the slice after the nodes that holds a calibrated spec's per-run overhead
RUN_OVERHEAD = "(run overhead)"
UNMAPPED = "(unmapped kernels)"
OUTSIDE = "(outside kernels)"
UNKNOWN = "unknown"
_US = 1e6
#: decimals of a time in microseconds: picoseconds
_TIME_DECIMALS = 6
_SIGNIFICANT = 9


def build_trace(summary, validation: Any = None) -> dict[str, Any]:
    """The trace of ``summary`` (it needs a roofline: ``--hw``), with the measured process when a
    ``validation`` is given (see :func:`with_measured`). Raises :class:`~onnxperf.base.errors.OptionError`
    without a roofline."""
    trace = predicted_trace(summary)
    return trace if validation is None else with_measured(trace, validation)


def predicted_trace(summary) -> dict[str, Any]:
    """The predicted schedule of ``summary`` (module docstring: process 1)."""
    rl = summary.roofline
    if rl is None:
        raise OptionError("--trace needs --hw: the timeline lays out the roofline's predicted time of each node")
    a = summary
    spec = summary.spec
    rows = {r.key: r for r in rl.nodes}
    dispatch = any(r.dispatch_s for r in rl.nodes)
    fusion = _fusion_args(rl)
    below = _subgraph_counts(a.nodes)
    hw_name = str(getattr(spec, "name", None) or getattr(spec, "id", None) or rl.spec_id)
    events = _metadata(PREDICTED_PID, f"predicted ({hw_name})", "nodes in execution order (one after another)")
    events.append({"ph": "M", "name": "thread_name", "pid": PREDICTED_PID, "tid": IDLE_TID, "ts": 0,
                   "args": {"name": "no work at run time (folded, views)"}})
    spans = []
    for n in a.main_nodes:
        r = rows[n.key]
        args: dict[str, Any] = {
            "key": n.key, "name": n.name, "op_type": n.op_type, "domain": n.domain, "family": n.family,
            "status": n.status, "exact": n.exact,
            # an uncosted node's cost is unknown, not 0
            **{f: (None if n.status in UNCOSTED else getattr(n, f))
               for f in ("macs", "flops", "int_ops", "bytes_read", "bytes_written")},
        }
        if n.note:
            args["note"] = n.note
        if r.time_s is None or n.status in UNCOSTED:
            bound = UNKNOWN
            args["uncosted"] = f"{n.status}: {n.note}" if n.note else n.status
            args["predicted_s"] = None
        else:
            bound = r.bound
            args.update({
                "dtype": r.dtype, "roofline_ops": r.ops, "roofline_bytes": r.bytes,
                "intensity_ops_per_byte": _sig(r.intensity), "attainable_ops_per_s": _sig(r.attainable_ops_per_s),
                "attained_ops_per_s": _sig(r.attained_ops_per_s), "peak_share": _sig(r.peak_share),
                "predicted_s": _sig(r.time_s), "share": _sig(r.share),
            })
            if r.fill < 1:
                args["fill"] = _sig(r.fill)
            if dispatch:
                args["dispatch_s"] = _sig(r.dispatch_s)
        args["bound"] = bound
        sub = below.get(str(n.id))
        if sub is not None:
            args["subgraph_nodes"] = sub[0]
            if sub[1] and bound != UNKNOWN:
                args["partial"] = (f"{sub[1]} of {sub[0]} subgraph nodes not costed: "
                                   "this node's time is a lower bound")
        args.update(fusion.get(n.key, {}))
        idle = r.time_s == 0 and n.status not in UNCOSTED
        spans.append((n.op_type, f"{n.family},{bound}", r.time_s or 0.0, args, IDLE_TID if idle else TID))
    if rl.run_overhead_s:
        spans.append((RUN_OVERHEAD, "runtime", rl.run_overhead_s,
                      {"what": "the runtime's own work around the nodes, once per run (the spec's overhead_run_s)",
                       "predicted_s": _sig(rl.run_overhead_s)}))
    laid = _laid_out(PREDICTED_PID, spans)
    events += laid + _scopes(laid, {n.key: n.name for n in a.main_nodes})
    m = a.model
    other = {
        "schema": SCHEMA, "onnxperf_version": __version__,
        "model": PurePath(m.path).name if m.path else None, "graph_name": m.graph_name,
        "dims": dict(a.dims), "hardware": getattr(spec, "id", rl.spec_id), "hardware_name": hw_name,
        "precision": None if summary.precision is None else getattr(summary.precision, "name", str(summary.precision)),
        "predicted_latency_s": _sig(rl.latency_s),
        "latency_is_lower_bound": bool(rl.lower_bound or rl.side in ("lower", "unknown")),
        "plain_roofline": rl.plain,
        "uncosted_nodes": rl.unknown_nodes, "complete": rl.complete, "bound": rl.side or "exact",
        "run_overhead_s": _sig(rl.run_overhead_s),
        "scope": "main-graph nodes; an If/Loop/Scan node's slice holds its bodies' time",
    }
    return {"traceEvents": events, "displayTimeUnit": "ms", "otherData": other}


def with_measured(trace: dict[str, Any], validation: Any) -> dict[str, Any]:
    """``trace`` (from :func:`predicted_trace`) with the measured process added, laid out in the
    order of its predicted nodes (module docstring: process 2). ``validation``: what
    :func:`onnxperf.products.validate.compare.validate` returns, or the mapping ``onnxperf report --validate``
    builds (``groups`` of ``keys`` and ``measured_s``, else ``node_times_s``; ``latency_s``,
    ``provider``, ``device``)."""
    nodes = [e["args"] for e in trace["traceEvents"]
             if e.get("pid") == PREDICTED_PID and e.get("ph") == "X" and "key" in e.get("args", {})]
    m = _measurement(validation)
    known = {x["key"] for x in nodes}
    stray = [k for g in m["groups"] for k in g["keys"] if k not in known]
    if stray:
        raise OptionError(f"--trace: the validation names node(s) {', '.join(stray[:3])} that the analysis does not "
                          "have: it measured another model")
    order = {x["key"]: i for i, x in enumerate(nodes)}
    group_of: dict[str, dict[str, Any]] = {}
    for g in m["groups"]:
        g["keys"] = sorted(g["keys"], key=order.__getitem__)  # execution order
        for k in g["keys"]:
            group_of[k] = g
    info = {x["key"]: x for x in nodes}
    spans = []
    kernels_s = 0.0
    for x in nodes:
        key = x["key"]
        base = {"key": key, "name": x["name"], "op_type": x["op_type"]}
        g = group_of.get(key)
        if g is None:
            spans.append((x["op_type"], "not measured", 0.0, base | {"not_measured": "no measured time for this node"}))
        elif g["folded"]:
            spans.append((x["op_type"], "folded", 0.0, base | {
                "folded": "onnxruntime ran no kernel for it: folded or removed when it built the session",
                "nodes": g["keys"]}))
        elif g["keys"][0] != key:
            spans.append((x["op_type"], "fused", 0.0, base | {
                "measured_in": g["keys"][0],
                "what": f"measured as one kernel with node {g['keys'][0]}: its time is on that slice"}))
        else:
            ops = [info[k]["op_type"] for k in g["keys"]]
            name = "+".join(ops) if len(ops) <= 4 else "+".join(ops[:3]) + f"+{len(ops) - 3} more"
            args = base | {"measured_s": _sig(g["measured_s"]), "nodes": g["keys"],
                           "node_names": [info[k]["name"] for k in g["keys"]]}
            if g["kernels"]:
                args["measured_kernels"] = list(g["kernels"])
                args["measured_op_types"] = list(g["kernel_ops"])
            kernels_s += g["measured_s"]
            spans.append((name, "kernel" if len(ops) == 1 else "kernel,fused", g["measured_s"], args))
    if m["unmapped_s"] > 0:
        kernels_s += m["unmapped_s"]
        spans.append((UNMAPPED, "runtime", m["unmapped_s"], {
            "what": "measured kernels mapped to no node (layout reorders, copies)",
            "measured_s": _sig(m["unmapped_s"])}))
    latency = m["latency_s"]
    if latency is not None and latency > kernels_s:
        spans.append((OUTSIDE, "runtime", latency - kernels_s, {
            "what": "the measured latency less its kernels: the runtime's own work around them",
            "measured_s": _sig(latency - kernels_s)}))
    events = list(trace["traceEvents"]) + _metadata(MEASURED_PID, m["label"], "nodes in the predicted order")
    events += _laid_out(MEASURED_PID, spans)
    other = dict(trace.get("otherData", {}))
    other.update({"measured_latency_s": _sig(latency), "measured_kernels_s": _sig(kernels_s),
                  "onnxruntime_version": m["version"], "provider": m["provider"]})
    return {**trace, "traceEvents": events, "otherData": other}


def render_trace(trace: dict[str, Any]) -> str:
    """``trace`` as JSON text: keys sorted, one event per line, non-ASCII kept (valid UTF-8: a lone
    surrogate from a model's name becomes ``?``), a final newline. Same trace, same bytes."""
    clean = _clean(trace)
    parts = []
    for k in sorted(clean):
        v = clean[k]
        if k == "traceEvents":
            text = "[\n" + ",\n".join(_dumps(e) for e in v) + "\n]" if v else "[]"
        else:
            text = _dumps(v)
        parts.append(f"{_dumps(k)}: {text}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def write_trace(path: str | None, trace: dict[str, Any]) -> None:
    """Write :func:`render_trace` of ``trace`` to ``path`` (atomically; never over an input of the run)."""
    write_output(render_trace(trace), path, option="--trace")


# -- predicted: what the roofline did to each node ---------------------------------------------------

#: what each placement says in a slice's ``args.folded``
_FOLDED = {"constant folding": FOLDED_TEXT, "absorbed": ABSORBED_TEXT, "no kernel": NO_KERNEL_TEXT}


def _fusion_args(rl) -> dict[str, dict[str, Any]]:
    """Node key -> the ``args`` that say how the execution plan runs it (its placement,
    :mod:`onnxperf.predict.plan`): the fusion, the kernel it runs in, the members of the one it starts."""
    out: dict[str, dict[str, Any]] = {}
    for r in rl.nodes:
        if r.how is None:
            continue
        args: dict[str, Any] = {"fusion": r.how}
        if r.how in _FOLDED:
            args["folded"] = _FOLDED[r.how]
        if r.runs_as is not None:
            args["runs_as"] = r.runs_as
        if r.runs != OWN and r.kernel is not None and r.kernel != r.key:
            args["fused_into"] = r.kernel
        out[r.key] = args
    for root, ks in members({r.key: r for r in rl.nodes}, [r.key for r in rl.nodes]).items():
        out.setdefault(root, {})["fused_members"] = ks
    return out


def _subgraph_counts(nodes) -> dict[str, tuple[int, int]]:
    """Main-graph node id -> (nodes in its subgraphs at any depth, how many of them are uncosted)."""
    out: dict[str, list[int]] = {}
    for n in nodes:
        if n.scope:
            v = out.setdefault(n.scope.split("/", 1)[0], [0, 0])
            v[0] += 1
            v[1] += n.status in UNCOSTED
    return {k: (v[0], v[1]) for k, v in out.items()}


# -- measured -----------------------------------------------------------------------------------------

def _get(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _measurement(v: Any) -> dict[str, Any]:
    """The parts of a validation the measured process shows, whichever form it comes in."""
    groups = []
    for g in _get(v, "groups") or ():
        if isinstance(g, (tuple, list)):
            keys, ms, folded, kernels, kernel_ops = g[0], g[1], False, (), ()
        else:
            ids = _get(g, "original_node_ids")
            keys = ids if ids is not None else _get(g, "keys", ())
            ms, folded = _get(g, "measured_s"), bool(_get(g, "folded", False))
            kernels, kernel_ops = _get(g, "measured_names", ()) or (), _get(g, "measured_op_types", ()) or ()
        groups.append({"keys": [str(k) for k in keys], "measured_s": float(ms or 0.0), "folded": folded,
                       "kernels": tuple(kernels), "kernel_ops": tuple(kernel_ops)})
    if not groups:
        groups = [{"keys": [str(k)], "measured_s": float(t), "folded": False, "kernels": (), "kernel_ops": ()}
                  for k, t in (_get(v, "node_times_s") or {}).items() if t is not None]
    stats = _get(v, "latency")
    latency = _get(stats, "mean_s") if stats is not None else _get(v, "latency_s")
    version = _get(v, "ort_version")
    providers = _get(v, "providers") or ()
    provider = providers[0] if providers and not isinstance(providers, str) else _get(v, "provider")
    device = _get(v, "device")
    runtime = f"onnxruntime {version}" if version else (str(device) if device else "onnxruntime")
    label = f"measured ({runtime}, {provider})" if provider else f"measured ({runtime})"
    return {"groups": groups, "latency_s": None if latency is None else float(latency),
            "unmapped_s": float(_get(v, "unmapped_s") or 0.0), "label": label, "version": version,
            "provider": provider}


# -- events -------------------------------------------------------------------------------------------

def _metadata(pid: int, process: str, thread: str) -> list[dict[str, Any]]:
    """The ``M`` events that name a process and its one thread, and keep the processes in order."""
    return [
        {"ph": "M", "name": "process_name", "pid": pid, "tid": TID, "ts": 0, "args": {"name": process}},
        {"ph": "M", "name": "process_sort_index", "pid": pid, "tid": TID, "ts": 0, "args": {"sort_index": pid}},
        {"ph": "M", "name": "thread_name", "pid": pid, "tid": TID, "ts": 0, "args": {"name": thread}},
    ]


def _scopes(laid: list[dict[str, Any]], names: dict[str, str]) -> list[dict[str, Any]]:
    """The name-scope slices over the node slices of thread 1 (module docstring): for each level up to
    :data:`SCOPE_DEPTH`, one slice per run of consecutive timed nodes whose names share the scope."""
    work = [e for e in laid if e["tid"] == TID and "key" in e["args"] and e["dur"] > 0]
    paths = [_scope_path(names.get(e["args"]["key"], "")) for e in work]
    out = []
    for depth in range(1, SCOPE_DEPTH + 1):
        run: list[dict[str, Any]] = []
        scope = None
        for e, path in zip(work + [None], paths + [()]):
            here = path[:depth] if len(path) >= depth else None
            if here != scope or e is None:
                if scope is not None and len(run) > 1:  # a scope of one node adds nothing to it
                    start, end = run[0]["ts"], run[-1]["ts"] + run[-1]["dur"]
                    out.append({"ph": "X", "name": "/".join(scope), "cat": "scope", "ts": start,
                                "dur": round(end - start, _TIME_DECIMALS), "pid": run[0]["pid"], "tid": TID,
                                "args": {"scope": "/".join(scope), "nodes": len(run),
                                         "predicted_s": _sig(sum(x["args"].get("predicted_s") or 0 for x in run))}})
                scope, run = here, []
            if here is not None and e is not None:
                run.append(e)
    return out


def _scope_path(name: str) -> tuple[str, ...]:
    """A node name's scope: its ``/``-separated parts less the last (the node's own name)."""
    parts = [p for p in name.split("/") if p]
    return tuple(parts[:-1])


def _laid_out(pid: int, spans: list[tuple]) -> list[dict[str, Any]]:
    """Complete events end to end from ts 0: each start is the rounded running sum of the durations
    before it, and each duration the difference of two rounded starts, so ``ts + dur`` is the next
    ``ts`` and the durations add up to the running total (both within rounding)."""
    out = []
    total = 0.0
    start = 0.0
    for name, cat, seconds, args, *tid in spans:
        total += seconds
        end = round(total * _US, _TIME_DECIMALS)
        out.append({"ph": "X", "name": name, "cat": cat, "ts": start,
                    "dur": round(end - start, _TIME_DECIMALS), "pid": pid, "tid": tid[0] if tid else TID, "args": args})
        start = end
    return out


def _sig(x: float | None) -> float | None:
    """``x`` to :data:`_SIGNIFICANT` significant digits (None stays None; a non-finite value is None)."""
    if x is None or not math.isfinite(x):
        return None
    return float(f"{x:.{_SIGNIFICANT}g}")


def _clean(x: Any) -> Any:
    """Valid UTF-8 strings and finite floats all the way down (JSON has no NaN)."""
    if isinstance(x, str):
        return x.encode("utf-8", "replace").decode("utf-8")
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, Mapping):
        return {_clean(str(k)): _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    return x


def _dumps(x: Any) -> str:
    return json.dumps(x, sort_keys=True, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


__all__ = ["SCHEMA", "build_trace", "predicted_trace", "with_measured", "render_trace", "write_trace"]
