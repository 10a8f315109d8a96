"""One model of a comparison: its analysis plus read-only lookups over its main graph (producers,
consumers, constants, attributes) that the aligner and the explanation detectors share.

Nothing is written onto the graph: a :class:`Side` only indexes what the loader and the analysis
already hold.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import onnx

from onnxperf.cost.walker import NodeCost
from onnxperf.graph.loader import GraphIR, Initializer
from onnxperf.cost.analysis import Costs
from onnxperf.cost.walker import family_of, is_param


@dataclass(frozen=True)
class Cost:
    """Summed cost of a set of nodes. Units are in the names; MACs and FLOPs are separate."""

    nodes: int = 0
    macs: int = 0
    flops: int = 0
    bytes: int = 0
    params: int = 0

    def __add__(self, other: "Cost") -> "Cost":
        return Cost(self.nodes + other.nodes, self.macs + other.macs, self.flops + other.flops,
                    self.bytes + other.bytes, self.params + other.params)

    def to_dict(self) -> dict[str, int]:
        return {"nodes": self.nodes, "macs": self.macs, "flops": self.flops, "bytes": self.bytes,
                "params": self.params}


@dataclass(frozen=True, eq=False)
class Side:
    """A model of the comparison, indexed for pattern matching. ``index`` 0 is the baseline."""

    index: int
    label: str
    analysis: Costs
    dims_applied: tuple[tuple[str, int], ...] = ()
    dims_ignored: tuple[str, ...] = ()
    #: the request this side answers (:class:`~onnxperf.cost.request.Request`): the comparison's, with the
    #: dims and input shapes this model has; a measured run of the side derives from it
    request: Any = None

    # ------------------------------------------------------------------------------------- basics
    @property
    def graph(self) -> GraphIR:
        return self.analysis.loaded.graph

    @cached_property
    def costs(self) -> dict[int, NodeCost]:
        return {n.id: n for n in self.analysis.main_nodes}

    @property
    def order(self) -> list[int]:
        """Main-graph node ids in the loader's stable topological order (execution order)."""
        return self.graph.order

    def node(self, nid: int) -> onnx.NodeProto:
        return self.graph.nodes[nid]

    def op(self, nid: int) -> str:
        return self.graph.nodes[nid].op_type

    def name(self, nid: int) -> str:
        return self.graph.nodes[nid].name

    @cached_property
    def producers(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for i, node in enumerate(self.graph.nodes):
            for t in node.output:
                if t:
                    out[t] = i
        return out

    @cached_property
    def consumers(self) -> dict[str, tuple[int, ...]]:
        acc: dict[str, list[int]] = {}
        for i in self.order:
            for t in self.graph.nodes[i].input:
                if t:
                    acc.setdefault(t, []).append(i)
        return {k: tuple(v) for k, v in acc.items()}

    @cached_property
    def graph_outputs(self) -> frozenset[str]:
        return frozenset(self.graph.outputs)

    def producer(self, tensor: str) -> int | None:
        return self.producers.get(tensor)

    def users(self, tensor: str) -> tuple[int, ...]:
        return self.consumers.get(tensor, ())

    def const(self, tensor: str) -> Initializer | None:
        """The initializer or Constant-node record behind ``tensor`` (None for activations)."""
        if not tensor:
            return None
        return self.graph.initializers.get(tensor) or self.graph.constants.get(tensor)

    def is_const(self, tensor: str) -> bool:
        return self.const(tensor) is not None

    def const_value(self, tensor: str) -> np.ndarray | None:
        return self.graph.const_value(tensor)

    def activation_inputs(self, nid: int) -> list[str]:
        """Inputs that are neither absent nor constant, in order."""
        return [t for t in self.graph.nodes[nid].input if t and not self.is_const(t)]

    def attrs(self, nid: int) -> dict[str, Any]:
        """Attributes written on the node (defaults are filled by the callers that need them)."""
        out: dict[str, Any] = {}
        for a in self.graph.nodes[nid].attribute:
            if a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS, onnx.AttributeProto.TENSOR):
                continue
            v = onnx.helper.get_attribute_value(a)
            out[a.name] = v.decode("utf-8", "replace") if isinstance(v, bytes) else v
        return out

    def shape(self, tensor: str) -> tuple | None:
        ti = (self.analysis.tensors or {}).get(tensor)
        if ti is not None and ti.shape is not None:
            return tuple(ti.shape)
        rec = self.const(tensor)
        return None if rec is None else tuple(rec.dims)

    def single_user(self, nid: int) -> int | None:
        """The one node consuming ``nid``'s only output (None if several, none, or a graph output)."""
        outs = [t for t in self.graph.nodes[nid].output if t]
        if len(outs) != 1 or outs[0] in self.graph_outputs:
            return None
        users = self.users(outs[0])
        return users[0] if len(users) == 1 else None

    # --------------------------------------------------------------------------------- costs
    def cost_of(self, nids) -> Cost:
        """Summed cost of nodes ``nids``; ``params`` counts each parameter tensor they read once."""
        total = Cost()
        seen: set[str] = set()
        params = 0
        for nid in sorted(set(nids)):
            c = self.costs[nid]
            total = total + Cost(1, c.macs, c.flops, c.bytes_read + c.bytes_written, 0)
            for t in self.graph.nodes[nid].input:
                if t and t not in seen and t in self.param_tensors:
                    seen.add(t)
                    params += self.param_tensors[t]
        return Cost(total.nodes, total.macs, total.flops, total.bytes, params)

    @cached_property
    def param_tensors(self) -> dict[str, int]:
        """Constant tensors that count as parameters (the analysis' own rule) -> elements."""

        fams: dict[str, list[str]] = {}
        for node in self.graph.nodes:
            fam = family_of(node)
            for t in node.input:
                fams.setdefault(t, []).append(fam)
        out: dict[str, int] = {}
        for rec in list(self.graph.initializers.values()) + list(self.graph.constants.values()):
            if rec.name not in out and is_param(rec.elem_type, rec.numel, fams.get(rec.name, ("misc",))):
                out[rec.name] = rec.numel
        return out
