"""The summary result: analysis + memory + (optional) roofline and largest-fit, as one plain,
JSON-serializable object that every renderer formats. Computation happens here, never in a renderer."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from onnxperf.cost.analysis import Analysis, analyze
from onnxperf.cost.analysis import to_dict as analysis_dict
from onnxperf.predict.memory import LargestFit, MemoryResult, largest_fitting, liveness

if TYPE_CHECKING:
    from onnxperf.predict.roofline import RooflineResult


@dataclass(frozen=True)
class Summary:
    analysis: Analysis
    memory: MemoryResult
    spec: Any | None = None  # HardwareSpec
    roofline: RooflineResult | None = None
    largest: LargestFit | None = None
    #: items per inference for throughput (the bound batch dim, else 1)
    batch: int = 1
    #: decoder LLMs: the KV cache recognized, and with ``--llm`` the deployment figures
    llm: Any | None = None  # llm.section.LLMSection
    #: the ``--precision`` what-if the figures are for (:class:`onnxperf.predict.precision.Precision`), None: as stored
    precision: Any | None = None

    def to_dict(self, encoded_rows: bool = False) -> dict[str, Any]:
        """The JSON contract; ``encoded_rows``: node records as JSON text (see :func:`analysis.to_dict`)."""
        d = analysis_dict(self.analysis, encoded_rows)
        m = self.memory
        d["memory"] = {
            "weight_bytes": m.weight_bytes, "weight_bytes_if_fp16": m.weight_bytes_fp16,
            "weight_bytes_if_int8": m.weight_bytes_int8, "activation_preallocated_bytes": m.preallocated_bytes,
            "activation_peak_bytes": m.peak_bytes, "peak_step": m.peak_step, "peak_node_key": m.peak_node_key,
            "peak_node_name": m.peak_node_name, "total_bytes": m.total_bytes,
            "unknown_tensors": m.unknown_tensors, "complete": m.complete, "bound": m.side or "exact",
            "timeline_bytes": list(m.timeline),
        }
        if self.roofline is not None:
            r = self.roofline
            d["roofline"] = {
                "hardware": self.spec.id if self.spec is not None else r.spec_id,
                "ridge_fp32_flops_per_byte": r.ridge_fp32,
                "latency_s": r.latency_s, "latency_is_lower_bound": r.lower_bound, "batch": self.batch,
                "throughput_items_per_s": r.throughput_per_s(self.batch),
                "unknown_nodes": r.unknown_nodes, "complete": r.complete, "bound": r.side or "exact",
                "compute_bound_time_s": r.compute_bound_time_s, "memory_bound_time_s": r.memory_bound_time_s,
                "run_overhead_s": r.run_overhead_s,
                "bytes_by_level": [{"level": k, "bytes": v} for k, v in r.bytes_by_level] or None,
                "gpu_kernel_model": None if r.kernels is None else {
                    "kernels": r.kernels, "assumed": [{"what": w, "nodes": n} for w, n in r.assumed],
                    "not_assumed": ["fused attention", "transpose elimination", "horizontal GEMM fusion"]},
                "by_op_type": [{"op_type": o.op_type, "count": o.count, "ops": o.ops, "bytes": o.bytes,
                                "intensity": o.intensity, "time_s": o.time_s, "share": o.share,
                                "ops_per_s": o.ops_per_s, "bound": o.bound,
                                "compute_bound_time_s": o.compute_bound_time_s,
                                "memory_bound_time_s": o.memory_bound_time_s} for o in r.by_op_type],
                "nodes": [{"key": n.key, "dtype": n.dtype, "ops": n.ops, "bytes": n.bytes, "intensity": n.intensity,
                           "peak_ops_per_s": n.peak_ops_per_s, "attainable_ops_per_s": n.attainable_ops_per_s,
                           "bound": n.bound, "time_s": n.time_s, "share": n.share} for n in r.nodes],
            }
        if self.roofline is not None:
            from onnxperf.insights.bottlenecks import bottlenecks

            d["bottlenecks"] = bottlenecks(self).to_dict()  # what the text's Bottlenecks block says
        if self.largest is not None:
            d["largest_fit"] = self.largest.to_dict()
        if self.llm is not None:
            d["llm"] = self.llm.to_dict()
        if self.precision is not None:
            d["precision"] = self.precision.to_dict()
        return d


def batch_of(a: Analysis) -> int:
    """Items per inference: the value bound to a dim named like a batch, else the first input's
    leading dim when it is known, else 1."""
    for name, value in a.dims:
        if "batch" in name.lower():
            return max(int(value), 1)
    if a.model.inputs and a.model.inputs[0].shape and isinstance(a.model.inputs[0].shape[0], int):
        return max(int(a.model.inputs[0].shape[0]), 1)
    return 1


def summarize(model, dims: dict[str, int] | None = None, input_shapes=None, convention: str = "default",
              hw: str | None = None, memory_budget: int | None = None, memory_dim: str = "batch",
              llm: Any | None = None, precision: str | None = None, default_batch: bool = False) -> Summary:
    """Analyze ``model`` and add memory, roofline (``hw``: preset id or spec file) and the largest
    value of ``memory_dim`` that fits ``memory_budget`` bytes. ``llm``
    (:class:`onnxperf.insights.llm.section.LLMOptions`): look for a decoder step with a KV cache and, when
    asked, compute its deployment figures (:mod:`onnxperf.insights.llm`). ``default_batch``: an unbound batch
    dim is bound to 1, with a note (:func:`onnxperf.shapes.infer.binding_notes`)."""
    if llm is not None and llm.full:
        # the figures are the decode step's at the context: bind the cache's past dim to it
        from onnxperf.insights.llm.section import decode_bindings
        from onnxperf.graph.loader import LoadedModel, load

        model = model if isinstance(model, LoadedModel) else load(model)
        dims = decode_bindings(model, dims, llm.context)
    prec = None
    if precision is not None:
        from onnxperf.predict.precision import get

        prec = get(precision)
    a = analyze(model, dims=dims, input_shapes=input_shapes, convention=convention, default_batch=default_batch)
    applied = dict(a.dims)  # without the names the model lacks, with a defaulted batch
    if prec is not None:
        from onnxperf.predict.precision import what_if

        a = what_if(a, prec)
    spec = None
    rl = None
    if hw:
        from onnxperf.hardware import load_spec
        from onnxperf.predict.roofline import roofline  # ~10 ms of imports a summary without --hw does not need

        spec = load_spec(hw) if isinstance(hw, (str, os.PathLike)) else hw  # an id, a file, or a loaded spec
        rl = roofline(a, spec, prec)
    largest = None
    if memory_budget is not None:
        largest = largest_fitting(a.loaded, memory_budget, memory_dim, applied, precision=prec,
                                  input_shapes=input_shapes)
    section = None
    if llm is not None and a.loaded is not None:
        from onnxperf.insights.llm.section import build

        section = build(a, spec, memory_budget, llm, dims, convention, prec)
    return Summary(a, liveness(a), spec, rl, largest, batch_of(a), section, prec)
