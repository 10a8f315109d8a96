"""The vocabulary of the execution plan: how the runtime runs each node, what limits it, and which
bound holds a group of nodes. One place, so that every output names the same fact the same way.

The execution plan of an analysis on a spec (at a precision) is :class:`onnxperf.predict.roofline.RooflineResult`,
made once by :func:`onnxperf.predict.roofline.roofline`; its rows say, per main-graph node:

* **placement**: :data:`OWN` (its own kernel or pass), :data:`INSIDE` (inside the kernel another node
  starts: an epilogue, a member of a fused GPU kernel, an Add of a SkipLayerNormalization) or
  :data:`FREE` (no work at run time: folded at load, absorbed into a neighbour's weights, a view);
  with ``how`` the fusion that placed it and ``kernel`` the node whose kernel it runs in
  (:func:`placements`);
* the parts of its predicted time: arithmetic ``compute_s`` (at the family's attainable compute, and
  divided by the GPU fill of a tiled kernel), ``memory_s`` (its charged bytes at their bandwidth),
  ``dispatch_s`` (the per-node or launch overhead actually added), with

      t = max(c, m) + α·min(c, m) + o

* its **limiter** (:func:`limiter`), one of :data:`COMPUTE`, :data:`FILL`, :data:`MEMORY`,
  :data:`DISPATCH`, :data:`NONE`:

      dispatch  when o > 0 and o ≥ t − o            (the overhead outweighs the work)
      fill      when c ≥ m and fill < 1/2            (arithmetic dominates, and the kernel is too small
                                                      to fill the GPU: the lost rate outweighs the rest)
      compute   when c ≥ m
      memory    otherwise                            (none: no time, or no work at all)

* against one **named peak** π_d (the spec's peak for the dtype d its arithmetic runs in, no efficiency
  applied) and the bandwidth β of the roof its bytes are charged at (main memory, or the fastest cache
  level serving any of them): intensity I = W / Q (Q: the bytes charged), the roof min(π_d, I·β), the
  attained rate W / t and the share of peak W / t / π_d. Since t ≥ max(c, m) and every efficiency is at
  most 1, W / t ≤ min(π_d, I·β): every node sits on or under its roof.

A group's bound (an op type, a bottleneck group) is the limiter holding most of its time (:func:`dominant`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from onnxperf.predict.tensors import links

OWN, INSIDE, FREE = "own", "inside", "free"
COMPUTE, FILL, MEMORY, DISPATCH, NONE = "compute", "fill", "memory", "dispatch", "none"
#: the limiters, in the order outputs list them
LIMITERS = (COMPUTE, FILL, MEMORY, DISPATCH)
#: how every output says what a plain roofline is (a spec without efficiencies): an estimate, not a bound
PLAIN_TEXT = ("Plain roofline: every node at its roof, every tensor through main memory, nothing fused or "
              "overlapped: an estimate, not a bound (runtimes that fuse and keep activations in cache beat it: "
              "published CPU runs took 0.27-5.5x of it)")
#: how outputs name each limiter in prose
LIMITER_WORDS = {COMPUTE: "compute", FILL: "GPU fill", MEMORY: "memory", DISPATCH: "dispatch"}
#: below this fill, a compute-dominated kernel is limited by how much of the GPU it fills
FILL_LIMIT = 0.5


def limiter(time_s: float | None, compute_s: float, memory_s: float, dispatch_s: float, fill: float = 1.0) -> str | None:
    """The limiter of a node (module docstring); None when its time is unknown."""
    if time_s is None:
        return None
    if time_s <= 0 or (compute_s <= 0 and memory_s <= 0 and dispatch_s <= 0):
        return NONE
    if dispatch_s > 0 and dispatch_s >= time_s - dispatch_s:
        return DISPATCH
    if compute_s >= memory_s and compute_s > 0:
        return FILL if fill < FILL_LIMIT else COMPUTE
    return MEMORY


def dominant(times: Mapping[str, float]) -> str:
    """The limiter holding most of a group's time (ties: the first in :data:`LIMITERS`); :data:`NONE`
    when no limiter holds any."""
    best = max(LIMITERS, key=lambda k: (times.get(k, 0.0), -LIMITERS.index(k)))
    return best if times.get(best, 0.0) > 0 else NONE


@dataclass(frozen=True)
class Placement:
    """How the runtime runs one node: ``runs`` (:data:`OWN`, :data:`INSIDE`, :data:`FREE`); ``how`` the
    fusion that placed it (None: its own kernel, unfused); ``kernel`` the key of the node whose kernel
    it runs in (itself when it starts one; None when it runs nothing of its own and has no host);
    ``runs_as`` the fused op its kernel is (a node that runs as SkipLayerNormalization, QLinearConv)."""

    runs: str = OWN
    how: str | None = None
    kernel: str | None = None
    runs_as: str | None = None


#: what each fusion did, as outputs word it
FOLDED_TEXT = "computed when the runtime loads the model"
ABSORBED_TEXT = "folded into a neighbour's weights or attributes at load"
NO_KERNEL_TEXT = "runs no kernel: a view, or computed when the engine is built"


def placements(nodes, folded_keys: Iterable[str] | None = None, fusions=None, gpu=None) -> dict[str, Placement]:
    """Node key -> :class:`Placement` of every main-graph node in ``nodes`` (execution order), as the
    spec's ``fusion.*`` keys make the roofline run them: ``folded_keys`` (``fusion.constant_folding``),
    ``fusions`` (onnxruntime's CPU fusions, :class:`onnxperf.predict.roofline.Fusions`), ``gpu`` (the
    GPU kernel plan, :class:`onnxperf.predict.gpu_kernels.KernelPlan`); each None where the key is off.

    The kernel of an epilogue is the latest producer of the tensors it gets for free; of an absorbed
    node its producer (a zero Pad's: its consumer); of a node inside a fused kernel the nearest node
    that runs as that kernel; of a GPU kernel's member the node that launches it. Chains are followed
    to the node that starts the kernel."""
    out: dict[str, Placement] = {n.key: Placement(kernel=n.key) for n in nodes}
    how: dict[str, str] = {}
    into: dict[str, str] = {}
    free: set[str] = set()
    inside: set[str] = set()
    runs_as: dict[str, str] = {}
    for k in sorted(folded_keys or ()):
        if k in out:
            how[k], free = "constant folding", free | {k}
    if fusions is not None:
        position = {n.key: i for i, n in enumerate(nodes)}
        producer, users = links(nodes)

        def latest(names: Iterable[str]):
            ps = [producer[t] for t in names if t in producer and producer[t].op_type != "Constant"]
            return max(ps, key=lambda p: position[p.key]) if ps else None

        for n in nodes:
            k = n.key
            if k in fusions.absorbed:
                how[k] = "absorbed"
                free.add(k)
                outs = [o for o in n.outputs if o is not None]
                p = (users.get(outs[0].name, [None])[0] if outs else None) if n.op_type == "Pad" else \
                    latest(i.name for i in n.inputs if i is not None)
            elif k in fusions.epilogue:
                how[k] = "epilogue"
                inside.add(k)
                p = latest(fusions.epilogue[k])
            elif k in fusions.inside:
                how[k] = "inside a fused kernel"
                inside.add(k)
                p = _nearest(n, fusions.runs_as, fusions.inside, producer, users)
            elif k in fusions.runs_as:
                how[k] = "runs as"
                runs_as[k] = fusions.runs_as[k][0]
                continue
            else:
                continue
            if p is not None:
                into[k] = p.key
        for k in fusions.inside:
            if into.get(k) in fusions.runs_as:
                how[k] = f"inside {fusions.runs_as[into[k]][0]}"
    if gpu is not None:
        for n in nodes:
            k = n.key
            if k in gpu.free:
                how[k] = "no kernel"
                free.add(k)
                inside.discard(k)
            elif gpu.kernel.get(k, k) != k:
                how[k] = "gpu kernel"
                inside.add(k)
                into[k] = gpu.kernel[k]
    for k in out:
        host = _root(k, into) if k in into else None
        if k in free:
            out[k] = Placement(FREE, how.get(k), host)
        elif k in inside:
            out[k] = Placement(INSIDE, how.get(k), host)
        elif k in how:
            out[k] = Placement(OWN, how[k], k, runs_as.get(k))
    return out


def members(placed: Mapping[str, Placement], order: Iterable[str]) -> dict[str, list[str]]:
    """Kernel key -> the other nodes placed in it (inside it, or absorbed into it), in ``order``."""
    out: dict[str, list[str]] = {}
    for k in order:
        p = placed[k]
        if p.runs != OWN and p.kernel is not None and p.kernel != k:
            out.setdefault(p.kernel, []).append(k)
    return out


def _nearest(n, runs_as, inside, producer, users):
    """The node of ``runs_as`` nearest to ``n`` through nodes of ``inside`` (a breadth-first walk,
    readers before producers), or None. Readers first: the Adds of a SkipLayerNormalization and the
    DequantizeLinear nodes of a QLinearConv feed their kernel's node, while their other input may
    come from the kernel before (a residual, the previous conv's QuantizeLinear)."""
    seen = {n.key}
    frontier = [n]
    while frontier:
        nxt = []
        for x in frontier:
            near = [u for o in x.outputs if o is not None for u in users.get(o.name, ())]
            near += [producer[i.name] for i in x.inputs if i is not None and i.name in producer]
            for y in near:
                if y.key in runs_as:
                    return y
                if y.key in inside and y.key not in seen:
                    seen.add(y.key)
                    nxt.append(y)
        frontier = nxt
    return None


def _root(key: str, into: Mapping[str, str]) -> str | None:
    """Follow ``into`` from ``key`` to the node that starts the kernel (None on a cycle)."""
    seen = {key}
    k = into[key]
    while k in into:
        if k in seen:
            return None
        seen.add(k)
        k = into[k]
    return k


__all__ = ["COMPUTE", "DISPATCH", "FILL", "FILL_LIMIT", "FREE", "INSIDE", "LIMITER_WORDS", "LIMITERS", "PLAIN_TEXT", "MEMORY", "NONE", "OWN",
           "Placement", "dominant", "limiter", "members", "placements"]
