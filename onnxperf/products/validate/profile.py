"""onnxruntime's profiler JSON -> per-node times of the timed runs.

The file (``SessionOptions.enable_profiling``; checked against onnxruntime 1.31.1) is a Chrome
trace: a JSON list of complete events (``"ph": "X"``) with ``ts`` and ``dur`` in microseconds.

* ``cat == "Session"``, ``name == "model_run"``: one per ``InferenceSession.run``; it is written
  after the node events of that run, so runs are delimited by time windows, not by file order.
  Other Session events (``model_loading_uri``, ``session_initialization``,
  ``SequentialExecutor::Execute``) are ignored.
* ``cat == "Node"``, ``name == "<node name>_kernel_time"``: one kernel call, with
  ``args.op_name``, ``args.provider`` and ``args.node_index`` (the node's index in the session
  graph; subgraph bodies number their nodes from 0 again). Older versions also wrote
  ``_fence_before`` / ``_fence_after`` events: ignored.
* A control-flow node (If, Loop, Scan, and contrib beam/greedy search) has its own event whose
  duration *includes* its body; the body nodes have separate events inside its time window.
  The parent's event is dropped (counting it would count the body twice) and each body event is
  labelled with its outermost main-graph ancestor (:attr:`NodeTiming.parent`). With the default
  sequential executor, time-window nesting is exactly call nesting.

Only node events inside the LAST ``runs`` model_run windows are kept: the timed runs, never the
warm-up. Times are aggregated per node and divided by the number of runs kept.
"""

from __future__ import annotations

import json
import os
import statistics
from dataclasses import dataclass
from typing import Any

from onnxperf.base.errors import InputError

KERNEL_SUFFIX = "_kernel_time"
#: ops whose event duration includes the events of their subgraph bodies
CONTROL_FLOW_OPS = frozenset({"If", "Loop", "Scan", "BeamSearch", "GreedySearch", "Sampling", "WhisperBeamSearch"})


#: the name onnxruntime gives the Casts its InsertCastTransformer adds when a session is created: a float16 node
#: without a float16 kernel on the provider runs on the float kernel between them
#: (onnxruntime/core/optimizer/insert_cast_transformer.cc)
INSERTED_CAST_PREFIX = "InsertedPrecisionFreeCast_"


def inserted_casts(timings) -> tuple[int, float]:
    """(count, measured seconds per run) of the Casts onnxruntime inserted at session creation
    (:data:`INSERTED_CAST_PREFIX`): work the model's graph does not hold."""
    ts = [t for t in timings if t.op_type == "Cast" and t.name.startswith(INSERTED_CAST_PREFIX)]
    return len(ts), sum(t.typical_s_per_run for t in ts)


@dataclass(frozen=True)
class NodeTiming:
    """Measured time of one node of the session graph, per timed run.

    ``name`` is the session graph's node name (the ``_kernel_time`` suffix removed);
    ``calls_per_run`` is usually 1 (more for nodes inside a Loop body, less than 1 when a branch
    runs only in some runs); ``node_index`` is onnxruntime's index (main graph or body);
    ``parent`` is the main-graph control-flow node whose body holds this node, else None;
    ``median_s_per_run`` is the median over the timed runs of the node's time in each run (robust
    to the odd slow run that a shared machine gives; calibration uses it).
    """

    name: str
    op_type: str
    provider: str
    mean_s_per_run: float
    calls_per_run: float
    node_index: int | None = None
    parent: str | None = None
    median_s_per_run: float | None = None

    @property
    def typical_s_per_run(self) -> float:
        """The node's time per run that validation compares with predictions: the median over the
        timed runs when known (one slow run of a shared machine does not move it), else the mean."""
        return self.median_s_per_run if self.median_s_per_run is not None else self.mean_s_per_run


@dataclass(frozen=True)
class _Event:
    name: str
    op_type: str
    provider: str
    ts: float
    dur: float
    node_index: int | None


def load_events(profile: str | os.PathLike | list[dict[str, Any]] | dict[str, Any]) -> list[dict[str, Any]]:
    """The event list of a profile given as a path, a parsed list, or a ``{"traceEvents": [...]}``."""
    data: Any = profile
    if isinstance(profile, (str, os.PathLike)):
        try:
            with open(profile, encoding="utf-8") as fh:
                data = json.load(fh)
        except (OSError, ValueError) as exc:
            raise InputError(f"{profile}: not a readable onnxruntime profile ({exc})") from None
    if isinstance(data, dict):
        data = data.get("traceEvents", [])
    if not isinstance(data, list):
        raise InputError("profile: expected a JSON list of trace events")
    return [e for e in data if isinstance(e, dict)]


def run_windows(events: list[dict[str, Any]]) -> list[tuple[float, float]]:
    """(start, end) in µs of every ``model_run``, in time order."""
    runs = [(float(e.get("ts", 0)), float(e.get("ts", 0)) + float(e.get("dur", 0)))
            for e in events if e.get("cat") == "Session" and e.get("name") == "model_run"]
    return sorted(runs)


def _node_events(events: list[dict[str, Any]]) -> list[_Event]:
    out = []
    for e in events:
        name = e.get("name", "")
        if e.get("cat") != "Node" or not isinstance(name, str) or not name.endswith(KERNEL_SUFFIX):
            continue
        args = e.get("args") or {}
        idx = args.get("node_index")
        try:
            node_index = None if idx is None else int(idx)
        except (TypeError, ValueError):
            node_index = None
        out.append(_Event(name[: -len(KERNEL_SUFFIX)], str(args.get("op_name", "")), str(args.get("provider", "")),
                          float(e.get("ts", 0)), float(e.get("dur", 0)), node_index))
    return out


def _in_run(ev: _Event, start: float, end: float) -> bool:
    # 1 µs of slack: ts and dur are rounded separately, and runs are far apart.
    return start - 1 <= ev.ts and ev.ts + ev.dur <= end + 1


def _in_body(ev: _Event, parent: _Event) -> bool:
    # strict at the end: a 0 µs event that starts when the parent ends is its successor
    end = parent.ts + parent.dur
    return parent.ts <= ev.ts < end and ev.ts + ev.dur <= end and ev is not parent


def parse_profile(profile: str | os.PathLike | list[dict[str, Any]] | dict[str, Any],
                  runs: int | None = None) -> tuple[NodeTiming, ...]:
    """Per-node mean times over the last ``runs`` model_run windows (all of them when None).

    Result order: first appearance in the kept runs (execution order). Raises
    :class:`~onnxperf.base.errors.InputError` when the profile holds fewer runs than asked.
    """
    events = load_events(profile)
    windows = run_windows(events)
    if runs is not None:
        if runs <= 0:
            return ()
        if len(windows) < runs:
            raise InputError(f"profile holds {len(windows)} model_run event(s), fewer than the {runs} timed runs")
        windows = windows[-runs:]
    if not windows:
        return ()
    kept, run_of = [], {}
    for ev in _node_events(events):
        w = next((i for i, (s, e) in enumerate(windows) if _in_run(ev, s, e)), None)
        if w is not None:
            kept.append(ev)
            run_of[id(ev)] = w
    # Control-flow parents: drop their own events; label body events with the outermost one.
    parents = sorted((ev for ev in kept if ev.op_type in CONTROL_FLOW_OPS), key=lambda ev: (ev.ts, -ev.dur))
    outer: list[_Event] = []
    for p in parents:
        if not any(_in_body(p, q) for q in outer):
            outer.append(p)
    acc: dict[tuple[str | None, str, int | None, str], list[float]] = {}
    per_run: dict[tuple[str | None, str, int | None, str], list[float]] = {}
    order: list[tuple[str | None, str, int | None, str]] = []
    meta: dict[tuple[str | None, str, int | None, str], tuple[str, str]] = {}
    for ev in sorted(kept, key=lambda ev: ev.ts):
        if ev.op_type in CONTROL_FLOW_OPS:
            continue
        parent = next((p.name for p in outer if _in_body(ev, p)), None)
        key = (parent, ev.name, ev.node_index, ev.op_type)
        if key not in acc:
            acc[key] = [0.0, 0]
            per_run[key] = [0.0] * len(windows)
            order.append(key)
            meta[key] = (ev.op_type, ev.provider)
        acc[key][0] += ev.dur
        acc[key][1] += 1
        per_run[key][run_of[id(ev)]] += ev.dur
    n = len(windows)
    return tuple(NodeTiming(name, meta[k][0], meta[k][1], acc[k][0] * 1e-6 / n, acc[k][1] / n, idx, parent,
                            statistics.median(per_run[k]) * 1e-6)
                 for k in order for parent, name, idx, _ in [k])


__all__ = ["CONTROL_FLOW_OPS", "NodeTiming", "load_events", "parse_profile", "run_windows"]
