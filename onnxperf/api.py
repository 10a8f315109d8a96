"""The Python API: :func:`analyze` returns one typed, frozen, JSON-serializable
:class:`~onnxperf.analysis.result.Analysis`, the result every command prints (``a.to_json()`` is the text of
``onnxperf summary --format json`` for the same options; ``onnxperf.report.html(a)`` the page of
``onnxperf report``)."""

from __future__ import annotations

import numbers
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from onnxperf.analysis.compose import compose
from onnxperf.base.errors import OptionError
from onnxperf.analysis import result as _result
from onnxperf.analysis.result import Analysis
from onnxperf.cost.request import Request
from onnxperf.hardware import HardwareSpec
from onnxperf.insights.llm.recognize import Overrides
from onnxperf.insights.llm.section import LLMOptions
from onnxperf.products import frames, notebook
from onnxperf.ui.units import parse_bytes


def analyze(model: Any, dims: dict[str, int] | None = None, input_shapes: dict[str, Any] | None = None,
            convention: str = "default", default_batch: bool = True, *, hw: Any = None,
            memory: int | str | None = None, memory_dim: str = "batch", precision: str | None = None) -> Analysis:
    """Analyze a model (a path, an ``onnx.ModelProto`` or a loaded model): shapes, per-node
    MACs/FLOPs/bytes/params, totals, coverage and activation memory.

    ``dims`` binds symbolic input dims by name (``{"batch": 8}``); ``input_shapes`` replaces whole input
    shapes (``{"input": (1, 3, 224, 224)}`` or ``"1x3x224x224"``; a dim may be a name that ``dims``
    binds). A dim a model's inputs lack is left out with a note; ``default_batch`` (on, as on the command
    line) binds an unbound batch dim to 1 with a note. ``hw`` (a preset id such as ``"rtx3090"``, a spec file path or a loaded
    :class:`~onnxperf.hardware.HardwareSpec`) adds the roofline prediction and the bottleneck groups;
    ``memory`` (a budget, in bytes or as ``"8GiB"``) the largest ``memory_dim`` within it; ``precision``
    (``"fp16"``, ``"int8"``...) makes every figure that what-if's."""
    hw_text = None if hw is None else _hw_text(hw)
    request = Request(model, dims=dict(dims or {}), input_shapes=dict(input_shapes or {}),
                      default_batch=default_batch, convention=convention, precision=precision,
                      hw=Path(hw) if isinstance(hw, os.PathLike) else hw,  # load_spec takes a Path as a file
                      memory_budget=_budget(memory), memory_dim=memory_dim,
                      llm=LLMOptions(overrides=Overrides.parse([], []), curve=True))
    a = compose(request)
    return replace(a, options=(("hw", hw_text), ("memory", memory), ("memory_dim", memory_dim),
                               ("precision", precision)))


def _budget(memory: int | str | None) -> int | None:
    """A memory budget in bytes: an int, or text such as ``8GiB`` (as ``--memory``)."""
    if memory is None:
        return None
    if isinstance(memory, str):
        return parse_bytes(memory)
    if isinstance(memory, bool) or not isinstance(memory, numbers.Integral) or memory <= 0:
        raise OptionError(f"memory={memory!r}: a budget is a positive number of bytes or a size such as '8GiB'")
    return int(memory)


def _hw_text(hw: Any) -> str:
    """How ``hw`` reads in the report's options: as given (a preset id or a path), a spec by its id."""
    if isinstance(hw, HardwareSpec):
        return hw.id
    if isinstance(hw, (str, os.PathLike)):
        return os.fspath(hw)
    raise OptionError(f"hw={hw!r}: give a preset id ('rtx3090'), a spec file path or a HardwareSpec")


# how an Analysis shows itself in a notebook and as a DataFrame: made by the products
_result.VIEWS.update(html=notebook.repr_html, line=notebook.text_line, dataframe=frames.to_dataframe)

__all__ = ["Analysis", "analyze"]
