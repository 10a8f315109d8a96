"""The ``llm`` section of a summary: what was recognized, and (with ``--llm``) the figures.

Built here, formatted by the renderers: :meth:`LLMSection.to_dict` is the JSON contract,
:func:`text_lines` and :func:`md_rows` the human forms.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from onnxperf.base.errors import OptionError
from onnxperf.cost.request import Request
from onnxperf.insights.llm.figures import Fit, LLMFigures, Step, figures
from onnxperf.insights.llm.recognize import DecoderStep, NotRecognized, recognize
from onnxperf.predict.kv_names import EXPORTED, IN_PLACE, KV_RUNTIME_TEXT
from onnxperf.predict.plan import LIMITER_WORDS
from onnxperf.ui.numbers import binary_bytes, clean, lower_bound, pct, seconds, si

#: contexts and prompts used when the user binds none (said in every output)
DEFAULT_CONTEXT = 2048
DEFAULT_PROMPT = 512


@dataclass(frozen=True)
class LLMOptions:
    """What the user asked of the LLM section: ``full`` computes the figures (``--llm``)."""

    full: bool = False
    batch: int | None = None
    context: int | None = None
    prompt: int | None = None
    overrides: Any = None  # recognize.Overrides
    #: with ``full``: a graph that is not a decoder step is an error (``--llm``), else no section
    required: bool = True
    #: memory for the largest context and batch (else the summary's ``--memory``)
    memory_bytes: int | None = None
    #: tokens/s and memory over a grid of contexts and batches (the report's chart)
    curve: bool = False
    #: the context is :data:`DEFAULT_CONTEXT`, bound for the user (no ``--context``, no past dim bound):
    #: said in every output (:func:`decode_bindings` tells)
    default_context: bool = False
    #: how the runtime keeps the KV cache (:mod:`onnxperf.predict.serving`): ``exported`` or ``in-place``
    kv_runtime: str = EXPORTED
    #: ``--kv-precision``: the KV cache in its own precision (None: as the figures' precision has it)
    kv_precision: str | None = None
    #: ``--devices``: tensor parallel over this many devices (:mod:`onnxperf.predict.parallel`)
    devices: int = 1


@dataclass(frozen=True)
class LLMSection:
    step: DecoderStep
    figures: LLMFigures | None
    #: where batch, context and prompt came from ("--context", "bound past + new", "default")
    sources: tuple[tuple[str, str], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        s = self.step
        d: dict[str, Any] = {
            "decoder_step": True,
            "evidence": list(s.evidence),
            "notes": list(s.notes) + (list(self.figures.notes) if self.figures else []),
            "dims": {"batch": s.batch, "past": s.past, "new": s.new, "total": s.total},
            "token_input": s.token_input,
            "attention": list(s.attention),
            "max_context": s.max_context,
            "cache": {
                "layers": s.layers, "kv_heads": s.kv_heads, "head_dim": s.head_dim, "dtype": s.kv_dtype,
                "bytes_per_token": s.kv_bytes_per_token, "bytes_per_token_formula": kv_formula(s),
                "inputs": [{"name": c.name, "kind": c.kind, "layer": c.layer, "dtype": c.dtype,
                            "shape": list(c.shape), "layout": list(c.layout), "bytes_per_token": c.bytes_per_token,
                            "present": c.present, "evidence": c.how} for c in s.caches],
            },
            "figures": None,
        }
        f = self.figures
        if f is not None:
            d["figures"] = {
                "batch": f.batch, "context": f.context, "prompt": f.prompt, "sources": dict(self.sources),
                "hardware": f.hardware, "kv_bytes_per_token": f.kv_bytes_per_token,
                "kv_runtime": {"model": f.kv_runtime, "text": KV_RUNTIME_TEXT[f.kv_runtime],
                               "kv_moved_per_cache": f.kv_moved_per_cache,
                               "exported_kv_moved_per_cache": f.exported_kv_moved_per_cache},
                "devices": _devices_dict(f, spec_link=f.interconnect_bytes_per_s),
                "kv_precision": None if f.kv_precision is None else {
                    "name": f.kv_precision.name, "dtype": f.kv_precision.dtype,
                    "bits_per_element": float(f.kv_precision.tensor_bits)},
                "memory": {"weight_bytes": f.weight_bytes, "kv_cache_bytes": f.kv_cache_bytes,
                           "step_activation_peak_bytes": f.decode.activation_peak_bytes,
                           "total_bytes": f.decode.total_memory_bytes, "complete": f.decode.complete},
                "decode": {**_step_dict(f.decode), "context": f.context,
                           "tokens_per_s": f.decode_tokens_per_s,
                           "latency_band": None if f.band is None else f.band.to_dict(f.decode.latency_s)},
                "prefill": {"prompt": f.prompt, "method": f.prefill_method, "macs": f.prefill_macs,
                            "flops": f.prefill_flops, "latency_s": f.prefill_latency_s,
                            "time_to_first_token_s": f.prefill_latency_s,
                            "time_is_upper_estimate": f.prefill_upper_estimate,
                            "latency_band": None if f.band is None else f.band.to_dict(f.prefill_latency_s),
                            "tokens_per_s": f.prefill_tokens_per_s, "complete": f.prefill_complete},
                "formulas": {name: (p.to_dict() if p is not None else {"error": why}) for name, p, why in f.formulas},
                "largest_context": _fit_dict(f.context_fit), "largest_batch": _fit_dict(f.batch_fit),
            }
            if f.curve:
                d["figures"]["curve"] = [
                    {"batch": p.batch, "context": p.context, "latency_s": p.latency_s, "tokens_per_s": p.tokens_per_s,
                     "total_memory_bytes": p.total_memory_bytes, "kv_cache_bytes": p.kv_cache_bytes,
                     "dominant_bytes": p.dominant, "complete": p.complete} for p in f.curve]
        return d


def _devices_dict(f: LLMFigures, spec_link: float | None) -> dict[str, Any]:
    d = f.decode
    return {"count": f.devices, "layout": "tensor parallel (Megatron: heads and MLP split, residual replicated)"
            if f.devices > 1 else "one device", "kv_share": f.kv_share,
            "per_device_weight_bytes": f.weight_bytes, "per_device_kv_cache_bytes": f.kv_cache_bytes_per_device,
            "allreduces_per_step": d.allreduces, "allreduce_bytes_per_step": d.allreduce_bytes,
            "allreduce_s": d.allreduce_s, "interconnect_bytes_per_s": spec_link,
            "smallest_count": _fit_dict(f.smallest_devices)}


def _step_dict(s: Step) -> dict[str, Any]:
    return {"batch": s.batch, "past": s.past, "new": s.new, "macs": s.macs, "flops": s.flops, "bytes": s.bytes,
            "weight_read_bytes": s.weight_read_bytes, "kv_bytes": s.kv_bytes, "activation_bytes": s.other_bytes,
            "dominant_bytes": s.dominant, "latency_s": s.latency_s, "memory_bound_share": s.memory_bound_share,
            "bound": s.bound, "bound_share": s.bound_share, "latency_is_lower_bound": s.latency_is_lower_bound,
            "latency_is_plain_roofline": s.latency_is_plain,
            "complete": s.complete}


def _fit_dict(f: Fit | None) -> dict[str, Any] | None:
    if f is None:
        return None
    return {"dim": f.dim, "budget_bytes": f.budget_bytes, "value": f.value, "total_bytes": f.total_bytes,
            "method": f.method}


def kv_formula(s: DecoderStep) -> str:
    """How the bytes per token add up: ``2 (K, V) × 4 layers × 2 kv_heads × 32 head_dim × 4 B``
    when every cache tensor is alike, else the sum of the tensors' bytes."""
    per = {c.bytes_per_token for c in s.caches}
    total = s.kv_bytes_per_token
    if len(per) == 1 and None not in per and s.kv_heads and s.head_dim:
        one = next(iter(per))
        size, rem = divmod(one, s.kv_heads * s.head_dim)
        if not rem:
            kinds = {c.kind for c in s.caches}
            lead = (f"2 (K, V) × {s.layers} layers" if kinds == {"key", "value"} and len(s.caches) == 2 * s.layers
                    else f"2 (K, V) × {len(s.caches)} stacked tensors" if kinds == {"kv"}
                    else f"{len(s.caches)} tensors")
            return f"{lead} × {s.kv_heads} kv_heads × {s.head_dim} head_dim × {size} B = {total:,} B"
    if total is None:
        return "unknown"
    return " + ".join(f"{c.bytes_per_token:,}" for c in s.caches) + f" = {total:,} B"


_DOMINATES = {"weights": "the weights dominate", "kv_cache": "the KV cache dominates",
              "activations": "activations dominate"}


def _moved(f: LLMFigures) -> str:
    """``; a step moves 1.00× the cache (15.25× as exported)``: the KV traffic of a decode step."""
    if f.kv_moved_per_cache is None:
        return ""
    out = f"; a step moves {f.kv_moved_per_cache:.2f}× the cache"
    if f.kv_runtime != EXPORTED and f.exported_kv_moved_per_cache is not None:
        out += f" ({f.exported_kv_moved_per_cache:.2f}× as exported)"
    return out


def text_lines(sec: LLMSection) -> list[str]:
    s, f = sec.step, sec.figures
    out = ["", "Decoder LLM (KV cache)"]
    heads = f"{s.kv_heads} KV heads × {s.head_dim} head dim" if s.kv_heads and s.head_dim else "layout " + \
        ", ".join(s.caches[0].layout)
    out.append(f"  Cache        {len(s.caches)} inputs, {s.layers} layers, {heads}, {s.kv_dtype}; "
               f"read by {', '.join(s.attention) or 'name only'}")
    out.append(f"  Dims         batch={clean(str(s.batch), 30)}  past={clean(s.past, 30)}  new={clean(str(s.new), 30)}"
               + (f"  total={clean(s.total, 30)} (= past + new)" if s.total else ""))
    kvt = s.kv_bytes_per_token
    out.append(f"  KV per token {binary_bytes(kvt)} per sequence ({clean(kv_formula(s), 200)})"
               if kvt is not None else "  KV per token unknown (a cache dim other than batch and past is symbolic)")
    if f is not None and f.kv_bytes_per_token != kvt:
        what = (f"--kv-precision {f.kv_precision.name}" if f.kv_precision is not None else "--precision")
        out.append(f"               {binary_bytes(f.kv_bytes_per_token)} per token in the {what} what-if "
                   f"({f.kv_bytes_per_token:,} B)")
    for n in s.notes:
        out.append("  Note         " + clean(n, 300))
    if f is None:
        out.append("  (add --llm for decode and prefill speed, memory at a context, and the context that fits)")
        return out
    src = dict(sec.sources)
    out.append(f"  At           batch {f.batch}, context {f.context:,} ({src.get('context', '')}), "
               f"prompt {f.prompt:,} ({src.get('prompt', '')})")
    out.append(f"  KV runtime   {KV_RUNTIME_TEXT[f.kv_runtime]}{_moved(f)} (--kv-runtime)")
    if f.devices > 1:
        d = f.decode
        link = (f" over {si(f.interconnect_bytes_per_s)}B/s: {seconds(d.allreduce_s)} per step"
                if f.interconnect_bytes_per_s and d.allreduce_s is not None else ": time unknown (no interconnect in the spec)")
        out.append(f"  Devices      {f.devices}, tensor parallel: per device weights {binary_bytes(f.weight_bytes)} + KV "
                   f"{binary_bytes(f.kv_cache_bytes_per_device)}; {d.allreduces} all-reduces per step, "
                   f"{binary_bytes(d.allreduce_bytes)}{link} (--devices)")
    if f.smallest_devices is not None:
        fit = f.smallest_devices
        out.append(f"  Fewest devices {'none up to 64' if fit.value is None else fit.value} hold weights + KV at batch "
                   f"{f.batch}, context {f.context:,} in {binary_bytes(fit.budget_bytes)} each"
                   + (f" (needs {binary_bytes(fit.total_bytes)} per device)" if fit.total_bytes is not None else ""))
    d = f.decode
    part = "" if not d.side else "  (an upper bound)" if d.side == "upper" else "  (partial: lower bounds)"
    each = f"one device of {f.devices}: " if f.devices > 1 else ""
    out.append(f"  Memory       {each}weights {binary_bytes(f.weight_bytes)} + KV cache "
               f"{binary_bytes(f.kv_cache_bytes_per_device)}; "
               f"step peak {binary_bytes(d.activation_peak_bytes)} "
               f"({'holds the cache once' if f.kv_runtime == IN_PLACE else 'holds past and present'}) -> "
               f"total {binary_bytes(d.total_memory_bytes)}{part}")
    traffic = (f"weights {binary_bytes(d.weight_read_bytes)}, KV {binary_bytes(d.kv_bytes)}, "
               f"activations {binary_bytes(d.other_bytes)}: {_DOMINATES[d.dominant]})")
    part = d.side  # some node of the step not costed: lower bounds; an If on an input: upper bounds
    out.append(f"  Decode step  {lower_bound(si(d.macs) + 'MACs', d.macs, part)}, "
               f"{lower_bound(binary_bytes(d.bytes), d.bytes, part)} moved ({traffic}")
    if d.latency_s is not None:
        mb = f", limited by {LIMITER_WORDS[d.bound]} ({pct(d.bound_share)} of it)" if d.bound in LIMITER_WORDS else ""
        lower = " (plain roofline: an estimate, not a bound)" if d.latency_is_plain else ""
        band = f" ({f.band.text()})" if f.band is not None else (
            "" if d.latency_is_plain else " (no error band: no published decoder point held out for this device "
                                                "class and runtime)")
        out.append(f"  Decode       {seconds(d.latency_s)} per token{band} -> {si(f.decode_tokens_per_s)} tokens/s "
                   f"at batch {f.batch} on {clean(f.hardware or '?', 40)}{mb}{lower}")
    pre = f"one pass of {f.prompt:,} tokens" if f.prefill_method == "one pass" else f"{f.prompt:,} decode steps"
    out.append(f"  Prefill      {lower_bound(si(f.prefill_macs) + 'MACs', f.prefill_macs, not f.prefill_complete)} "
               f"({pre})")
    if f.prefill_latency_s is not None:
        at_most = "≤ " if f.prefill_upper_estimate else ""
        out.append(f"  TTFT         {at_most}{seconds(f.prefill_latency_s)} -> prefill {'≥ ' if at_most else ''}"
                   f"{si(f.prefill_tokens_per_s)} tokens/s" + (" (interpolated between evaluated steps: an upper "
                                                               "estimate)" if at_most else ""))
    for name in ("decode.macs", "decode.kv_bytes", "decode.total_memory_bytes", "prefill.macs"):
        p = f.formula(name)
        if p is not None:
            out.append(f"  {name:<26} = {p.format()}")
    for fit in (f.context_fit, f.batch_fit):
        if fit is None:
            continue
        what = "context" if fit.dim == "context" else "batch"
        at = f"at batch {f.batch}" if fit.dim == "context" else f"at context {f.context:,}"
        capped = "; the model's position table ends there" if "capped" in fit.method else ""
        out.append(f"  Largest {what:<8}{'none' if fit.value is None else f'{fit.value:,}'} {at} in "
                   f"{binary_bytes(fit.budget_bytes)}" + (f" (needs {binary_bytes(fit.total_bytes)}{capped})"
                                                          if fit.total_bytes is not None else ""))
    for n in f.notes:
        out.append("  Note         " + clean(n, 300))
    return out


def md_rows(sec: LLMSection, cell) -> list[str]:
    s, f = sec.step, sec.figures
    rows = [f"| KV cache | {len(s.caches)} inputs, {s.layers} layers, {s.kv_dtype}, "
            f"{binary_bytes(s.kv_bytes_per_token)} per token |"]
    if f is not None:
        rows.append(f"| KV runtime (--kv-runtime) | {KV_RUNTIME_TEXT[f.kv_runtime]}{_moved(f)} |")
        if f.devices > 1:
            rows.append(f"| Devices (--devices) | {f.devices}, tensor parallel: per device weights "
                        f"{binary_bytes(f.weight_bytes)} + KV {binary_bytes(f.kv_cache_bytes_per_device)}; "
                        f"{f.decode.allreduces} all-reduces per step ({binary_bytes(f.decode.allreduce_bytes)}) |")
        if f.smallest_devices is not None:
            v = f.smallest_devices.value
            rows.append(f"| Fewest devices for batch {f.batch}, context {f.context} | "
                        f"{'none up to 64' if v is None else v} in {binary_bytes(f.smallest_devices.budget_bytes)} each |")
        if f.kv_precision is not None:
            rows.append(f"| KV precision (--kv-precision) | {f.kv_precision.name} ({f.kv_precision.dtype}, "
                        f"{float(f.kv_precision.tensor_bits):g} bits): {binary_bytes(f.kv_bytes_per_token)} per token |")
        rows.append(f"| Memory at batch {f.batch}, context {f.context} | weights {binary_bytes(f.weight_bytes)} + "
                    f"KV {binary_bytes(f.kv_cache_bytes)}; total {binary_bytes(f.decode.total_memory_bytes)} |")
        if f.decode.latency_s is not None:
            rows.append(f"| Decode ({cell(f.hardware or '?')}) | {seconds(f.decode.latency_s)} per token, "
                        f"{si(f.decode_tokens_per_s)} tokens/s; {_DOMINATES[f.decode.dominant]} |")
        if f.prefill_latency_s is not None:
            rows.append(f"| Time to first token (prompt {f.prompt}) | {'≤ ' if f.prefill_upper_estimate else ''}"
                        f"{seconds(f.prefill_latency_s)} |")
        if f.context_fit is not None and f.context_fit.value is not None:
            rows.append(f"| Largest context in {binary_bytes(f.context_fit.budget_bytes)} | {f.context_fit.value:,} |")
    return rows


def build(a, request: Request, spec=None) -> LLMSection | None:
    """The section for analysis ``a`` of ``request`` (its ``llm`` options; its dims as bound for the
    decode step, :func:`decode_bindings`): None when the graph is not a decoder step (an error when the
    user asked for the figures with ``--llm``)."""
    opts: LLMOptions = request.llm
    try:
        step = recognize(a.loaded, opts.overrides)
    except NotRecognized as exc:
        if opts.full and opts.required:
            raise OptionError(f"--llm: not a decoder step with a KV cache: {exc}") from None
        return None
    if not opts.full:
        return LLMSection(step, None)
    dims = dict(request.dims)
    sources = []
    if opts.batch is not None:
        batch, src = opts.batch, "--batch"
    elif isinstance(step.batch, str) and step.batch in dims:
        batch, src = dims[step.batch], f"--dim {step.batch}"
    else:
        batch, src = (step.batch if isinstance(step.batch, int) else 1), "default"
    sources.append(("batch", src))
    new = step.new if isinstance(step.new, int) else 1
    if opts.default_context:
        context, src = DEFAULT_CONTEXT, "default: pass --context N for yours"
    elif opts.context is not None:
        context, src = opts.context, "--context"
    elif step.past in dims:
        context, src = dims[step.past] + new, f"bound {step.past} + {new} new"
    else:
        context, src = DEFAULT_CONTEXT, "default"
    sources.append(("context", src))
    if context < new:
        raise OptionError(f"--context {context}: a step adds {new} tokens, so the context is at least {new}")
    if opts.prompt is not None:
        prompt, src = opts.prompt, "--prompt"
    else:
        prompt, src = min(DEFAULT_PROMPT, context), "default"
    sources.append(("prompt", src))
    if prompt > context:
        raise OptionError(f"--prompt {prompt}: longer than the context of {context:,} tokens "
                          f"({dict(sources)['context']}); give --context {prompt} or more")
    fixed = {**{d: v for d, v, _ in step.inferred},
             **{k: v for k, v in dims.items() if k not in (step.batch, step.past, step.new, step.total)}}
    fg = figures(replace(request, model=a.loaded, dims=fixed), step, batch=batch, context=context, prompt=prompt,
                 spec=spec, budget_bytes=opts.memory_bytes if opts.memory_bytes is not None else request.memory_budget,
                 curve=opts.curve, kv_runtime=opts.kv_runtime, kv_precision=opts.kv_precision, devices=opts.devices)
    return LLMSection(step, fg, tuple(sources))


def decode_bindings(loaded, dims: dict[str, int] | None, context: int | None) -> tuple[dict[str, int], bool]:
    """For a decoder step, the context binds the past (and total) dims that ``dims`` leaves
    unbound (past = context − new tokens; default context :data:`DEFAULT_CONTEXT`), so that every
    figure of the summary is the decode step's at that context; and whether that context is the
    default. Other graphs: ``dims`` unchanged."""
    dims = dict(dims or {})
    try:
        step = recognize(loaded)
    except NotRecognized:
        return dims, False
    default = not context and step.past not in dims
    new = step.new if isinstance(step.new, int) else 1
    batch = dims.get(step.batch, 1) if isinstance(step.batch, str) else 1
    ctx = context or (dims[step.past] + new if step.past in dims else DEFAULT_CONTEXT)
    bound = step.bindings(batch, max(ctx - new, 0), new)
    bound.update({d: v for d, v, _ in step.inferred})
    if bound.get(step.past) == 0:
        return {**{d: v for d, v, _ in step.inferred}, **dims}, default  # an empty cache: positive sizes only
    return {**bound, **dims}, default
