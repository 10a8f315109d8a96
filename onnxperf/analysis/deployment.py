"""``analyze(..., hw=, memory=, precision=)``: an analysis with what a deployment adds to it.

The roofline prediction on a hardware spec, activation memory (liveness over the execution order),
the largest ``memory_dim`` that fits a budget and the ``precision`` what-if are computed by
:func:`onnxperf.analysis.summary.summarize`, exactly as ``onnxperf summary`` and ``onnxperf report`` compute them,
and kept on the frozen :class:`~onnxperf.cost.analysis.Analysis` that ``analyze`` returns (the graph is
never written to). :func:`summary_of` and :func:`report_options` turn such an analysis back into what
the report is built from, so ``onnxperf.report.html(a)`` is the page ``onnxperf report`` writes.
"""

from __future__ import annotations

import numbers
import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from onnxperf.base.errors import OptionError

if TYPE_CHECKING:
    from onnxperf.cost.analysis import Analysis
    from onnxperf.analysis.summary import Summary


def _budget(memory: int | str | None) -> int | None:
    """A memory budget in bytes: an int, or text such as ``8GiB`` (as ``--memory``)."""
    if memory is None:
        return None
    if isinstance(memory, str):
        from onnxperf.ui.units import parse_bytes

        return parse_bytes(memory)
    if isinstance(memory, bool) or not isinstance(memory, numbers.Integral) or memory <= 0:
        raise OptionError(f"memory={memory!r}: a budget is a positive number of bytes or a size such as '8GiB'")
    return int(memory)


def _hw_text(hw: Any) -> str:
    """How ``hw`` reads in the report's options: as given (a preset id or a path), a spec by its id."""
    from onnxperf.hardware import HardwareSpec

    if isinstance(hw, HardwareSpec):
        return hw.id
    if isinstance(hw, (str, os.PathLike)):
        return os.fspath(hw)
    raise OptionError(f"hw={hw!r}: give a preset id ('rtx3090'), a spec file path or a HardwareSpec")


def deploy(model: Any, dims: dict[str, int] | None, input_shapes: Any, convention: str, hw: Any,
           memory: int | str | None, memory_dim: str, precision: str | None, default_batch: bool = False) -> Analysis:
    """The analysis of ``model`` with the roofline on ``hw`` (a preset id, a spec file path or a
    :class:`~onnxperf.hardware.HardwareSpec`), its memory, the largest ``memory_dim`` that fits
    ``memory`` and the ``precision`` what-if, each where asked for."""
    from onnxperf.analysis.summary import summarize

    hw_text = None if hw is None else _hw_text(hw)
    budget = _budget(memory)
    path_hw = Path(hw) if isinstance(hw, os.PathLike) else hw  # load_spec takes a Path as a file
    sm = summarize(model, dims=dims, input_shapes=input_shapes, convention=convention, hw=path_hw,
                   memory_budget=budget, memory_dim=memory_dim, precision=precision, default_batch=default_batch)
    options = (("hw", hw_text), ("memory", memory), ("memory_dim", memory_dim), ("precision", precision))
    return replace(sm.analysis, memory=sm.memory, spec=sm.spec, roofline=sm.roofline, largest=sm.largest,
                   precision=sm.precision, options=options)


def summary_of(a: Analysis, llm: bool = False) -> Summary:
    """The :class:`~onnxperf.analysis.summary.Summary` of an analysis: its memory (computed here when
    ``analyze`` was not given ``hw``, ``memory`` or ``precision``), roofline and largest fit.
    ``llm``: with the short decoder-LLM section ``onnxperf summary`` and ``report`` add for a decode
    step with a KV cache (the cache recognized, bytes per token)."""
    from onnxperf.predict.memory import liveness
    from onnxperf.analysis.summary import Summary, batch_of

    mem = a.memory if a.memory is not None else liveness(a)
    section = None
    if llm and a.loaded is not None:
        from onnxperf.insights.llm.recognize import Overrides
        from onnxperf.insights.llm.section import LLMOptions, build

        opts = LLMOptions(overrides=Overrides.parse([], []), curve=True)
        budget = a.largest.budget_bytes if a.largest is not None else None
        section = build(a, a.spec, budget, opts, dict(a.dims), a.convention, a.precision)
    return Summary(a, mem, a.spec, a.roofline, a.largest, batch_of(a), section, a.precision)


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


__all__ = ["deploy", "report_options", "summary_of"]
