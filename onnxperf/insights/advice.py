"""Advice read off the execution plan: why a node takes its time, in one line, and the verdict on a whole
model, in two or three (what is slow, why, what to change and how much it saves).

Every figure here is the plan's (:mod:`onnxperf.predict.plan`): a node's limiter, its parts of time, its
share of the named peak; nothing is predicted again except the one what-if a verdict offers (the same
analysis at a lower precision, :func:`onnxperf.predict.precision.what_if`, on the same spec). The ridge a
line quotes is the page's: the named peak of the node's dtype over main-memory bandwidth.

GPU fill (:func:`onnxperf.predict.roofline.fill`): a tiled kernel with N output elements on S SMs that
each need k outputs for half their rate attains f = N / (N + S·k), so it keeps N / k SMs' worth busy;
at ``batch`` items its output per item is N / batch, and the smallest batch with N ≥ S·k (f ≥ 1/2) is

    batch_fill = ⌈S · k · batch / N⌉
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from onnxperf.cost.analysis import Costs
from onnxperf.predict.ort_threads import spec_pool
from onnxperf.predict.plan import COMPUTE, DISPATCH, FILL, MEMORY, NONE
from onnxperf.predict.precision import get, what_if
from onnxperf.predict.roofline import RooflineResult, half_rate_outputs, roofline
from onnxperf.ui.numbers import binary_bytes, pct, seconds, si

def ridge(r, spec) -> float | None:
    """The page's ridge for a row's dtype: its named peak over main-memory bandwidth."""
    bw = spec.memory_bandwidth_bytes_per_s
    return r.peak_ops_per_s / bw if r.peak_ops_per_s and bw else None


def fill_facts(r, spec, batch: int | None) -> tuple[float, int, int | None] | None:
    """(SMs' worth of work the kernel keeps busy, the SMs, the smallest batch that fills them) for a row
    the GPU's fill slows (``fill`` < 1); None for any other row. The batch is None when the model's
    batch is unknown."""
    eff = getattr(spec, "efficiency", None) or {}
    sms, per_sm = float(eff.get("gpu.sms", 0) or 0), half_rate_outputs(spec, r.peak_ops_per_s)
    if r.fill >= 1 or sms <= 0 or per_sm <= 0:
        return None
    outputs = r.fill * sms * per_sm / (1 - r.fill)
    need = math.ceil(sms * per_sm * batch / outputs - 1e-9) if batch and outputs > 0 else None
    return outputs / per_sm, int(sms), need


def _precision_of(r, precision: str | None) -> str | None:
    """The precision a row already runs at: the ``--precision`` what-if, else its stored dtype's."""
    if precision is not None:
        return precision
    return {"float16": "fp16", "bfloat16": "bf16", "int8": "int8", "uint8": "int8", "int4": "int8",
            "uint4": "int8"}.get(r.dtype) or ("fp8" if r.dtype.startswith("float8") else None)


def _lower(rows, precision: str | None) -> str | None:
    """The next lower precision to offer rows running at ``precision`` (or their stored dtypes); None at int8."""
    have = {_precision_of(r, precision) for r in rows}
    if "int8" in have:
        return None
    return "int8" if have & {"fp16", "bf16", "fp8"} else "fp16"


def _rate(r) -> str:
    unit = "FLOP/s" if r.dtype.startswith(("float", "fp", "bf", "tf")) else "OP/s"
    return f"{si(r.attained_ops_per_s, unit)}, {pct(r.peak_share)} of the {r.dtype} peak ({si(r.peak_ops_per_s, unit)})"


#: what each part of a recurrence's step is, as node_why names the one that sets its pace
STEP_PARTS = ("streaming R from the caches", "the step's product", "the cells' activations",
              "the hand-offs through the thread pool")


def _step_lead(parts: tuple[float, float, float, float] | None) -> str:
    """``, most of it X (t)``: the largest part of a step of the plan (its R stream and its product overlap:
    the smaller of the two is not part of the step's time)."""
    if not parts:
        return ""
    stream, product, cells, hand = parts
    shown = (stream if stream >= product else 0.0, product if product > stream else 0.0, cells, hand)
    k = max(range(4), key=lambda i: shown[i])
    return f", the largest part {STEP_PARTS[k]} ({seconds(shown[k])})" if shown[k] > 0 else ""


def node_why(r, spec, batch: int | None = None, precision: str | None = None) -> str:
    """Why a row of the plan takes its time, in one line, with the number that says it."""
    if r.time_s is None:
        return "not costed: its time is unknown"
    if r.bound == NONE:
        return "no work in this prediction (folded, fused away, or a view)"
    if getattr(r, "span_s", 0.0) and r.span_s >= 0.5 * r.time_s:
        return (f"broadcast loop: {seconds(r.span_s)} of its {seconds(r.time_s)} is onnxruntime's per-span cost "
                "(a broadcast input that changes every few elements, as an NHWC scale or normalization); "
                "channels-first layout, or folding it into the neighbouring Conv, makes the spans few and long")
    copies = getattr(r, "copies", 1)
    if copies > 1:
        return (f"runs {copies} times: onnxruntime gives each reader of a DequantizeLinear its own copy "
                "(EnsureUniqueDQForNodeUnit), and each dequantizes the whole tensor: "
                f"{seconds(r.time_s / copies)} each, {seconds(r.time_s)} in all")
    if r.bound == DISPATCH:
        what = "launch" if getattr(spec, "kind", "") == "gpu" else "per-node dispatch"
        return (f"dispatch-bound: {seconds(r.dispatch_s)} of its {seconds(r.time_s)} is the {what} overhead; "
                "fusing it with its neighbours" + (" or CUDA graphs" if what == "launch" else "") + " removes it")
    pool = spec_pool(spec)
    threads = getattr(r, "threads", None)
    if threads is not None and pool is not None and threads < pool:  # its work, not its dispatch, is what the threads decide
        on = "one" if threads == 1 else str(threads)
        return (f"on {on} of {pool} threads: onnxruntime's own cost model leaves this kernel unsplit (a QLinear "
                "elementwise op under 156,280 elements, a QLinearAdd or QLinearMul with a broadcast, a channels-last "
                "QLinearGlobalAveragePool at batch 1, a Gather of one index on its outermost axis), so its work "
                f"takes {pool / threads:g}x the time at all threads: {seconds(r.time_s)}")
    steps = getattr(r, "steps", 0)
    if steps:
        part = r.compute_s + r.dispatch_s
        return (f"{steps:,} steps one after another: onnxruntime's {r.op_type} runs each step's product with its "
                f"recurrent weights R and its cells before the next, re-reading R every step, about "
                f"{seconds(part / steps)} a step{_step_lead(r.step_parts)}; a larger batch runs more rows per step "
                "for the same reads")
    if r.bound == FILL:
        facts = fill_facts(r, spec, batch)
        if facts is None:
            return f"too small to fill the GPU: {_rate(r)}"
        busy, sms, need = facts
        more = f"batch ≥ {need} fills them" if need is not None else "a larger batch or input fills them"
        return f"fills {busy:.1f} of {sms} SMs: {_rate(r)}; {more}"
    if getattr(r, "assist_s", 0.0) and r.assist_s >= 0.5 * r.time_s:
        return (f"subnormal values: {seconds(r.assist_s)} of its {seconds(r.time_s)} is microcode assists on "
                "floats below the smallest normal (an attention mask far below the scores, before a Softmax); "
                "a mask of -1e4 or less, or onnxruntime's session.set_denormal_as_zero (its worker threads), removes them")
    if r.bound == COMPUTE:
        lower = _lower([r], precision)
        offer = f"--precision {lower} raises the roof" if lower is not None else "fewer operations help"
        return f"compute-bound at {_rate(r)}; {offer}"
    # memory
    where = f" from {r.level}" if r.level and r.level != "DRAM" else ""
    if not r.ops:
        return f"memory-bound: moves {binary_bytes(r.bytes)}{where} with no arithmetic"
    rd = ridge(r, spec)
    below = f", {rd / r.intensity:.3g}× below the ridge ({rd:.3g})" if rd and r.intensity and r.intensity < rd else ""
    return f"memory-bound{where}: intensity {r.intensity:.3g} op/B{below}; {_rate(r)}"


def verdict(a: Costs, rl: RooflineResult, spec: Any, precision: Any, groups: Sequence[Any],
            opportunities: Sequence[Any]) -> tuple[str, ...]:
    """Two or three lines on a whole model (its costs ``a``, at ``precision``, and their plan ``rl`` on
    ``spec``): what is slow and why (the op type with the most predicted time and its limiter, with its
    number), what to change and how much it saves (from the plan: the time lost to fill, to dispatch, a
    fusion's saving, or the plan at a lower precision on the same spec)."""
    total = rl.node_time_s
    timed = [g for g in groups if g.time_s > 0 and g.bound in (COMPUTE, FILL, MEMORY, DISPATCH)]
    if not timed or total <= 0:
        return ()
    g = timed[0]
    rows = [r for r in rl.nodes if r.op_type == g.op_type and r.time_s]
    limited = [r for r in rows if r.bound == g.bound]
    held = sum(r.time_s for r in limited)
    precision = getattr(precision, "name", None)
    first = (f"{g.op_type} takes {pct(g.share)} of the predicted {seconds(rl.latency_s)} ({g.nodes} node"
             f"{'s' if g.nodes != 1 else ''}); {pct(held / g.time_s if g.time_s else None)} of that is "
             f"{_LIMITED[g.bound]}")
    lines = [first + _detail(g.bound, limited, spec, a.batch) + "."]
    fix = _fix(a, rl, spec, g.bound, limited, precision, total)
    if fix:
        lines.append(fix)
    best = max((o for o in opportunities if o.saving_s > 0), key=lambda o: o.saving_s, default=None)
    if best is not None and best.saving_s >= 0.02 * total:
        what = best.title.split(":")[0]
        lines.append(f"Fusion: {what[:1].lower() + what[1:]} — fusing saves up to {seconds(best.saving_s)} "
                     f"({pct(best.saving_s / total)} of the node time).")
    return tuple(lines[:3])


_LIMITED = {COMPUTE: "compute-bound", FILL: "limited by how much of the GPU its kernels fill",
            MEMORY: "memory-bound", DISPATCH: "dispatch overhead"}


def _detail(bound: str, rows, spec, batch: int | None) -> str:
    """The number behind a limiter, over the rows it holds."""
    if not rows:
        return ""
    if bound == FILL:
        facts = [f for f in (fill_facts(r, spec, batch) for r in rows) if f is not None]
        if facts:
            lo, hi = min(f[0] for f in facts), max(f[0] for f in facts)
            span = f"{lo:.1f}" if round(lo, 1) == round(hi, 1) else f"{lo:.1f}-{hi:.1f}"
            return f": they keep {span} of {facts[0][1]} SMs busy"
    if bound == COMPUTE:
        shares = [r.peak_share for r in rows if r.peak_share is not None]
        if shares:
            lo, hi = pct(min(shares)), pct(max(shares))
            return f", at {lo if lo == hi else lo + '-' + hi} of the {rows[0].dtype} peak"
    if bound == MEMORY:
        moved = sum(r.bytes for r in rows)
        return f": {binary_bytes(moved)} through memory"
    if bound == DISPATCH:
        return f": {seconds(sum(r.dispatch_s for r in rows))} of overhead in {len(rows)} kernels"
    return ""


def _fix(a: Costs, rl: RooflineResult, spec: Any, bound: str, rows, precision: str | None, total: float) -> str:
    """What to change for the limiter that holds the top op type, and how much the plan says it saves."""
    if bound == FILL:
        lost = sum(r.compute_s - r.compute_s * r.fill for r in rows)
        needs = [f[2] for f in (fill_facts(r, spec, a.batch) for r in rows) if f is not None and f[2] is not None]
        at = f"batch ≥ {max(needs)} fills every SM" if needs else "a larger batch or input fills the SMs"
        return (f"Change: {at}; the time the small kernels lose to fill is {seconds(lost)} per run "
                f"({pct(lost / total)} of the node time), which a filled GPU spreads over the larger batch.")
    if bound == DISPATCH:
        over = sum(r.dispatch_s for r in rows)
        what = "CUDA graphs or fusing its kernels" if getattr(spec, "kind", "") == "gpu" else \
            "fusing its nodes (fewer, larger kernels)"
        return (f"Change: {what}; the overhead is {seconds(over)} per run ({pct(over / total)} of the node "
                "time), a larger batch spreads it over more items.")
    lower = _lower(rows, precision)
    faster = None
    if lower is not None and a.loaded is not None:
        faster = _at_precision(a, spec, lower)
        if faster is not None and faster < rl.latency_s:
            saved = rl.latency_s - faster
            return (f"Change: --precision {lower} predicts {seconds(faster)} on this hardware "
                    f"({pct(saved / rl.latency_s)} less).")
    if bound == MEMORY:
        return "Change: fewer bytes per item: a larger batch reuses each weight, fusion keeps tensors on chip."
    if bound == COMPUTE:
        # no lower precision helps here (its peak is no faster on this hardware, or the rows are int8 already)
        why = (f"--precision {lower} predicts {seconds(faster)}, no faster on this hardware" if faster is not None
               else "no lower precision to offer")
        return f"Change: fewer operations per item (a smaller input or a lighter model); {why}."
    return ""


def _at_precision(a: Costs, spec: Any, name: str) -> float | None:
    """The plan's latency for the same costs at precision ``name`` on the same spec."""
    p = get(name)
    try:
        peak = spec.peak_for(p.peak_key)
    except Exception:  # noqa: BLE001 - a spec without that peak offers nothing
        return None
    if not peak:
        return None
    return roofline(what_if(a, p), spec, p).latency_s


__all__ = ["fill_facts", "node_why", "ridge", "verdict"]
