"""Tensor parallelism over N devices (``--devices N``): one device's share of a decoder step, and the
all-reduces that join the shares (issue 29, item 6).

The layout is Megatron-LM's, as TensorRT-LLM, vLLM and onnxruntime-genai shard a decoder: the
residual stream (the hidden state, the norms, the residual adds) is replicated on every device; a
matrix product whose input is replicated splits its weight by columns (Q, K, V, the MLP's gate and
up projections, the LM head by vocabulary: its output is split); the next one, whose input is split,
splits its weight by rows (the attention output projection, the MLP's down projection) and its
partial outputs are summed across the devices by an all-reduce. Attention splits by heads (the KV
cache with it: a device holds ``ceil(kv_heads / N)`` of the KV heads, all of them when there are
fewer KV heads than devices), elementwise ops follow their inputs. The embedding table is split by
vocabulary (an all-reduce of its output joins it).

:func:`shard_plan` classifies the nodes of an analysis from its graph alone, walking it in order:
a tensor is *split* when a split input or a column-parallel product made it, *replicated*
otherwise. :func:`shard` returns one device's costs: the work, traffic and weights of every split
node divided by N (the traffic of the nodes that read the KV cache by the cache's own share when it
has fewer KV heads than devices: each device holds a whole KV head), replicated nodes whole. The step's time on one device is the roofline of that
share plus the all-reduces on the critical path (decode steps do not overlap them):

    t_allreduce(M) = α + 2 (N - 1) / N · M / B,   α = base + 2 (N - 1) · hop

a ring all-reduce of M bytes over a link of B bytes/s per direction (the preset's
``interconnect_bytes_per_s``). α is NCCL's own latency model of an all-reduce (``ncclTopoTuneModel``:
a base latency plus one per step of the 2 (N - 1) steps of the ring, LL protocol: what it picks for
the few kilobytes a decode step reduces), ``allreduce.base_s`` and ``allreduce.hop_s`` in the spec's
``[efficiency]`` (NVIDIA presets: 6.6 µs and 0.6 µs per step over NVLink, 1 µs over PCIe); a spec
without them pays its per-kernel overhead (``overhead_s``) once per all-reduce.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import ceil
from typing import Any

from onnxperf.cost.analysis import Costs

#: ops that read a tensor's shape, not its data: their outputs are replicated
_METADATA = frozenset({"Shape", "Size"})
#: matrix products whose weight input (index 1) splits by columns or rows
_PRODUCTS = frozenset({"MatMul", "Gemm", "FusedMatMul", "MatMulNBits"})


@dataclass(frozen=True)
class ShardPlan:
    """How a step runs on ``devices`` devices: the nodes whose work splits, the share of each, the
    all-reduces (node key, bytes of its output) and the weights that split."""

    devices: int
    #: node key -> its share of the node's work on one device (1/N, or the KV cache's share)
    share: tuple[tuple[str, float], ...]
    allreduces: tuple[tuple[str, int], ...]
    split_weights: frozenset[str]
    kv_share: float
    #: the KV-cache inputs (a device holds ``kv_share`` of each)
    caches: tuple[str, ...] = ()

    @property
    def allreduce_bytes(self) -> int:
        return sum(b for _, b in self.allreduces)


def _nbytes(tensors, name: str | None) -> int:
    ti = tensors.get(name) if name else None
    return ti.nbytes if ti is not None and ti.is_static else 0


def shard_plan(a: Costs, caches: tuple[str, ...], kv_heads: int | None, devices: int) -> ShardPlan:
    """The tensor-parallel plan of a decoder step's analysis ``a`` over ``devices`` (see the module
    docstring); ``caches``: its KV-cache inputs, ``kv_heads`` their KV heads (None: as many as devices)."""
    n = devices
    lm = a.loaded
    inits = lm.graph.initializers if lm is not None else {}
    tensors = a.tensors or {}
    kv_share = 1 / n if not kv_heads else ceil(kv_heads / n) / kv_heads
    split: set[str] = set()
    cache_derived: set[str] = set(caches)
    split.update(caches)
    share: dict[str, float] = {}
    allreduces: list[tuple[str, int]] = []
    split_weights: set[str] = set()
    transposed_weight: dict[str, str] = {}
    for node in a.main_nodes:
        ins = [i.name if i is not None else None for i in node.inputs]
        outs = [o.name for o in node.outputs if o is not None]
        if node.op_type == "Transpose" and ins and ins[0] in inits:
            transposed_weight.update({o: ins[0] for o in outs})
            continue
        weight = None
        if node.op_type in _PRODUCTS and len(ins) > 1 and ins[1] is not None:
            w = transposed_weight.get(ins[1], ins[1])
            if w in inits and len(inits[w].dims) == 2:
                weight = w
        if weight is not None:
            split_weights.add(weight)
            share[node.key] = 1 / n
            if ins[0] in split:  # row-parallel: partial sums, joined by an all-reduce of the output
                allreduces.append((node.key, sum(_nbytes(tensors, o) for o in outs)))
            else:  # column-parallel: the output is split
                split.update(outs)
            continue
        if node.op_type == "Gather" and ins and ins[0] in inits and len(inits[ins[0]].dims) == 2 \
                and ins[0] not in split_weights and not any(x in split for x in ins[1:] if x):
            # the embedding, split by vocabulary: each device looks up its rows, an all-reduce joins them
            split_weights.add(ins[0])
            share[node.key] = 1 / n
            allreduces.append((node.key, sum(_nbytes(tensors, o) for o in outs)))
            continue
        if node.op_type in _METADATA:
            continue  # a shape is the same on every device (and what is computed from it)
        if any(x in split for x in ins if x):
            split.update(outs)
            touches_cache = any(x in cache_derived for x in ins if x)
            if touches_cache:
                cache_derived.update(outs)
            share[node.key] = kv_share if touches_cache else 1 / n
    return ShardPlan(n, tuple(sorted(share.items())), tuple(allreduces), frozenset(split_weights), kv_share,
                     tuple(caches))


def shard(a: Costs, plan: ShardPlan) -> Costs:
    """One device's costs under ``plan``: every split node's MACs, FLOPs, integer ops and bytes at its
    share, the split weights' parameters divided by the device count; tensor records (for liveness)
    of split tensors at the share of the node that makes them."""
    if plan.devices == 1:
        return a
    share = dict(plan.share)
    nodes = []
    for node in a.nodes:
        f = share.get(node.key) if not node.scope else None
        if f is None:
            nodes.append(node)
            continue
        w = 1 / plan.devices  # the arithmetic splits by heads (query heads) or columns; bytes at the share
        nodes.append(node._replace(macs=ceil(node.macs * w), flops=ceil(node.flops * w),
                                   int_ops=ceil(node.int_ops * w), bytes_read=ceil(node.bytes_read * f),
                                   bytes_written=ceil(node.bytes_written * f), params=ceil(node.params * w)))
    t = a.totals
    lm = a.loaded
    inits = lm.graph.initializers if lm is not None else {}
    split_params = split_bytes = 0
    for w in plan.split_weights:
        rec = inits.get(w)
        if rec is not None:
            k = 1
            for d in rec.dims:
                k *= d
            split_params += k
    # the weights' bytes per device: the split ones at 1/N of their share of the parameter bytes
    if t.params:
        split_bytes = t.param_bytes * split_params // t.params
    per_device = t.param_bytes - split_bytes + ceil(split_bytes / plan.devices)

    tensors = a.tensors
    if tensors is not None:
        made = {}
        for node in a.main_nodes:
            f = share.get(node.key)
            if f is not None:
                for o in node.outputs:
                    if o is not None and o.name in tensors:
                        made[o.name] = f
        for c in plan.caches:
            made[c] = plan.kv_share
        tensors = {k: (_Share(ti, made[k]) if k in made else ti) for k, ti in tensors.items()}
    return a.with_nodes(tuple(nodes), ("macs", "flops", "int_ops", "bytes_read", "bytes_written"),
                        param_bytes=per_device, tensors=tensors,
                        param_bytes_by_dtype=tuple((k, ceil(v * per_device / t.param_bytes) if t.param_bytes else v)
                                                   for k, v in t.param_bytes_by_dtype))


class _Share:
    """A tensor record at one device's share of its bytes (what liveness reads)."""

    __slots__ = ("name", "elem_type", "shape", "is_static", "nbytes", "scaled")

    def __init__(self, ti, f: float):
        self.name, self.elem_type, self.shape, self.is_static = ti.name, ti.elem_type, ti.shape, ti.is_static
        self.nbytes = ceil(ti.nbytes * f) if ti.is_static else 0
        self.scaled = True


def allreduce_latency_s(devices: int, spec: Any) -> float:
    """α of one all-reduce over ``devices``: ``base + 2 (N - 1) · hop`` from the spec's ``allreduce.base_s``
    and ``allreduce.hop_s``; ``overhead_s`` (one kernel launch) for a spec without them."""
    eff = getattr(spec, "efficiency", None) or {}
    if "allreduce.base_s" in eff:
        return float(eff["allreduce.base_s"]) + 2 * (devices - 1) * float(eff.get("allreduce.hop_s", 0.0))
    return float(eff.get("overhead_s", 0.0))


def allreduce_s(nbytes: int, devices: int, spec: Any) -> float | None:
    """A ring all-reduce of ``nbytes`` over ``devices``: ``α + 2 (N - 1) / N · M / B`` (module docstring);
    None when the spec gives no interconnect."""
    if devices <= 1:
        return 0.0
    link = getattr(spec, "interconnect_bytes_per_s", None)
    if not link:
        return None
    return allreduce_latency_s(devices, spec) + 2 * (devices - 1) / devices * nbytes / link


__all__ = ["ShardPlan", "allreduce_latency_s", "allreduce_s", "shard", "shard_plan"]
