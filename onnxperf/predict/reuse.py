"""Where each byte a node moves comes from: the cache-aware roofline's traffic (issue 18, point 5).

The plain roofline charges every byte at main-memory bandwidth. On a CPU most activations of a
small model never leave the caches: a producer writes a tensor and its consumer reads it back from
L2 or L3 a few microseconds later, and a model whose weights and activations fit the last-level
cache reads its weights from there at every inference after the first. As in the Cache-Aware
Roofline Model (Ilić, Pratas and Sousa, IEEE CAL 2014), each level of the hierarchy has its own
bandwidth roof, and a byte is charged at the level that holds it.

Which level holds it is the tensor's **reuse distance** (Mattson et al., 1970): the bytes of the
distinct other tensors touched since it was last touched. The caches are taken as one LRU stack of
the levels' capacities; with distance d, a read of a tensor of s bytes finds

    min(s, max(0, C_k - d)) of its bytes within level k (capacity C_k, innermost first),

the rest in the next level out, and main memory beyond the last. The stack is replayed over two
inferences and the second is charged: a tensor first touched in the run (a weight, a graph input)
is then found where the rest of the previous inference left it. A write allocates its tensor at the
top of the stack and is charged at the innermost level that holds it whole (main memory when none
does). Views (Reshape and the other zero-cost aliases) touch nothing: their output is their input.

The node's own byte counts (its cost rule's) are kept and split over the levels in the proportions
its tensors give: ``bytes_read`` over its inputs, ``bytes_written`` over its outputs.

**A GPU's L2** (``gpu=True``) differs in two ways, both measured on an H200
(``benchmarks/results/gpu_l2.md``): every byte written reaches DRAM (the L2 writes it back; a
streaming kernel's output costs DRAM bandwidth whether or not it is read again soon), so writes are
charged at main memory; and a read must survive the kernel's own writes, which stream through the
same cache while it reads, so its distance counts them: a read hits level k when
``d + s + w ≤ C_k`` for ``w`` the bytes the node writes. (A consumer reading a 16 MiB tensor its
producer just wrote ran 1.5x faster than from DRAM; at 32 MiB, input and output together over the
60 MiB L2, 1.1x.)

**Writes held** (``writes_held=True``, a spec's ``gpu.l2_writes`` = 1: a runtime profile's, as
NVIDIA's MLPerf harness, :mod:`onnxperf.hardware.runtimes`): a runtime that runs at a batch whose
activations fit the L2 and reuses its activation buffers in place (TensorRT's memory planner) rewrites
a dirty line while the L2 still holds it, so an output that fits is charged where it lands, as on a
CPU; the reads keep the GPU's rule.
"""

from __future__ import annotations

from onnxperf.cost.analysis import Costs
from onnxperf.cost.walker import COUNTED, ZERO
from onnxperf.predict.tensors import tensor_bytes


class _Fenwick:
    """Prefix sums over event times (1-based), for the bytes touched since a time."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.t = [0] * (n + 1)

    def add(self, i: int, v: int) -> None:
        while i <= self.n:
            self.t[i] += v
            i += i & -i

    def prefix(self, i: int) -> int:
        s = 0
        while i > 0:
            s += self.t[i]
            i -= i & -i
        return s


def _split(size: int, distance: int, capacities: tuple[int, ...]) -> list[int]:
    """Bytes of a ``size``-byte read at reuse ``distance`` found in each level (the last entry: main
    memory): all of them in the innermost level whose capacity holds ``distance + size``. A tensor
    read in the order it was written meets each of its bytes at stack depth distance + size (the
    bytes read before it have moved above it), so under LRU it hits whole or misses whole."""
    out = [0] * (len(capacities) + 1)
    k = next((j for j, cap in enumerate(capacities) if distance + size <= cap), len(capacities))
    out[k] = size
    return out


def level_bytes(a: Costs, capacities: tuple[int, ...], gpu: bool = False,
                writes_held: bool = False) -> dict[str, tuple[float, ...]]:
    """Per costed main-graph node: its bytes (read + written) at each level, innermost first, main
    memory last (``len(capacities) + 1`` entries). Uncosted nodes are left out. ``gpu``: a GPU's L2
    (module docstring: writes at main memory, a read's distance counting the node's own writes);
    ``writes_held``: with ``gpu``, an output that fits is charged where it lands (module docstring)."""
    return {k: both for k, (both, _) in _replay(a, (capacities,), gpu, writes_held)[0].items()}


def level_bytes_rw(a: Costs, capacities: tuple[int, ...], gpu: bool = False,
                   writes_held: bool = False) -> dict[str, tuple[tuple[float, ...], ...]]:
    """Per costed main-graph node: (its bytes read at each level, its bytes written at each level), as
    :func:`level_bytes` places them (their sum is that function's figure)."""
    return level_bytes_rw_each(a, (capacities,), gpu, writes_held)[0]


def level_bytes_and_rw(a: Costs, capacities: tuple[int, ...], gpu: bool = False, writes_held: bool = False) -> tuple[
        dict[str, tuple[float, ...]], dict[str, tuple[tuple[float, ...], ...]]]:
    """(:func:`level_bytes`, :func:`level_bytes_rw`) from one replay."""
    (got,) = _replay(a, (capacities,), gpu, writes_held)
    return ({k: both for k, (both, _) in got.items()},
            {k: (reads, tuple(b - r for b, r in zip(both, reads))) for k, (both, reads) in got.items()})


def level_bytes_rw_each(a: Costs, capacity_sets: tuple[tuple[int, ...], ...], gpu: bool = False,
                        writes_held: bool = False) -> list[dict[str, tuple[tuple[float, ...], ...]]]:
    """:func:`level_bytes_rw` for each set of capacities, from one replay: the reuse distances do not
    depend on the capacities, only where each read lands does (a sweep over the GPU presets' L2 sizes
    replays the model once instead of once per size)."""
    return [{k: (reads, tuple(b - r for b, r in zip(both, reads))) for k, (both, reads) in got.items()}
            for got in _replay(a, tuple(capacity_sets), gpu, writes_held)]


def _replay(a: Costs, capacity_sets: tuple[tuple[int, ...], ...],
            gpu: bool, writes_held: bool = False) -> list[dict[str, tuple[tuple[float, ...], tuple[float, ...]]]]:
    """The LRU replay of :func:`level_bytes`, once for every set of capacities: per set, per node (bytes
    at each level, read bytes at each level)."""
    nodes = [n for n in a.main_nodes if n.status in (COUNTED, ZERO)]
    alias: dict[str, str] = {}
    views = set()
    for n in nodes:
        if n.status == ZERO and n.bytes_read == 0 and n.bytes_written == 0 and n.inputs and n.inputs[0] is not None:
            views.add(n.key)
            for o in n.outputs:
                if o is not None:
                    alias[o.name] = alias.get(n.inputs[0].name, n.inputs[0].name)
    plan = []
    events = 0
    for n in nodes:
        if n.key in views:
            plan.append(None)
            continue
        reads: dict[str, int] = {}
        for i in n.inputs:
            if i is not None:
                reads.setdefault(alias.get(i.name, i.name), tensor_bytes(i))
        writes = {o.name: tensor_bytes(o) for o in n.outputs if o is not None}
        plan.append((n, reads, writes))
        events += len(reads) + len(writes)
    tree = _Fenwick(2 * events + 1)
    last: dict[str, int] = {}
    size: dict[str, int] = {}
    now = 0
    outs: list[dict[str, tuple[tuple[float, ...], tuple[float, ...]]]] = [{} for _ in capacity_sets]

    def touch(name: str, nbytes: int) -> int | None:
        """Move ``name`` to the top of the stack; its reuse distance before (None: never touched)."""
        nonlocal now
        now += 1
        t = last.get(name)
        d = None
        if t is not None:
            d = tree.prefix(now - 1) - tree.prefix(t)
            tree.add(t, -size[name])
        tree.add(now, nbytes)
        last[name] = now
        size[name] = nbytes
        return d

    for rep in (0, 1):
        for step in plan:
            if step is None:
                continue
            n, reads, writes = step
            rsum = sum(reads.values())
            rscale = n.bytes_read / rsum if rsum else 0.0
            own = sum(writes.values()) if gpu else 0
            seen = [(s, touch(name, s)) for name, s in reads.items()]
            for name, s in writes.items():
                touch(name, s)
            if not rep:
                continue
            wsum = sum(writes.values())
            wscale = n.bytes_written / wsum if wsum else 0.0
            for out, capacities in zip(outs, capacity_sets):
                levels = len(capacities) + 1
                got = [0.0] * levels
                got_r = [0.0] * levels
                for s, d in seen:
                    if s:
                        parts = [0] * (levels - 1) + [s] if d is None else _split(s, d + own, capacities)
                        for k, b in enumerate(parts):
                            got[k] += b * rscale
                            got_r[k] += b * rscale
                for s in writes.values():
                    if s:
                        k = levels - 1 if gpu and not writes_held else next((j for j, cap in enumerate(capacities) if s <= cap), levels - 1)
                        got[k] += s * wscale
                # a rule that counts bytes its tensors do not show (none known) keeps them at main memory
                rest = n.bytes_read + n.bytes_written - sum(got)
                if rest > 0.5:
                    got[-1] += rest
                    rest_r = n.bytes_read - sum(got_r)
                    if rest_r > 0:
                        got_r[-1] += min(rest_r, rest)
                out[n.key] = (tuple(got), tuple(got_r))
    return outs
