"""``--precision``: what if the model ran in another precision? (issue 18, point 3)

Models are deployed in fp16, bf16, int8 ... while the file is often fp32: the question is what
the figures would be in the deployment precision. A precision what-if takes an analysis and
re-types every floating-point tensor (float32, float16, bfloat16, float64: weights and
activations alike) to the precision asked for; integer and bool tensors (indices, shapes, masks)
stay as they are. Then:

* **bytes**: a node's bytes read scale by (its input tensors' bytes in the new precision) / (their
  bytes as stored), its bytes written likewise over its outputs. For rules that count whole
  tensors (almost all) this is exact; for the few that count part of a tensor (a Gather reads its
  rows, not its table) it keeps the same part;
* **weights**: parameter bytes of floating-point weights at the new width (:attr:`Totals.param_bytes`,
  by dtype); activation memory (liveness) at the new width;
* **peak**: every node whose arithmetic is floating point uses the precision's peak
  (``tf32``: the tensor-core rate for fp32 data, bytes unchanged; ``int8``: the integer peak, as a
  fully quantized deployment would); MACs and FLOPs do not change: the same arithmetic is done.

This is a what-if, not a conversion: accuracy is not modelled, nor the Quantize/Cast nodes a real
conversion inserts at the graph's edges. Every output says which precision its figures are for.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import onnx

from onnxperf.base import dtypes
from onnxperf.base.errors import OptionError
from onnxperf.cost.analysis import Costs, _by_op_type, costs
from onnxperf.cost.request import Request

_T = onnx.TensorProto
#: the floating-point types a what-if re-types
FLOAT_TYPES = frozenset({_T.FLOAT, _T.FLOAT16, _T.BFLOAT16, _T.DOUBLE})
_FLOAT_NAMES = frozenset(dtypes.name(t) for t in FLOAT_TYPES)


@dataclass(frozen=True)
class Precision:
    name: str  # the --precision value
    elem_type: int  # what floating-point tensors become
    peak_key: str  # HardwareSpec.peak_flops_per_s key for their arithmetic
    text: str  # one line for every output

    @property
    def dtype(self) -> str:
        return dtypes.name(self.elem_type)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "tensor_dtype": self.dtype, "peak": self.peak_key, "what_if": self.text}


PRECISIONS: dict[str, Precision] = {p.name: p for p in (
    Precision("fp32", _T.FLOAT, "fp32", "floating-point tensors as float32, arithmetic at the fp32 peak"),
    Precision("tf32", _T.FLOAT, "tf32", "floating-point tensors as float32, arithmetic at the tf32 (tensor-core) peak"),
    Precision("fp16", _T.FLOAT16, "fp16", "floating-point tensors as float16, arithmetic at the fp16 peak"),
    Precision("bf16", _T.BFLOAT16, "bf16", "floating-point tensors as bfloat16, arithmetic at the bf16 peak"),
    Precision("fp8", _T.FLOAT8E4M3FN, "fp8", "floating-point tensors as float8 (e4m3), arithmetic at the fp8 peak"),
    Precision("int8", _T.INT8, "int8", "floating-point tensors as int8 (fully quantized), arithmetic at the int8 peak"),
)}


def get(name: str) -> Precision:
    p = PRECISIONS.get(str(name).lower())
    if p is None:
        raise OptionError(f"--precision {name!r}: choose one of {', '.join(PRECISIONS)}")
    return p


class _Retyped:
    """A tensor record seen in another element type (what liveness and the LLM figures read)."""

    __slots__ = ("name", "elem_type", "shape", "is_static")

    def __init__(self, ti, elem_type: int):
        self.name, self.elem_type, self.shape, self.is_static = ti.name, elem_type, ti.shape, ti.is_static

    @property
    def numel(self) -> int:
        n = 1
        for d in self.shape or ():
            n *= d
        return n

    @property
    def nbytes(self) -> int:
        return dtypes.nbytes(self.elem_type, self.numel)


def _ref_bytes(ref, dtype_name: str | None = None) -> int | None:
    if ref is None or ref.shape is None or not all(isinstance(d, int) for d in ref.shape):
        return None
    bits = _BITS_BY_NAME.get(dtype_name or ref.dtype)
    if bits is None:
        return None
    n = 1
    for d in ref.shape:
        n *= d
    return (n * bits + 7) // 8


_BITS_BY_NAME = {dtypes.name(t): dtypes.bits(t) for t in onnx.TensorProto.DataType.values()
                 if t and dtypes.bits(t) is not None}


def _scaled(total: int, refs, new_dtype: str) -> int:
    """``total`` scaled by the refs' bytes in ``new_dtype`` (floats only) over their bytes as stored."""
    before = after = 0
    for r in refs:
        b = _ref_bytes(r)
        if b is None:
            continue
        before += b
        after += _ref_bytes(r, new_dtype) if r.dtype in _FLOAT_NAMES else b
    if before == 0 or before == after:
        return total
    return (total * after + before // 2) // before  # rounded, exact integers


def what_if(a: Costs, precision: Precision | str) -> Costs:
    """``a`` with every floating-point tensor in ``precision`` (see the module docstring)."""
    p = get(precision) if isinstance(precision, str) else precision
    new = p.dtype
    cache: dict[int, object] = {}

    def retype(refs):
        out = []
        for r in refs:
            if r is not None and r.dtype in _FLOAT_NAMES:
                hit = cache.get(id(r))
                if hit is None:
                    hit = cache[id(r)] = type(r)(r.name, new, r.shape)
                r = hit
            out.append(r)
        return tuple(out)

    nodes = []
    for n in a.nodes:
        ins, outs = retype(n.inputs), retype(n.outputs)
        nodes.append(_node(n, ins, outs, _scaled(n.bytes_read, n.inputs, new), _scaled(n.bytes_written, n.outputs, new)))
    nodes_t = tuple(nodes)
    main = [n for n in nodes_t if not n.scope]
    t = a.totals
    by_bytes: dict[str, int] = {}
    by_count: dict[str, int] = {}
    for dt, count in t.params_by_dtype:
        key = new if dt in _FLOAT_NAMES else dt
        by_count[key] = by_count.get(key, 0) + count
        by_bytes[key] = by_bytes.get(key, 0) + (
            (count * _BITS_BY_NAME[new] + 7) // 8 if dt in _FLOAT_NAMES else dict(t.param_bytes_by_dtype)[dt])
    totals = replace(t, bytes_read=sum(n.bytes_read for n in main), bytes_written=sum(n.bytes_written for n in main),
                     param_bytes=sum(by_bytes.values()), param_bytes_by_dtype=tuple(sorted(by_bytes.items())),
                     params_by_dtype=tuple(sorted(by_count.items())))
    tensors = None
    if a.tensors is not None:
        tensors = {k: (_Retyped(ti, p.elem_type) if ti.elem_type in FLOAT_TYPES else ti) for k, ti in a.tensors.items()}
    model = replace(a.model, inputs=retype(a.model.inputs), outputs=retype(a.model.outputs))
    return replace(a, model=model, nodes=nodes_t, totals=totals, by_op_type=_by_op_type(nodes_t), tensors=tensors)


def priced(request: Request, empty_dims: bool = False) -> Costs:
    """The costs ``request`` names (:func:`onnxperf.cost.analysis.costs`), at its precision what-if when it
    asks for one (:func:`what_if`)."""
    a = costs(request, empty_dims)
    return what_if(a, get(request.precision)) if request.precision is not None else a


def _node(n, ins, outs, bytes_read: int, bytes_written: int):
    """A copy of NodeCost ``n`` with new tensor records and byte counts (every other field kept)."""
    return type(n)(n.id, n.scope, n.name, n.op_type, n.domain, n.family, n.rule_since, n.status, ins, outs,
                   n.macs, n.flops, n.int_ops, bytes_read, bytes_written, n.params, n.exact, n.blocking, n.note, n.bound)
