"""Check models against a budget and the lints: one :class:`Verdict` per model.

Many models run in worker processes (``concurrent.futures.ProcessPoolExecutor``); verdicts come
back in the order the models were given, whatever order the workers finish in. A model that
cannot be read gets an ``error`` verdict with a one-line message; the others are still checked.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, replace
from typing import Any

from onnxperf.analysis.compose import compose
from onnxperf.base import dtypes
from onnxperf.base.errors import DimBindingError, OnnxPerfError
from onnxperf.analysis.result import Analysis
from onnxperf.cost.request import Request
from onnxperf.graph.loader import load
from onnxperf.insights.llm.section import LLMOptions
from onnxperf.insights.partial import op_counts, reasons
from onnxperf.predict.kv_names import EXPORTED
from onnxperf.predict.memory import MemoryResult
from onnxperf.predict.precision import FLOAT_TYPES
from onnxperf.shapes.infer import input_dim_names
from onnxperf.shapes.tensor import info_of
from onnxperf.ui.numbers import binary_bytes, seconds, si
from onnxperf.ui.progress import advance
from onnxperf.products.check.ep import unsupported_nodes
from onnxperf.products.check.budget import Budget
from onnxperf.products.check.lints import Finding, LintContext, NodeRef, node_ref, run_lints

#: budget attributes that need the decoder-LLM figures (a model that is no decoder step skips them)
_LLM_ATTRS = ("max_kv_cache_bytes", "min_decode_tokens_per_s", "max_time_to_first_token_s", "min_context_fit")

PASS = "pass"
FAIL = "fail"
UNKNOWN = "unknown"  # a limit that cannot be verified (partial totals): fails unless allow_partial
ERROR = "error"  # the model could not be read


@dataclass(frozen=True)
class BudgetResult:
    """One limit of the budget, applied to one model."""

    key: str  # the budget key, e.g. "max_macs"
    status: str  # pass | fail | unknown
    limit: Any
    actual: Any
    message: str  # one line
    nodes: tuple[NodeRef, ...] = ()

    def to_dict(self) -> dict:
        return {"key": self.key, "status": self.status, "limit": self.limit, "actual": self.actual,
                "message": self.message, "nodes": [n.to_dict() for n in self.nodes]}


@dataclass(frozen=True)
class Verdict:
    model: str
    status: str  # pass | fail | error
    error: str | None = None
    budgets: tuple[BudgetResult, ...] = ()
    findings: tuple[Finding, ...] = ()
    #: headline figures (name, value); values are exact ints, floats or None
    figures: tuple[tuple[str, Any], ...] = ()
    #: bindings that were applied / given but that this model has no use for
    dims: tuple[tuple[str, int], ...] = ()
    ignored_dims: tuple[str, ...] = ()
    #: dims this run bound by itself (an unbound batch dim set to 1), one note each
    defaulted: tuple[str, ...] = ()

    @property
    def exit_code(self) -> int:
        return {PASS: 0, FAIL: 1, ERROR: 2}[self.status]

    @property
    def failed_budgets(self) -> tuple[BudgetResult, ...]:
        return tuple(b for b in self.budgets if b.status in (FAIL, UNKNOWN))

    @property
    def errors(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity == "error")

    def to_dict(self) -> dict:
        return {"model": self.model, "verdict": self.status, "exit_code": self.exit_code, "error": self.error,
                "figures": dict(self.figures), "dims": dict(self.dims), "ignored_dims": list(self.ignored_dims),
                "defaulted": list(self.defaulted), "budgets": [b.to_dict() for b in self.budgets], "findings": [f.to_dict() for f in self.findings]}


def exit_code(verdicts: Sequence[Verdict]) -> int:
    """2 when any model could not be read, else 1 when any failed, else 0."""
    codes = {v.exit_code for v in verdicts}
    return 2 if 2 in codes else (1 if 1 in codes else 0)


# ---------------------------------------------------------------- figures and limits

def model_size_bytes(a: Analysis, precision=None) -> int:
    """Bytes of every constant tensor (weights and shape constants, subgraphs included) by its
    declared dtype: the model's data, whether stored inline or as external data. ``precision``
    (a ``--precision`` what-if): floating-point constants at its width."""
    if a.loaded is None:
        return a.totals.param_bytes
    floats = new_et = None
    if precision is not None:
        floats, new_et = FLOAT_TYPES, precision.elem_type
    total = 0
    stack = [a.loaded.graph]
    while stack:
        g = stack.pop()
        for r in (*g.initializers.values(), *g.constants.values()):
            total += dtypes.nbytes(new_et, r.numel) if floats and r.elem_type in floats else r.nbytes
        stack.extend(g.subgraphs.values())
    return total


def figures(sm: Analysis) -> dict[str, Any]:
    a, mem = sm, sm.memory
    r = sm.roofline
    uncosted = a.coverage.unsupported + a.coverage.unknown_shape + a.coverage.rule_errors
    return {
        "params": a.totals.params, "model_size_bytes": model_size_bytes(a, getattr(sm, "precision", None)),
        "macs": a.totals.macs, "flops": a.totals.flops, "uncosted_nodes": uncosted,
        "activation_peak_bytes": mem.peak_bytes, "total_memory_bytes": mem.total_bytes,
        "unknown_size_tensors": mem.unknown_tensors,
        "hw": None if r is None else r.spec_id,
        **({"precision": sm.precision.name} if getattr(sm, "precision", None) is not None else {}),
        "latency_s": None if r is None else r.latency_s,
        "throughput_per_s": None if r is None else r.throughput_per_s(sm.batch),
        "batch": sm.batch,
        "latency_unknown_nodes": None if r is None else r.unknown_nodes,
        "complete": a.totals.complete and mem.complete and (r is None or r.complete),
        "bound": a.totals.bound,
        **_llm_figures(sm),
    }


def _llm_figures(sm: Analysis) -> dict[str, Any]:
    sec = getattr(sm, "llm", None)
    f = sec.figures if sec is not None else None
    if f is None:
        return {}
    return {"kv_cache_bytes": f.kv_cache_bytes, "context": f.context,
            "decode_tokens_per_s": f.decode_tokens_per_s, "time_to_first_token_s": f.prefill_latency_s,
            "largest_context": f.context_fit.value if f.context_fit is not None else None}


def _max_limit(key: str, limit: int | float, actual: int | float | None, partial: str | None, allow_partial: bool,
               fmt, side: str = "lower") -> BudgetResult:
    """A "no more than" limit; ``partial`` says why ``actual`` is not exact, ``side`` which side of the
    truth it is on: a lower bound over the limit fails for sure, an upper bound within it passes for
    sure; the other cases cannot be verified (unless ``allow_partial``, for a lower bound within).
    ``actual`` None: unknown (nothing of it counted while something was left out,
    :class:`onnxperf.cost.analysis.Totals`): it cannot be verified, ``allow_partial`` or not, since
    there is no lower bound to accept, only nothing."""
    if actual is None:
        return BudgetResult(key, UNKNOWN, limit, None, f"{key}: cannot verify: unknown, nothing of it counted"
                                                       + (f" ({partial})" if partial else ""))
    if partial and side == "upper":
        if actual <= limit:
            return BudgetResult(key, PASS, limit, actual, f"{key}: at most {fmt(actual)}, within {fmt(limit)} "
                                                          f"({partial})")
        return BudgetResult(key, UNKNOWN, limit, actual,
                            f"{key}: cannot verify: at most {fmt(actual)}, over {fmt(limit)}, but {partial}")
    if partial and side == "unknown" and not allow_partial:
        return BudgetResult(key, UNKNOWN, limit, actual, f"{key}: cannot verify: {fmt(actual)}, but {partial}")
    if actual > limit:
        more = f" (at least: {partial})" if partial else ""
        return BudgetResult(key, FAIL, limit, actual, f"{key}: {fmt(actual)} is over the limit {fmt(limit)}{more}")
    if partial and not allow_partial:
        return BudgetResult(key, UNKNOWN, limit, actual,
                            f"{key}: cannot verify: {fmt(actual)} counted so far, but {partial}")
    more = f" (partial: {partial})" if partial else ""
    return BudgetResult(key, PASS, limit, actual, f"{key}: {fmt(actual)} within {fmt(limit)}{more}")


def _uncosted(a: Analysis) -> str | None:
    """Why the cost totals are not exact (None: they are): nodes left out or counted in part, sizes
    replaced by upper bounds."""
    c, t = a.coverage, a.totals
    parts = []
    if t.lower_bounded:
        parts.append(f"{op_counts(t.lower_bounded)} counted in part (trip count unknown)")
    if t.upper_bounded:
        parts.append(f"an upper bound: {op_counts(t.upper_bounded)} at the largest the model can produce")
    if c.complete:
        return ", ".join(parts) or None
    if c.unknown_shape:
        binds = f"; bind {', '.join('--dim ' + d + '=N' for d in c.dims_to_bind)}" if c.dims_to_bind else ""
        parts.append(f"{c.unknown_shape} nodes have unknown shapes{binds}")
    if c.unsupported:
        parts.append(f"{c.unsupported} nodes are unsupported")
    if c.rule_errors:
        parts.append(f"a cost rule failed on {c.rule_errors} nodes")
    return ", ".join(parts)


def _strict(sm: Analysis) -> list[BudgetResult]:
    """--strict (``strict = true``): a model with any partial figure fails, whatever its limits."""
    why = reasons(sm)
    if not why:
        return []
    return [BudgetResult("strict", UNKNOWN, True, False, "strict: figures are partial: " + "; ".join(why))]


def _memory_partial(mem: MemoryResult) -> str | None:
    parts = ([f"{mem.unknown_tensors} tensors have unknown sizes"] if mem.unknown_tensors else []) + (
        ["some sizes are upper bounds"] if mem.upper else [])
    return ", ".join(parts) or None


def evaluate(sm: Analysis, budget: Budget) -> list[BudgetResult]:
    """Every limit the budget sets, in the order of the budget keys."""
    a, mem, b = sm, sm.memory, budget
    out: list[BudgetResult] = []

    def count(x):
        return f"{x:,}" if abs(x) < 1000 else f"{si(x)} ({x:,})"

    ap = b.allow_partial
    if b.max_params is not None:
        out.append(_max_limit("max_params", b.max_params, a.totals.params, None, ap, count))
    if b.max_model_size_bytes is not None:
        out.append(_max_limit("max_model_size", b.max_model_size_bytes, model_size_bytes(a, sm.precision), None, ap,
                              binary_bytes))
    cside = a.totals.side or "lower"
    if b.max_macs is not None:
        out.append(_max_limit("max_macs", b.max_macs, a.totals.macs, _uncosted(a), ap, count, cside))
    if b.max_flops is not None:
        out.append(_max_limit("max_flops", b.max_flops, a.totals.flops, _uncosted(a), ap, count, cside))
    if b.max_activation_peak_bytes is not None:
        out.append(_max_limit("max_activation_peak", b.max_activation_peak_bytes, mem.peak_bytes,
                              _memory_partial(mem), ap, binary_bytes, mem.side or "lower"))
    if b.max_total_memory_bytes is not None:
        out.append(_max_limit("max_total_memory", b.max_total_memory_bytes, mem.total_bytes,
                              _memory_partial(mem), ap, binary_bytes, mem.side or "lower"))
    r = sm.roofline
    partial_latency = None if r is None or not r.side else (
        f"{r.unknown_nodes} nodes have no predicted time" if r.unknown_nodes else _uncosted(a))
    if r is None:
        for key, limit in (("max_latency", b.max_latency_s), ("min_throughput", b.min_throughput_per_s)):
            if limit is not None:
                out.append(BudgetResult(key, UNKNOWN, limit, None, f"{key}: cannot verify without a hardware spec (hw)"))
    if b.max_latency_s is not None and r is not None:
        out.append(_max_limit("max_latency", b.max_latency_s, r.latency_s, partial_latency, ap,
                              lambda x: f"{seconds(x)} on {r.spec_id}"
                              + (" (plain roofline: an estimate, not a bound)" if r.plain and x == r.latency_s else ""),
                              r.side or "lower"))
    if b.min_throughput_per_s is not None and r is not None:
        tput = r.throughput_per_s(sm.batch)
        limit = b.min_throughput_per_s
        shown = "unbounded" if tput is None else f"{si(tput)}/s"
        if tput is not None and tput >= limit and r.side == "upper":
            # an upper-bound latency: this throughput is a lower bound, and it meets the limit: a sure pass
            out.append(BudgetResult("min_throughput", PASS, limit, tput,
                                    f"min_throughput: at least {shown} (batch {sm.batch}) on {r.spec_id} meets "
                                    f"{si(limit)}/s ({partial_latency})"))
        elif tput is not None and tput < limit and r.side in ("upper", "unknown"):
            out.append(BudgetResult("min_throughput", UNKNOWN, limit, tput,
                                    f"min_throughput: cannot verify: {partial_latency}"))
        elif tput is not None and tput < limit:
            # a partial latency is a lower bound, so this throughput is an upper bound: a sure failure
            out.append(BudgetResult("min_throughput", FAIL, limit, tput,
                                    f"min_throughput: {shown} (batch {sm.batch}) on {r.spec_id} is under {si(limit)}/s"))
        elif partial_latency and not ap:
            out.append(BudgetResult("min_throughput", UNKNOWN, limit, tput,
                                    f"min_throughput: cannot verify: {partial_latency}"))
        else:
            out.append(BudgetResult("min_throughput", PASS, limit, tput,
                                    f"min_throughput: {shown} (batch {sm.batch}) on {r.spec_id} meets {si(limit)}/s"))
    out += _llm_limits(sm, budget)
    out += _structural(sm, budget)
    return out


def _at(r: BudgetResult, where: str) -> BudgetResult:
    from dataclasses import replace

    return replace(r, message=f"{r.message} ({where})")


def _llm_limits(sm: Analysis, b: Budget) -> list[BudgetResult]:
    """The decoder-LLM limits, at the bound batch and the budget's context (skipped for a model
    that is not a decoder step with a KV cache: they do not apply to it)."""
    sec = getattr(sm, "llm", None)
    f = sec.figures if sec is not None else None
    if f is None:
        return []
    out: list[BudgetResult] = []
    at = f"batch {f.batch}, context {f.context:,}" + (", KV cache in place" if f.kv_runtime != EXPORTED else "") + (
        f", one device of {f.devices}" if f.devices > 1 else "")
    d = f.decode
    partial = None if d.complete else "some nodes of the decode step are not costed"
    ap = b.allow_partial
    if b.max_kv_cache_bytes is not None:
        kv = f.kv_cache_bytes
        if kv is None:
            out.append(BudgetResult("max_kv_cache", UNKNOWN, b.max_kv_cache_bytes, None,
                                    "max_kv_cache: cannot verify: a cache dim other than batch and past is symbolic"))
        else:
            out.append(_at(_max_limit("max_kv_cache", b.max_kv_cache_bytes, kv, None, ap, binary_bytes), at))
    if b.min_decode_tokens_per_s is not None:
        limit = b.min_decode_tokens_per_s
        tps = f.decode_tokens_per_s
        if f.hardware is None:
            out.append(BudgetResult("min_decode_tokens_per_s", UNKNOWN, limit, None,
                                    "min_decode_tokens_per_s: cannot verify without a hardware spec (hw)"))
        elif tps is None:
            out.append(BudgetResult("min_decode_tokens_per_s", UNKNOWN, limit, None,
                                    "min_decode_tokens_per_s: cannot verify: some nodes have no predicted time"))
        elif tps < limit:
            out.append(BudgetResult("min_decode_tokens_per_s", FAIL, limit, tps,
                                    f"min_decode_tokens_per_s: {si(tps)}/s ({at}) on {f.hardware} is under "
                                    f"{si(limit)}/s"))
        elif partial and not ap:
            out.append(BudgetResult("min_decode_tokens_per_s", UNKNOWN, limit, tps,
                                    f"min_decode_tokens_per_s: cannot verify: {partial}"))
        else:
            out.append(BudgetResult("min_decode_tokens_per_s", PASS, limit, tps,
                                    f"min_decode_tokens_per_s: {si(tps)}/s ({at}) on {f.hardware} meets {si(limit)}/s"
                                    + (" (a plain roofline: an estimate, not a bound)"
                                       if f.decode.latency_is_plain else "")))
    if b.max_time_to_first_token_s is not None:
        t = f.prefill_latency_s
        if t is None:
            out.append(BudgetResult("max_time_to_first_token", UNKNOWN, b.max_time_to_first_token_s, None,
                                    "max_time_to_first_token: cannot verify without a hardware spec (hw), or some "
                                    "nodes have no predicted time"))
        else:
            out.append(_at(_max_limit("max_time_to_first_token", b.max_time_to_first_token_s, t,
                                      None if f.prefill_complete else "some nodes of the prefill are not costed", ap,
                                      seconds), f"prompt {f.prompt:,}, batch {f.batch}, on {f.hardware}"))
    if b.min_context_fit is not None:
        fit = f.context_fit
        limit = b.min_context_fit
        mem = binary_bytes(b.device_memory_bytes)
        value = fit.value if fit is not None else None
        if value is not None and value >= limit:
            out.append(BudgetResult("min_context_fit", PASS, limit, value,
                                    f"min_context_fit: {value:,} tokens fit {mem} at batch {f.batch} "
                                    f"(at least {limit:,})"))
        else:
            shown = "none" if value is None else f"{value:,}"
            out.append(BudgetResult("min_context_fit", FAIL, limit, value,
                                    f"min_context_fit: {shown} tokens fit {mem} at batch {f.batch}, under {limit:,}"))
    return out


def _structural(sm: Analysis, b: Budget) -> list[BudgetResult]:
    a = sm
    out: list[BudgetResult] = []
    opset = dict(a.model.opsets).get("")
    if b.min_opset is not None or b.max_opset is not None:
        lo = b.min_opset if b.min_opset is not None else 1
        hi = b.max_opset
        limit = [lo, hi]
        span = f"{lo}..{hi if hi is not None else ''}"
        if opset is None:
            out.append(BudgetResult("opset", PASS, limit, None, "opset: the model uses no ai.onnx ops"))
        elif opset < lo or (hi is not None and opset > hi):
            out.append(BudgetResult("opset", FAIL, limit, opset, f"opset: ai.onnx {opset} is outside {span}"))
        else:
            out.append(BudgetResult("opset", PASS, limit, opset, f"opset: ai.onnx {opset} within {span}"))
    if b.allowed_domains is not None:
        allowed = set(b.allowed_domains)
        bad = [n for n in a.nodes if (n.domain or "ai.onnx") not in allowed]
        doms = sorted({n.domain or "ai.onnx" for n in bad})
        out.append(_list_result("allowed_domains", list(b.allowed_domains), doms, bad,
                                f"nodes in domain(s) {', '.join(map(repr, doms))}"))
    if b.allowed_op_types is not None:
        allowed = {x if "::" in x else f"::{x}" for x in b.allowed_op_types}
        allowed |= {"::" + x.split("::", 1)[1] for x in b.allowed_op_types if x.startswith("ai.onnx::")}
        bad = [n for n in a.nodes if f"{n.domain}::{n.op_type}" not in allowed]
        ops = sorted({f"{n.domain}::{n.op_type}" if n.domain else n.op_type for n in bad})
        out.append(_list_result("allowed_op_types", list(b.allowed_op_types), ops, bad,
                                f"op types not allowed: {', '.join(ops)}"))
    if b.static_shapes:
        out.append(_static_shapes(a))
    if b.allowed_dtypes is not None:
        out.append(_dtypes_result(a, b.allowed_dtypes))
    if b.execution_provider is not None:
        bad_ep = unsupported_nodes(a, b.execution_provider)
        if bad_ep:
            reasons = sorted({why for _, why in bad_ep})
            msg = f"execution_provider: {len(bad_ep)} nodes cannot run on {b.execution_provider}: " + "; ".join(reasons[:5])
            out.append(BudgetResult("execution_provider", FAIL, b.execution_provider, len(bad_ep), msg,
                                    tuple(node_ref(n) for n, _ in bad_ep[:50])))
        else:
            out.append(BudgetResult("execution_provider", PASS, b.execution_provider, 0,
                                    f"execution_provider: every node has a {b.execution_provider} kernel"))
    return out


def _list_result(key: str, limit: list, offenders: list[str], bad_nodes, what: str) -> BudgetResult:
    if offenders:
        k = len(bad_nodes)
        return BudgetResult(key, FAIL, limit, offenders, f"{key}: {k} node{'s' if k != 1 else ''}: {what}",
                            tuple(node_ref(n) for n in bad_nodes[:50]))
    return BudgetResult(key, PASS, limit, [], f"{key}: every node allowed")


def _static_shapes(a: Analysis) -> BudgetResult:
    """Graph inputs and outputs must declare fixed shapes in the file (bindings do not count:
    the file is what gets deployed)."""
    bad: list[NodeRef] = []
    loaded = a.loaded
    assert loaded is not None
    inits = loaded.graph.initializers
    for kind, seq in (("input", loaded.proto.graph.input), ("output", loaded.proto.graph.output)):
        for vi in seq:
            if kind == "input" and vi.name in inits:
                continue
            ti = info_of(vi)
            if ti is None or not ti.is_static:
                bad.append(NodeRef(kind, vi.name, vi.name))
    if bad:
        names = ", ".join(repr(r.name) for r in bad[:10])
        return BudgetResult("static_shapes", FAIL, True, False,
                            f"static_shapes: {len(bad)} graph inputs/outputs declare dynamic or unknown shapes: {names}",
                            tuple(bad[:50]))
    return BudgetResult("static_shapes", PASS, True, True, "static_shapes: every graph input and output is static")


def _dtypes_result(a: Analysis, allowed: tuple[str, ...]) -> BudgetResult:
    seen: dict[str, list[str]] = {}
    for name, ti in sorted((a.tensors or {}).items()):
        if ti.elem_type == 0:
            continue
        dt = dtypes.name(ti.elem_type)
        if dt not in allowed:
            seen.setdefault(dt, []).append(name)
    if seen:
        parts = ", ".join(f"{dt} ({len(v)} tensors, e.g. {v[0]!r})" for dt, v in sorted(seen.items()))
        refs = tuple(NodeRef("tensor", n, n) for v in seen.values() for n in v[:10])
        return BudgetResult("allowed_dtypes", FAIL, list(allowed), sorted(seen),
                            f"allowed_dtypes: tensors of other dtypes: {parts}", refs)
    return BudgetResult("allowed_dtypes", PASS, list(allowed), [], "allowed_dtypes: every tensor's dtype is allowed")


# ---------------------------------------------------------------- one model, many models

def check_model(path: str, budget: Budget, request: Request | None = None) -> Verdict:
    """Check one model against ``budget``: the model at ``request`` (its input shapes and convention;
    the budget's dims, hardware, precision and LLM limits added, as this model has the dims). A model
    that cannot be read gives an ``error`` verdict, not an exception."""
    try:
        return _check(path, budget, request if request is not None else Request(None, default_batch=True))
    except OnnxPerfError as exc:
        return Verdict(path, ERROR, error=str(exc))
    except MemoryError:
        return Verdict(path, ERROR, error=f"{path}: out of memory")


def _check(path: str, budget: Budget, request: Request) -> Verdict:
    loaded = load(path)
    input_shapes = tuple(request.input_shapes.items())
    names = set(input_dim_names(loaded))
    dims = {k: v for k, v in budget.dims if k in names}
    ignored = tuple(k for k, _ in budget.dims if k not in names)
    real_inputs = {vi.name for vi in loaded.proto.graph.input} - set(loaded.graph.initializers)
    shapes = {k: v for k, v in input_shapes if k in real_inputs}
    ignored += tuple(f"input {k}" for k, _ in input_shapes if k not in real_inputs)
    named = {d for v in shapes.values() for d in v if isinstance(d, str)}  # batchx3x224x224
    dims.update({k: v for k, v in budget.dims if k in named})
    ignored = tuple(k for k in ignored if k not in named)
    llm = None
    if any(getattr(budget, attr) is not None for attr in _LLM_ATTRS):
        llm = LLMOptions(full=True, context=budget.context, prompt=budget.prompt, required=False,
                         memory_bytes=budget.device_memory_bytes, kv_runtime=budget.kv_runtime,
                         kv_precision=budget.kv_precision, devices=budget.devices)
    sm = compose(replace(request, model=loaded, dims=dims, input_shapes=shapes, hw=budget.hw, llm=llm,
                         precision=budget.precision))
    results = evaluate(sm, budget)
    if budget.strict:
        results += _strict(sm)
    findings = run_lints(LintContext(sm, sm.memory, budget.lints))
    failed = any(r.status in (FAIL, UNKNOWN) for r in results) or any(f.severity == "error" for f in findings)
    return Verdict(path, FAIL if failed else PASS, None, tuple(results), tuple(findings),
                   tuple(figures(sm).items()), tuple(sorted(dict(sm.dims).items())), ignored,
                   tuple(n for n in sm.notes if n.startswith("unbound batch dim ")))


def _context():
    # fork is fast and safe here: the parent has started no threads (onnxruntime sessions are never
    # created by check, and its progress draws from the main thread: `Progress(threaded=False)`).
    # Elsewhere, spawn.
    if sys.platform == "linux" and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


def check_models(paths: Sequence[str], budget: Budget, request: Request | None = None,
                 jobs: int | None = None) -> list[Verdict]:
    """Verdicts for every model, in the order given, each at ``request`` (:func:`check_model`). ``jobs``
    worker processes (default: one per CPU, at most one per model); with one job or one model
    everything runs in this process."""
    request = request if request is not None else Request(None, default_batch=True)
    shapes = tuple(sorted(request.input_shapes.items()))
    n = len(paths)
    workers = min(n, jobs if jobs else (os.cpu_count() or 1))

    if workers <= 1:
        verdicts = []
        for i, p in enumerate(paths):
            advance(i, n, "models")
            verdicts.append(check_model(p, budget, request))
    else:
        verdicts = []
        with ProcessPoolExecutor(max_workers=workers, mp_context=_context()) as pool:
            futures = [pool.submit(check_model, p, budget, request) for p in paths]
            for i, (p, fut) in enumerate(zip(paths, futures)):
                advance(i, n, "models")
                try:
                    verdicts.append(fut.result())
                except BrokenProcessPool:
                    verdicts.append(Verdict(p, ERROR, error=f"{p}: the worker process checking it died "
                                                            "(killed, or out of memory)"))
    advance(n, n, "models")
    _check_bindings_used(verdicts, budget, shapes)
    return verdicts


def _check_bindings_used(verdicts: Sequence[Verdict], budget: Budget, shapes) -> None:
    """An input shape that no readable model has is a typo, not a model's business: refuse it. A
    dim is not: every model without it says so in its note (a folder of static exports checked
    with ``--dim batch=1`` goes on)."""
    read = [v for v in verdicts if v.status != ERROR]
    if not read:
        return
    for k, _ in shapes:
        if all(f"input {k}" in v.ignored_dims for v in read):
            raise DimBindingError(f"--input-shape {k}: no model has an input named {k!r}")


__all__ = ["BudgetResult", "ERROR", "FAIL", "PASS", "UNKNOWN", "Verdict", "check_model", "check_models",
           "evaluate", "exit_code", "figures", "model_size_bytes"]
