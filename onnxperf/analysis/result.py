"""The one result: :class:`Analysis`, the costs of a model (:class:`onnxperf.cost.analysis.Costs`) with the
deployment figures one request asked for, made by :func:`onnxperf.analysis.compose.compose`.

It is what ``onnxperf.analyze`` returns and every output reads; ``to_dict`` is the JSON contract (schema
``onnxperf.analysis/1``): the cost sections, then ``memory``, ``roofline`` and ``bottlenecks`` (with
``hw``), ``largest_fit``, ``llm``, ``precision`` where asked for. An ``Analysis`` is a ``Costs``: every
engine below (memory, the execution plan, the insights) reads the costs, none of this type.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from onnxperf.cost.analysis import Costs
from onnxperf.hardware import HardwareSpec
from onnxperf.insights.bottlenecks import Bottlenecks
from onnxperf.insights.llm.section import LLMSection
from onnxperf.insights.partial import warnings as cost_warnings
from onnxperf.predict.memory import DeviceFit, LargestFit, MemoryResult
from onnxperf.ui.numbers import binary_bytes
from onnxperf.predict.precision import Precision
from onnxperf.predict.roofline import RooflineResult

#: how the layers above show an analysis: ``"html"`` (a notebook's fragment), ``"line"`` (IPython's one
#: line), ``"dataframe"`` (pandas). Registered by :mod:`onnxperf.api` (the products make them), so this
#: result type imports none of them
VIEWS: dict[str, Any] = {}


@dataclass(frozen=True, repr=False)  # the costs' one-line repr, not every node
class Analysis(Costs):
    #: activation memory over the execution order
    memory: MemoryResult | None = field(default=None, hash=False, repr=False)
    #: with ``hw``: the hardware spec and the execution plan on it
    spec: HardwareSpec | None = field(default=None, hash=False, repr=False)
    roofline: RooflineResult | None = field(default=None, hash=False, repr=False)
    #: with ``memory`` (a budget): the largest value of ``memory_dim`` that fits it
    largest: LargestFit | None = field(default=None, hash=False, repr=False)
    #: with ``precision``: the what-if every figure is for (the costs are its what-if)
    precision: Precision | None = field(default=None, hash=False, repr=False)
    #: ``hw``, ``memory``, ``memory_dim`` and ``precision`` as given (the report's header shows them)
    options: tuple[tuple[str, Any], ...] = field(default=(), hash=False, repr=False)
    #: a decode step with a KV cache: the cache recognized, and with ``--llm`` the deployment figures
    llm: LLMSection | None = field(default=None, hash=False, repr=False)
    #: with ``hw``: the time grouped the way an engineer acts on it, and the verdict
    bottlenecks: Bottlenecks | None = field(default=None, hash=False, repr=False)
    #: with ``hw`` on a spec with a memory capacity: whether weights + activation peak fit the device
    device: DeviceFit | None = field(default=None, hash=False, repr=False)

    @classmethod
    def of(cls, costs: Costs, **more: Any) -> Analysis:
        """The result of ``costs`` with the deployment figures ``more`` names."""
        return cls(**{f.name: getattr(costs, f.name) for f in fields(Costs)}, **more)

    def to_dict(self, encoded_rows: bool = False) -> dict[str, Any]:
        """The JSON contract (schema ``onnxperf.analysis/1``): the costs, and the sections of what the
        request asked for. ``encoded_rows``: the node records as JSON text already (for writing)."""
        d = super().to_dict(encoded_rows)
        if self.memory is not None:
            d["memory"] = self.memory.to_dict()
        if self.roofline is not None:
            d["roofline"] = self.roofline.to_dict(self.batch, self.spec.id if self.spec is not None else None)
        if self.bottlenecks is not None:
            d["bottlenecks"] = self.bottlenecks.to_dict()  # what the text's Bottlenecks block says
        if self.largest is not None:
            d["largest_fit"] = self.largest.to_dict()
        if self.llm is not None:
            d["llm"] = self.llm.to_dict()
        if self.precision is not None:
            d["precision"] = self.precision.to_dict()
        if self.device is not None:
            d["device_memory"] = self.device.to_dict()
        return d

    def warnings(self) -> list[dict[str, Any]]:
        """What makes a figure partial (the costs', :func:`onnxperf.insights.partial.warnings`) and a run the
        device cannot hold, each with a code, a level and a one-line message: every output lists these."""
        out = cost_warnings(self)
        f = self.device
        if f is not None and f.fits is False:  # (None: the memory is partial, which its own warning says)
            fix = ""
            if f.largest is not None:
                fix = (f"; the largest {f.largest.dim} that fits is {f.largest.value:,}" if f.largest.value
                       else f"; not even {f.largest.dim}=1 fits")
            out.append({"code": "device_memory", "level": "warning",
                        "message": f"Does not fit {f.hardware}: weights + activation peak need "
                                   f"{binary_bytes(f.total_bytes)}{'' if self.memory.complete else ' or more'}, the "
                                   f"device has {binary_bytes(f.capacity_bytes)}{fix}; the predicted latency is for a "
                                   "run that cannot happen"})
        return out

    def to_dataframe(self, kind: str = "nodes"):
        """The nodes (``kind="nodes"``, subgraph nodes included) or the op types (``"op_types"``) as a
        pandas DataFrame with nullable dtypes: a cost that is not known is NA, never 0; with ``hw``,
        the predicted times too. pandas is an optional extra: ``pip install "onnxperf[notebook]"``."""
        return VIEWS["dataframe"](self, kind)

    def _repr_html_(self) -> str | None:
        """Shown by Jupyter: cards, the cost by op type, the top nodes, warnings (:mod:`onnxperf.products.notebook`)."""
        view = VIEWS.get("html")
        return None if view is None else view(self)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        """IPython's text for the analysis: one line, not every node."""
        view = VIEWS.get("line")
        p.text(repr(self) if view is None else view(self))


__all__ = ["Analysis", "VIEWS"]
