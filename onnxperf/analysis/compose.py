"""One request in, one :class:`~onnxperf.analysis.result.Analysis` out: the composition every command and
the Python API run, so two outputs of one request can never disagree.

The costs (:func:`onnxperf.cost.analysis.cost_analysis`), then what the request asks for: the precision
what-if, activation memory, the roofline on a spec and the bottleneck groups read from it, the largest
fit of a memory budget, the decoder-LLM section. Computation happens here and below, never in a
renderer.
"""

from __future__ import annotations

import os
from dataclasses import replace

from onnxperf.analysis.result import Analysis
from onnxperf.cost.request import Request
from onnxperf.graph.loader import LoadedModel, load
from onnxperf.hardware import load_spec
from onnxperf.insights.bottlenecks import bottlenecks
from onnxperf.insights.llm.section import build, decode_bindings
from onnxperf.predict.memory import device_fit, largest_fitting, liveness
from onnxperf.predict.precision import get, priced
from onnxperf.predict.roofline import roofline


def compose(request: Request) -> Analysis:
    """The analysis that answers ``request`` (see :class:`~onnxperf.cost.request.Request`)."""
    llm = request.llm
    if llm is not None and llm.full:
        # the figures are the decode step's at the context: bind the cache's past dim to it
        model = request.model if isinstance(request.model, LoadedModel) else load(request.model)
        dims, default = decode_bindings(model, dict(request.dims), llm.context)
        llm = replace(llm, default_context=default)
        request = replace(request, model=model, dims=dims, llm=llm)
    a = priced(request)
    request = replace(request, model=a.loaded)  # loaded once: every derived run reads this one
    prec = get(request.precision) if request.precision is not None else None
    spec = rl = None
    if request.hw:
        hw = request.hw
        spec = load_spec(hw) if isinstance(hw, (str, os.PathLike)) else hw  # an id, a file, or a loaded spec
        rl = roofline(a, spec, prec)
    largest = largest_fitting(request) if request.memory_budget is not None else None
    section = build(a, request, spec) if llm is not None and a.loaded is not None else None
    mem = liveness(a)
    return Analysis.of(a, memory=mem, spec=spec, roofline=rl, largest=largest, precision=prec, llm=section,
                       bottlenecks=bottlenecks(a, rl, spec, prec) if rl is not None else None,
                       device=device_fit(request, mem, spec) if spec is not None else None)


def summarize(model, dims: dict[str, int] | None = None, input_shapes=None, convention: str = "default",
              hw=None, memory_budget: int | None = None, memory_dim: str = "batch", llm=None,
              precision: str | None = None, default_batch: bool = False) -> Analysis:
    """:func:`compose` of the request these arguments name."""
    return compose(Request(model, dims=dict(dims or {}), input_shapes=dict(input_shapes or {}),
                           default_batch=default_batch, convention=convention, precision=precision, hw=hw,
                           memory_budget=memory_budget, memory_dim=memory_dim, llm=llm))


__all__ = ["compose", "summarize"]
