"""The deployment figures of a decoder step, each an exact formula of batch, context and prompt
length where it is one, evaluated at the point the user asks about.

Definitions (also in docs/conventions.md, "Decoder LLMs"):

* **context** C: the tokens in the KV cache after a decode step, the new one included. A decode
  step at context C is the graph bound to past = C − 1 and new = 1 (and total = C).
* **prompt** P: the tokens of the first request. A graph whose new-token dim is symbolic runs the
  prefill as one pass: past = 0, new = P. A decode-only export (new tokens fixed at 1) can only
  prefill token by token: P steps at contexts 1..P; its MACs are the exact sum, its time the sum of
  the steps' predicted times (the step time is piecewise linear in the context: it is interpolated
  from at most :data:`PREFILL_SAMPLES` evaluated steps, an upper estimate, and said so).
* **KV-cache bytes** = kv_bytes_per_token · batch · C, where kv_bytes_per_token is the sum over
  the cache inputs of the product of their non-batch, non-past dims times the element size
  (2 · layers · kv_heads · head_dim · bytes for the usual separate K and V).
* **memory** at (batch, C) = weights + the decode step's activation peak (:mod:`onnxperf.predict.memory`),
  which holds the past cache and what the step writes (the present cache) as the graph has them.
* **traffic** of a step, split: weight reads (per node, its initializer inputs, capped at what
  the node's rule reads beyond its other inputs: a Gather reads its rows, not the table), KV-cache traffic (reads and
  writes of the cache inputs, the present outputs and their copies by data-movement ops: the
  Concat with the new keys, a Cast, a Transpose, the Expand of GQA), and the rest (activations).
* **decode tokens/s** = batch / step latency; **prefill tokens/s** = batch · P / prefill latency;
  **time to first token** = the prefill latency (the prefill's last position yields the first token).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from math import ceil
from fractions import Fraction
from typing import Any

from onnxperf.base import dtypes
from onnxperf.cost.analysis import Costs
from onnxperf.cost.request import Request
from onnxperf.predict.precision import FLOAT_TYPES, get, kv_what_if, priced
from onnxperf.predict.plan import dominant
from onnxperf.predict.roofline import band_of, roofline
from onnxperf.base.formula import NotPolynomialError, Polynomial, fit_many, largest_int
from onnxperf.graph.loader import LoadedModel
from onnxperf.predict.memory import liveness
from onnxperf.predict.kv_names import EXPORTED, IN_PLACE
from onnxperf.predict.parallel import ShardPlan, allreduce_s, shard, shard_plan
from onnxperf.predict.serving import APPEND_NOTE, KV_MOVES, MOVE_NOTE, READ_NOTE, in_place, shared_buffers
from onnxperf.cost.ops.registry import combine_bounds
from onnxperf.insights.llm.recognize import DecoderStep
from onnxperf.ui.progress import advance

#: how many steps of a token-by-token prefill are evaluated (the others are interpolated)
PREFILL_SAMPLES = 17
#: the figures of a step, in the order :func:`_step_values` gives them
STEP_FIGURES = ("macs", "flops", "bytes", "weight_read_bytes", "kv_bytes", "activation_peak_bytes",
                "total_memory_bytes")


@dataclass(frozen=True)
class Step:
    """One evaluated run of the graph: a decode step, or a one-pass prefill."""

    batch: int
    past: int
    new: int
    #: the step's cost totals: None where nothing of one was counted while something was left out
    #: (:class:`onnxperf.cost.analysis.Totals`): unknown, never 0
    macs: int | None
    flops: int | None
    bytes: int | None
    weight_read_bytes: int
    kv_bytes: int
    activation_peak_bytes: int
    total_memory_bytes: int
    complete: bool
    latency_s: float | None = None
    memory_bound_share: float | None = None
    #: KV bytes per token per sequence read off the step's present outputs (None when any is unknown)
    kv_bytes_per_token_seen: int | None = None
    #: which side of the truth the step's figures are on ("" exact, lower, upper, unknown): an If whose
    #: branch is an input (a merged decoder) makes them an upper bound; ``complete`` is true only when exact
    side: str = ""
    #: the limiter holding most of the step's predicted time (:func:`onnxperf.predict.plan.dominant`), its
    #: share of the latency, and whether the latency is a lower bound (no prediction is one now)
    bound: str | None = None
    bound_share: float | None = None
    latency_is_lower_bound: bool = False
    #: the latency is a plain roofline's (no efficiencies): an estimate, not a bound
    latency_is_plain: bool = False
    #: tensor parallel (``--devices``): the all-reduces of the step, their bytes and their time (in
    #: ``latency_s``; None when the spec gives no interconnect)
    allreduces: int = 0
    allreduce_bytes: int = 0
    allreduce_s: float | None = 0.0

    @property
    def other_bytes(self) -> int | None:
        """``bytes − weight_read_bytes − kv_bytes`` (at least 0); None when ``bytes`` is unknown."""
        return None if self.bytes is None else max(self.bytes - self.weight_read_bytes - self.kv_bytes, 0)

    @property
    def dominant(self) -> str:
        """Which bytes the step moves most of: weights, kv_cache or activations (of those known)."""
        parts = {"weights": self.weight_read_bytes, "kv_cache": self.kv_bytes, "activations": self.other_bytes}
        known = {k: v for k, v in parts.items() if v is not None}
        return max(known, key=lambda k: (known[k], k == "weights"))


@dataclass(frozen=True)
class Fit:
    """The largest value of ``dim`` (context or batch) whose memory fits ``budget_bytes``."""

    dim: str
    budget_bytes: int
    value: int | None  # None: even 1 does not fit
    total_bytes: int | None
    method: str  # "polynomial" (confirmed by analysis) or "search"


@dataclass(frozen=True)
class CurvePoint:
    """One decode step of the chart: tokens/s and memory at (batch, context)."""

    batch: int
    context: int
    latency_s: float | None
    tokens_per_s: float | None
    total_memory_bytes: int
    kv_cache_bytes: int | None
    dominant: str
    complete: bool


@dataclass(frozen=True)
class LLMFigures:
    step: DecoderStep
    batch: int
    context: int
    prompt: int
    weight_bytes: int
    decode: Step
    #: the prefill of ``prompt`` tokens: one pass (prefill-capable graph) or the sum of decode steps
    prefill_method: str  # "one pass" | "token by token"
    prefill_macs: int | None  # None: unknown (never 0)
    prefill_flops: int | None
    prefill_latency_s: float | None
    prefill_complete: bool
    #: figure name -> polynomial (None with the reason when it is not one)
    formulas: tuple[tuple[str, Polynomial | None, str], ...]
    hardware: str | None = None
    context_fit: Fit | None = None
    batch_fit: Fit | None = None
    notes: tuple[str, ...] = field(default=())
    #: decode tokens/s and memory over a grid of contexts and batches (for the report's chart)
    curve: tuple[CurvePoint, ...] = ()
    #: the KV cache's bytes per token in the figures' precision (the cache inputs' own, or a
    #: ``--precision`` what-if's width for floating-point caches)
    kv_bytes_per_token: int | None = None
    #: the prefill's time is interpolated between evaluated steps (a token-by-token prefill of more
    #: steps than :data:`PREFILL_SAMPLES`): an upper estimate, shown as one (``≤``)
    prefill_upper_estimate: bool = False
    #: how the runtime keeps the KV cache (:mod:`onnxperf.predict.serving`): every step figure is under it
    kv_runtime: str = EXPORTED
    #: the decode step's KV traffic over the cache's bytes at the context, under ``kv_runtime`` and as
    #: exported (None where either is unknown)
    kv_moved_per_cache: float | None = None
    exported_kv_moved_per_cache: float | None = None
    #: ``--kv-precision``: the cache's own precision what-if (None: the cache as the figures' precision has it)
    kv_precision: Any | None = None
    #: tensor parallel (``--devices``): the count, a device's share of the KV cache, and the smallest
    #: count (a power of 2) whose per-device memory fits the capacity (None: not asked, or none up to 64)
    devices: int = 1
    kv_share: float = 1.0
    smallest_devices: Fit | None = None
    interconnect_bytes_per_s: float | None = None
    #: the error band of the device class on decoder LLMs (``band.llm.*`` of the spec), None where no
    #: published LLM point was held out on it
    band: Any = None

    @property
    def kv_cache_bytes_per_device(self) -> int | None:
        """One device's share of the KV cache (tensor parallel: ``ceil(kv_heads / N)`` of its KV heads)."""
        c = self.kv_cache_bytes
        return None if c is None else c if self.kv_share == 1 else ceil(c * self.kv_share)

    @property
    def kv_cache_bytes(self) -> int | None:
        k = self.kv_bytes_per_token
        return None if k is None else k * self.batch * self.context

    @property
    def decode_tokens_per_s(self) -> float | None:
        lat = self.decode.latency_s
        return self.batch / lat if lat else None

    @property
    def prefill_tokens_per_s(self) -> float | None:
        lat = self.prefill_latency_s
        return self.batch * self.prompt / lat if lat else None

    def formula(self, name: str) -> Polynomial | None:
        return next((p for n, p, _ in self.formulas if n == name), None)


class _Evaluator:
    """Analyses of one loaded decoder at (batch, past, new) points, cached: each point is the request
    with the step's dims bound (``request.at(...)``), its other dims, input shapes, convention and
    precision kept."""

    def __init__(self, request: Request, step: DecoderStep, spec: Any | None, kv_runtime: str = EXPORTED,
                 kv_precision: str | None = None, devices: int = 1):
        self.loaded, self.step, self.spec = request.model, step, spec
        self.devices = devices
        self.plan: ShardPlan | None = None
        self.kv_runtime = kv_runtime
        self.kv_precision = get(kv_precision) if kv_precision is not None else None
        self._caches = tuple(c.name for c in step.caches)
        self.precision = get(request.precision) if request.precision is not None else None
        own = (step.batch, step.past, step.new, step.total)
        self.request = replace(request, dims={k: v for k, v in request.dims.items() if k not in own},
                               default_batch=False, hw=None, memory_budget=None, llm=None)
        self._cache: dict[tuple[int, int, int, bool], Step] = {}
        self._kv_names: frozenset[str] | None = None
        self.analyses = 0
        #: the model's parameter bytes (the same at every point)
        self.param_bytes = 0

    def analysis(self, batch: int, past: int, new: int) -> Costs:
        self.analyses += 1
        # past may be 0 (an empty cache), which the public entry points refuse
        a = priced(self.request.at(**self.step.bindings(batch, past, new)), empty_dims=True)
        if self.kv_precision is not None:
            a = kv_what_if(a, self._kv(a), self.kv_precision)
        if self.kv_runtime == IN_PLACE:
            a = in_place(a, self._caches)
        self.plan = None
        if self.devices > 1:  # one device's share (tensor parallel), and the all-reduces that join them
            self.plan = shard_plan(a, self._caches, self.step.kv_heads, self.devices)
            a = shard(a, self.plan)
        return a

    def __call__(self, batch: int, past: int, new: int, timed: bool = False) -> Step:
        key = (batch, past, new, timed and self.spec is not None)
        hit = self._cache.get(key)
        if hit is None:
            a = self.analysis(batch, past, new)
            hit = self._cache[key] = self._step(a, batch, past, new, key[3])
        return hit

    def _kv(self, a: Costs) -> frozenset[str]:
        """The cache tensors: inputs, presents, and their copies by data-movement ops."""
        if self._kv_names is None:
            kv = {c.name for c in self.step.caches} | {c.present for c in self.step.caches if c.present}
            for n in a.main_nodes:  # execution order: a copy's source is seen before it
                if n.op_type in KV_MOVES and not n.domain and n.inputs and n.inputs[0] is not None \
                        and n.inputs[0].name in kv:
                    kv.update(o.name for o in n.outputs if o is not None)
            self._kv_names = frozenset(kv)
        return self._kv_names

    def _step(self, a: Costs, batch: int, past: int, new: int, timed: bool) -> Step:
        kv = self._kv(a)
        weights = set(self.loaded.graph.initializers) | set(self.loaded.graph.constants)
        tensors = a.tensors or {}

        def size(ref) -> int:
            ti = tensors.get(ref.name) if ref is not None else None
            return ti.nbytes if ti is not None and ti.is_static else 0

        shared = shared_buffers(a) if self.kv_runtime == IN_PLACE else {}

        def stored(name: str) -> int:
            """In place: the bytes of the cache a copy of it stands for (read once, as stored)."""
            while name in shared and not shared[name][1]:
                name = shared[name][0]
            ti = tensors.get(name)
            return ti.nbytes if ti is not None and ti.is_static else 0

        w_read = kv_bytes = 0
        for n in a.main_nodes:
            w = sum(size(i) for i in n.inputs if i is not None and i.name in weights)
            others = sum(size(i) for i in n.inputs if i is not None and i.name not in weights)
            w = min(w, max(n.bytes_read - others, 0))  # a Gather reads its rows (and its indices)
            w_read += w
            if shared and n.note == APPEND_NOTE:
                kv_bytes += n.bytes_read + n.bytes_written  # the new token in, and appended
            elif shared and n.note.endswith(READ_NOTE):
                kv_bytes += sum(stored(i.name) for i in n.inputs if i is not None and i.name in kv)
            elif not shared or n.note != MOVE_NOTE:
                k_in = sum(size(i) for i in n.inputs if i is not None and i.name in kv)
                k_out = sum(size(o) for o in n.outputs if o is not None and o.name in kv)
                kv_bytes += min(k_in, n.bytes_read - w) + min(k_out, n.bytes_written)
        mem = liveness(a, shared or None)
        t = a.totals
        self.param_bytes = t.param_bytes
        lat = share = bound = bound_share = None
        lower = plain = False
        if timed:
            r = roofline(a, self.spec, self.precision)
            if r.complete:
                lat, lower, plain = r.latency_s, r.lower_bound, r.plain
                if self.plan is not None:
                    comm = [allreduce_s(b, self.devices, self.spec) for _, b in self.plan.allreduces]
                    lat = None if None in comm else lat + sum(comm)
                share = r.memory_bound_time_s / r.latency_s if r.latency_s else None
                by = r.time_by_bound()
                bound = dominant(by)
                bound_share = by[bound] / r.latency_s if r.latency_s and bound in by else None
        seen = 0
        for c in self.step.caches:
            ti = tensors.get(c.present) if c.present else None
            if ti is None or not ti.is_static or not batch or past + new <= 0:
                seen = None
                break
            seen += ti.nbytes // (batch * (past + new))
        side = combine_bounds(t.side, mem.side)
        plan = self.plan
        ar = (0, 0, 0.0) if plan is None else (
            len(plan.allreduces), plan.allreduce_bytes,
            None if not timed or self.spec is None else (lambda c: None if None in c else sum(c))(
                [allreduce_s(b, self.devices, self.spec) for _, b in plan.allreduces]))
        return Step(batch, past, new, t.macs, t.flops, t.bytes_total, w_read, kv_bytes, mem.peak_bytes,
                    mem.total_bytes, t.complete and mem.complete and side != "upper", lat, share, seen, side, bound,
                    bound_share, lower, plain, *ar)


def _values(s: Step) -> list[int]:
    return [getattr(s, f) for f in STEP_FIGURES]


def _power_sum(poly: Polynomial, var: str, upto: int, fixed: dict[str, int]) -> Fraction:
    """Σ_{c=1}^{upto} poly(c) with the other dims fixed (exact)."""
    return sum((poly({**fixed, var: c}) for c in range(1, upto + 1)), Fraction(0)) if upto <= 4096 else \
        _power_sum_closed(poly, var, upto, fixed)


def _power_sum_closed(poly: Polynomial, var: str, upto: int, fixed: dict[str, int]) -> Fraction:
    """The same sum by fitting it: Σ_{c≤n} of a degree-d polynomial is a degree-(d+1) polynomial in n."""
    d = poly.degree + 1
    pts = list(range(1, d + 3))
    sums, acc = {}, Fraction(0)
    for n in range(1, max(pts) + 1):
        acc += poly({**fixed, var: n})
        sums[n] = acc
    (p,) = fit_many(lambda b: [int(sums[b["n"]] * 1)] if sums[b["n"]].denominator == 1 else [0], ("n",), degree=d)
    if p is None:  # rational sums: evaluate directly
        return sum((poly({**fixed, var: c}) for c in range(1, upto + 1)), Fraction(0))
    return p({"n": upto})


def figures(model: LoadedModel | Request, step: DecoderStep, batch: int = 1, context: int = 2048, prompt: int = 512,
            convention: str = "default", spec: Any | None = None, budget_bytes: int | None = None,
            fixed: dict[str, int] | None = None, with_formulas: bool = True, curve: bool = False,
            precision: Any | None = None, kv_runtime: str = EXPORTED, kv_precision: str | None = None,
            devices: int = 1) -> LLMFigures:
    """Every figure of :class:`LLMFigures` for ``batch`` sequences at ``context`` tokens with a
    prompt of ``prompt`` tokens (see the module docstring for the definitions).

    ``model``: the request every point derives from (its model loaded; its dims other than the step's
    batch, past, new and total, its input shapes, convention and precision hold at every point), or
    a loaded decoder with ``fixed`` dims, ``convention`` and ``precision`` making that request."""
    if isinstance(model, Request):
        request = model
    else:
        request = Request(model, dims=dict(fixed or {}), convention=convention,
                          precision=None if precision is None else precision.name)
    ev = _Evaluator(request, step, spec, kv_runtime, kv_precision, devices)
    precision = ev.precision
    notes: list[str] = []
    new_fixed = step.new if isinstance(step.new, int) else 1
    if new_fixed != 1 and not step.prefill_capable:
        notes.append(f"this graph takes {new_fixed} new tokens per step: the decode figures are for such a step")
    dec = ev(batch, max(context - new_fixed, 0), new_fixed, timed=True)

    formulas: list[tuple[str, Polynomial | None, str]] = []
    decode_polys: dict[str, Polynomial | None] = {}
    if with_formulas:
        try:
            polys = fit_many(lambda b: _values(_complete(ev(b["batch"], b["context"] - new_fixed, new_fixed))),
                             ("batch", "context"), degree=2, scale=new_fixed)
            far = ev(2 * batch + 1, 4 * context + 3 - new_fixed, new_fixed)
            polys = _verified(polys, [({"batch": batch, "context": context}, dec),
                                      ({"batch": 2 * batch + 1, "context": 4 * context + 3}, far)])
            for name, (p, why) in zip(STEP_FIGURES, polys):
                decode_polys[name] = p
                formulas.append((f"decode.{name}", p, why or ("" if p is not None else
                                 "not a polynomial of degree ≤ 2 in batch, context")))
        except NotPolynomialError as exc:
            formulas += [(f"decode.{name}", None, str(exc)) for name in STEP_FIGURES]

    # prefill
    if step.prefill_capable:
        method = "one pass"
        pre = ev(batch, 0, prompt, timed=True)
        pre_macs, pre_flops, pre_lat, pre_ok = pre.macs, pre.flops, pre.latency_s, pre.complete
        if with_formulas:
            try:
                polys = fit_many(lambda b: _values(_complete(ev(b["batch"], 0, b["prompt"]))), ("batch", "prompt"),
                                 degree=3)
                far = ev(2 * batch + 1, 0, 4 * prompt + 3)
                polys = _verified(polys, [({"batch": batch, "prompt": prompt}, pre),
                                          ({"batch": 2 * batch + 1, "prompt": 4 * prompt + 3}, far)])
                formulas += [(f"prefill.{n}", p, why or ("" if p is not None else
                              "not a polynomial of degree ≤ 3 in batch, prompt")) for n, (p, why) in zip(STEP_FIGURES, polys)]
            except NotPolynomialError as exc:
                formulas += [(f"prefill.{n}", None, str(exc)) for n in STEP_FIGURES]
    else:
        method = "token by token"
        macs_p, flops_p = decode_polys.get("macs"), decode_polys.get("flops")
        if macs_p is not None and flops_p is not None:
            pre_macs = int(_power_sum(macs_p, "context", prompt, {"batch": batch}))
            pre_flops = int(_power_sum(flops_p, "context", prompt, {"batch": batch}))
            # Σ over the P steps of a polynomial of the context is a polynomial of the prompt, one degree up
            for fig, poly in (("macs", macs_p), ("flops", flops_p)):
                (sum_poly,) = fit_many(lambda b, poly=poly: [int(_power_sum(poly, "context", b["prompt"],
                                                                                {"batch": b["batch"]}))],
                                       ("batch", "prompt"), degree=poly.degree + 1)
                formulas.append((f"prefill.{fig}", sum_poly, "" if sum_poly is not None else
                                 "the sum of the decode steps is not a polynomial"))
        else:
            steps = [ev(batch, c - 1, 1) for c in range(1, prompt + 1)] if prompt <= 64 else []
            # unknown, never 0: no steps evaluated, or a step whose figure is unknown
            pre_macs = None if not steps or any(s.macs is None for s in steps) else sum(s.macs for s in steps)
            pre_flops = None if not steps or any(s.flops is None for s in steps) else sum(s.flops for s in steps)
            if not steps:
                notes.append("prefill MACs unknown: the decode MACs are not a polynomial of the context")
        pre_lat = _token_by_token_latency(ev, batch, prompt)
        pre_ok = all(ev(batch, c - 1, 1).complete for c in _samples(prompt))
        notes.append(f"decode-only export (1 new token per step): the prefill of {prompt} tokens is {prompt} steps"
                     + (f"; its time is interpolated from {min(prompt, PREFILL_SAMPLES)} evaluated steps "
                        "(an upper estimate)" if spec is not None and prompt > PREFILL_SAMPLES else ""))
    if step.max_context is not None and context > step.max_context:
        notes.append(f"context {context:,} is beyond the model's position table ({step.max_context:,} rows): "
                     "the graph would index past its end")
    ctx_fit = b_fit = None
    if budget_bytes is not None:
        ctx_fit = _fit(ev, "context", budget_bytes, decode_polys.get("total_memory_bytes"), batch, context, new_fixed)
        b_fit = _fit(ev, "batch", budget_bytes, decode_polys.get("total_memory_bytes"), batch, context, new_fixed)
    kv_tok = kv_per_token(step, ev.kv_precision or precision, dec.kv_bytes_per_token_seen)
    points = _curve(ev, batch, context, new_fixed, kv_tok) if curve else ()
    kv_share = ev.plan.kv_share if ev.plan is not None else 1.0
    cache = None if kv_tok is None else kv_tok * batch * context * kv_share  # one device's
    moved = dec.kv_bytes / cache if cache else None
    exported = moved if kv_runtime == EXPORTED else None
    if kv_runtime != EXPORTED and cache:
        exported = _Evaluator(request, step, None, EXPORTED, kv_precision, devices)(
            batch, max(context - new_fixed, 0), new_fixed).kv_bytes / cache
    fewest = None
    capacity = budget_bytes if budget_bytes is not None else getattr(spec, "memory_capacity_bytes", None)
    if capacity and (devices > 1 or dec.total_memory_bytes > capacity):
        fewest = _fewest_devices(request, step, kv_runtime, kv_precision, batch, context, new_fixed, capacity)
    if devices > 1 and dec.latency_s is None and dec.allreduces and spec is not None and \
            not getattr(spec, "interconnect_bytes_per_s", None):
        notes.append(f"--devices {devices}: {clean_id(spec)} gives no interconnect bandwidth "
                     "(interconnect_bytes_per_s), so the all-reduces, and the step's time, are unknown")
    if kv_runtime == EXPORTED and moved is not None and moved > 2:
        notes.append(f"the exported decode step moves {moved:.1f}× the KV cache ({dec.kv_bytes:,} B for "
                     f"{cache:,} B: past and new concatenated, copies, attention reading them); serving runtimes "
                     "read it once: --kv-runtime in-place")
    return LLMFigures(step, batch, context, prompt, ev.param_bytes, dec, method, pre_macs, pre_flops,
                      pre_lat, pre_ok, tuple(formulas), getattr(spec, "id", None), ctx_fit, b_fit, tuple(notes),
                      points, kv_tok, method == "token by token" and pre_lat is not None and prompt > PREFILL_SAMPLES,
                      kv_runtime, moved, exported, ev.kv_precision, devices, kv_share, fewest,
                      getattr(spec, "interconnect_bytes_per_s", None), band_of(spec, "llm"))


def clean_id(spec: Any) -> str:
    return str(getattr(spec, "id", "the spec"))


#: tensor-parallel counts tried for the smallest that fits
DEVICE_COUNTS = (1, 2, 4, 8, 16, 32, 64)


def _fewest_devices(request: Request, step: DecoderStep, kv_runtime: str, kv_precision: str | None, batch: int,
                    context: int, new: int, capacity: int) -> Fit:
    """The smallest tensor-parallel count of :data:`DEVICE_COUNTS` whose per-device memory (weights,
    KV cache and the step's activations, one device's share) fits ``capacity`` at (batch, context)."""
    total = None
    for n in DEVICE_COUNTS:
        s = _Evaluator(request, step, None, kv_runtime, kv_precision, n)(batch, max(context - new, 0), new)
        total = s.total_memory_bytes
        if total <= capacity:
            return Fit("devices", capacity, n, total, "search")
    return Fit("devices", capacity, None, total, "search")


def kv_per_token(step: DecoderStep, precision: Any | None = None, seen: int | None = None) -> int | None:
    """KV-cache bytes per token per sequence; with a ``--precision`` what-if, floating-point cache
    tensors at its width (:mod:`onnxperf.predict.precision`). ``seen``: the bytes per token of the present
    outputs in an analyzed step, used when a cache dim is left symbolic in the file (a head size
    that only the graph's shapes tell)."""
    caches = step.caches
    if any(c.bytes_per_token is None for c in caches):
        return seen  # the analysis' own shapes (already in the what-if's precision)
    if precision is None:
        return step.kv_bytes_per_token
    total = 0
    for c in caches:
        if c.bytes_per_token is None:
            return None
        et = next((t for t in FLOAT_TYPES if dtypes.name(t) == c.dtype), None)
        if et is None:
            total += c.bytes_per_token
            continue
        numel = c.bytes_per_token * 8 // dtypes.bits(et)
        bits = precision.tensor_bits  # block scales included (fp4: 4.5 bits)
        total += -(-(numel * bits.numerator) // (8 * bits.denominator))
    return total


def curve_grid(batch: int, context: int, max_context: int | None) -> tuple[list[int], list[int]]:
    """(batches, contexts) of the chart: batch 1, the batch asked about and 4 times it; contexts
    by powers of 2 from 128 to 4 times the context (at least 2048), and the context itself, up
    to a position table's end."""
    batches = sorted({1, batch, 4 * batch})
    top = max(4 * context, 2048)
    contexts = {1 << k for k in range(7, 40) if 1 << k <= top} | {context}
    if max_context is not None:
        contexts = {c for c in contexts if c <= max_context} | ({max_context} if context >= max_context else set())
    return batches, sorted(contexts)


def _curve(ev: _Evaluator, batch: int, context: int, new: int, kv: int | None) -> tuple[CurvePoint, ...]:
    batches, contexts = curve_grid(batch, context, ev.step.max_context)
    out = []
    points = [(b, c) for b in batches for c in contexts if c >= new]
    for k, (b, c) in enumerate(points):
        advance(k, len(points), "curve points")
        s = ev(b, c - new, new, timed=True)
        out.append(CurvePoint(b, c, s.latency_s, b / s.latency_s if s.latency_s else None, s.total_memory_bytes,
                              None if kv is None else kv * b * c, s.dominant, s.complete))
    advance(len(points), len(points), "curve points")
    return tuple(out)


def _verified(polys: list[Polynomial | None], checks: list[tuple[dict[str, int], Step]]
              ) -> list[tuple[Polynomial | None, str]]:
    """Each fitted polynomial checked at the point asked about and at a far one: a peak (a max
    over the steps of the graph) can look polynomial at the small fit points and switch branch
    later; such a fit is refused, never published."""
    out = []
    for k, p in enumerate(polys):
        why = ""
        if p is not None:
            for point, step in checks:
                if step.complete and p(point) != _values(step)[k]:
                    why = (f"piecewise: the polynomial of the small fit points misses the value at "
                           f"{', '.join(f'{d}={v}' for d, v in point.items())} (a maximum that changes branch)")
                    p = None
                    break
        out.append((p, why))
    return out


def _complete(s: Step) -> Step:
    if not s.complete:
        raise NotPolynomialError("some nodes stay without cost (or some tensor without a size) at the fit points")
    return s


def _samples(prompt: int) -> list[int]:
    """Contexts at which a token-by-token prefill is evaluated: all when few, else evenly spread."""
    if prompt <= PREFILL_SAMPLES:
        return list(range(1, prompt + 1))
    k = PREFILL_SAMPLES - 1
    return sorted({1 + round(i * (prompt - 1) / k) for i in range(k + 1)})


def _token_by_token_latency(ev: _Evaluator, batch: int, prompt: int) -> float | None:
    """Σ over contexts 1..prompt of the step latency, linear between the evaluated samples."""
    if ev.spec is None:
        return None
    xs = _samples(prompt)
    ys = []
    for k, c in enumerate(xs):  # the steps are the slow part of --llm: counted in the progress
        advance(k, len(xs), "prefill steps")
        ys.append(ev(batch, c - 1, 1, timed=True).latency_s)
    advance(len(xs), len(xs), "prefill steps")
    if any(y is None for y in ys):
        return None
    total = 0.0
    for (x0, y0), (x1, y1) in zip(zip(xs, ys), zip(xs[1:], ys[1:])):
        # steps x0 .. x1-1 on the chord (x1 is counted by the next segment)
        n = x1 - x0
        total += n * y0 + (y1 - y0) * (n - 1) / 2
    return total + ys[-1]


def _fit(ev: _Evaluator, dim: str, budget: int, poly: Polynomial | None, batch: int, context: int,
         new: int) -> Fit:
    """Largest context (at ``batch``) or batch (at ``context``) whose weights + step peak fit."""
    def at(v: int) -> Step:
        return ev(v, context - new, new) if dim == "batch" else ev(batch, max(v - new, 0), new)

    def ok_analysis(v: int) -> bool:
        s = at(v)
        return s.complete and s.total_memory_bytes <= budget

    lo = new if dim == "context" else 1
    limit = 1 << 40
    if dim == "context" and ev.step.max_context is not None:
        limit = ev.step.max_context  # the model has no positions beyond its table
    method = "search"
    if poly is not None:
        fixed = {"batch": batch} if dim == "context" else {"context": context}
        value = largest_int(lambda v: poly({**fixed, dim: v}) <= budget, lo=lo, hi_limit=limit)
        if value is None or (ok_analysis(value) and (value >= limit or not ok_analysis(value + 1))):
            method = "polynomial"
        else:
            value = largest_int(ok_analysis, lo=lo, hi_limit=limit)
    else:
        value = largest_int(ok_analysis, lo=lo, hi_limit=limit)
    if value is not None and value >= limit and limit < 1 << 40:
        method += f", capped at the position table ({limit:,} rows)"
    return Fit(dim, budget, value, at(value).total_memory_bytes if value is not None else None, method)
