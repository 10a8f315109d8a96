"""The request: what one run of onnxperf is asked, named once and passed whole.

The command line or the Python API builds one :class:`Request`; every figure of the result answers it
(:func:`onnxperf.analysis.compose`). A derived run (a sweep point, a validated batch, a decode context,
the largest fit, one side of a comparison) is ``dataclasses.replace(request, ...)`` (:meth:`Request.at`
for new dim values), never a re-listing of its fields, so no part of it is dropped on the way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any


@dataclass(frozen=True)
class Request:
    """One run's question. ``model``: a path, an ``onnx.ModelProto`` or a loaded model.

    ``dims`` binds symbolic input dims by name; ``input_shapes`` replaces whole input shapes (a dim may
    be a name ``dims`` binds); ``default_batch`` binds an unbound batch dim to 1 (with a note);
    ``convention`` says how MACs and FLOPs are counted; ``precision`` names a what-if
    (``"fp16"``...); ``hw`` is a preset id, a spec file path or a loaded
    :class:`~onnxperf.hardware.HardwareSpec` (the roofline, the bottlenecks); ``memory_budget`` (bytes)
    asks for the largest ``memory_dim`` that fits; ``llm`` (:class:`onnxperf.insights.llm.section.LLMOptions`)
    for the decoder-LLM section."""

    model: Any
    dims: Mapping[str, int] = field(default_factory=dict)
    input_shapes: Mapping[str, tuple[int | str, ...]] = field(default_factory=dict)
    default_batch: bool = False
    convention: str = "default"
    precision: str | None = None
    hw: Any = None
    memory_budget: int | None = None
    memory_dim: str = "batch"
    llm: Any = None

    def at(self, **dims: int) -> Request:
        """This request with these dims bound too (a sweep point, a batch, a context)."""
        return replace(self, dims={**self.dims, **dims})


__all__ = ["Request"]
