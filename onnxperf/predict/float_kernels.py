"""float16 nodes on onnxruntime's CPU provider: most run on the float kernel, between Casts.

onnxruntime's CPU provider has float16 kernels for few ops. When a session is created, its
``InsertCastTransformer`` runs every other float16 node on the float kernel: it converts the node's
float16 initializers to float once (at load: no run-time cost), inserts a Cast float16 -> float before each
float16 activation the node reads and a Cast float -> float16 after each float16 output that leaves for a
float16 consumer or the graph's outputs; between two such nodes the tensor stays float (the Casts that
would meet are removed). So, per run (issue 30: the corpus fp16 BERT ran at the fp32 export's speed plus
17 Casts, where the graph as written halves its bytes):

* a node on the float kernel reads and writes its float16 tensors at float32 width:
  R' = R · Σ_in bytes at float32 / Σ_in bytes as stored, W' likewise over its outputs;
* each inserted Cast of n elements moves 2n + 4n = 6n bytes and is one kernel: t = 6n / (e_m · β) + o,
  with the movement family's memory share (a Cast is a movement op) and the per-kernel overhead; it is
  charged to the float-kernel node it serves (the consumer of a float16 -> float Cast, the producer of a
  float -> float16 one).

Which nodes: a main-graph node with a float16 input or output whose CPU kernels (the installed
onnxruntime's registry, :mod:`onnxperf.predict.ort_kernels`) for its op version accept none of its types as
they are, and one of them with float16 read as float. An op without a CPU kernel, or of unknown types, is
left as written; so is every node where onnxruntime's registry cannot be read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from onnxperf.base.errors import OptionError
from onnxperf.cost.analysis import Costs
from onnxperf.predict.ort_kernels import CPU, F16, F32, accepts, kernel_table, param_types, schema
from onnxperf.predict.precision import rescaled
from onnxperf.predict.tensors import links

_FLOAT16 = "float16"


def _as_float(ref) -> Fraction | None:
    """A tensor's bits on the float kernel: float16 at 32, the rest as stored (None)."""
    return Fraction(32) if ref is not None and ref.dtype == _FLOAT16 else None


def has_float16(nodes) -> bool:
    """Some node reads or writes a float16 tensor."""
    return any(r is not None and r.dtype == _FLOAT16 for n in nodes for r in (*n.inputs, *n.outputs))


def at_float32(n) -> tuple[int, int]:
    """(bytes read, bytes written) of node ``n`` with its float16 tensors at float32 width (as stored where
    it has none): R' = R · Σ_in bytes at float32 / Σ_in bytes as stored, W' likewise over its outputs."""
    if not has_float16((n,)):
        return n.bytes_read, n.bytes_written
    return rescaled(n.bytes_read, n.inputs, _as_float), rescaled(n.bytes_written, n.outputs, _as_float)


@dataclass(frozen=True)
class FloatKernel:
    """A float16 node run on the float kernel: its bytes at float32 width, and the Casts it brings
    (elements of each)."""

    bytes_read: int
    bytes_written: int
    casts: tuple[int, ...]


def _numel(ref) -> int:
    n = 1
    for d in ref.shape or ():
        n *= d if isinstance(d, int) else 0
    return n if ref.shape is not None else 0


def on_float_kernel(n, opsets: dict[str, int]) -> bool:
    """The CPU provider runs float16 node ``n`` on its float kernel (see the module docstring)."""
    refs = [r for r in (*n.inputs, *n.outputs) if r is not None]
    if n.scope or not any(r.dtype == _FLOAT16 for r in refs) or (n.op_type == "Constant" and not n.domain):
        return False
    kernels = kernel_table(CPU).get((n.domain, n.op_type), ())
    sch = schema(n.domain, n.op_type, opsets.get(n.domain, 1))
    if not kernels or sch is None:
        return False
    version = sch[0]
    in_range = [k for k in kernels if k[0] <= version <= k[1]]
    types = param_types(n.inputs, sch[1], sch[3]) + param_types(n.outputs, sch[2], sch[4])
    if not in_range or any(accepts(cons, types) is None for _lo, _hi, cons in in_range):
        return False
    as_float = [(p, F32 if t == F16 else t) for p, t in types]
    return any(accepts(cons, as_float) is None for _lo, _hi, cons in in_range)


def float_kernels(a: Costs, constants: Callable[[], set[str]], gone: set[str]) -> dict[str, FloatKernel]:
    """Node key -> :class:`FloatKernel` for every main-graph float16 node the CPU provider runs on the float
    kernel. ``constants``: the tensors known at load (initializers, Constant outputs), asked only of a graph
    with a float16 node on a float kernel; ``gone``: nodes folded at load (their outputs are constants too):
    neither needs a run-time Cast."""
    nodes = [n for n in a.main_nodes if not n.scope]
    if not has_float16(nodes):
        return {}
    opsets = dict(a.model.opsets)
    try:
        kernel_table(CPU)
    except OptionError:  # no usable onnxruntime registry here: the graph is priced as written
        return {}
    run_float = {n.key for n in nodes if n.key not in gone and on_float_kernel(n, opsets)}
    if not run_float:
        return {}
    known = constants()
    producer, consumers = links(nodes)
    outputs = {o.name for o in a.model.outputs}
    casts: dict[str, list[int]] = {k: [] for k in run_float}
    seen_in: set[str] = set()
    for n in nodes:
        if n.key not in run_float:
            continue
        for r in n.inputs:
            if r is None or r.dtype != _FLOAT16 or r.name in known or r.name in seen_in:
                continue
            p = producer.get(r.name)
            if p is not None and (p.key in run_float or p.key in gone):
                continue  # a float kernel wrote it as float, or it is folded at load
            seen_in.add(r.name)
            casts[n.key].append(_numel(r))
        for r in n.outputs:
            if r is None or r.dtype != _FLOAT16:
                continue
            users = consumers.get(r.name, [])
            if r.name in outputs or any(u.key not in run_float for u in users):
                casts[n.key].append(_numel(r))
    out = {}
    for n in nodes:
        if n.key in run_float:
            out[n.key] = FloatKernel(*at_float32(n), tuple(casts[n.key]))
    return out
