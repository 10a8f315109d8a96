"""The registry of cost rules, keyed by ``(domain, op_type, since_version)``.

A rule is a pure function ``NodeView -> OpCost``. It receives static shapes, dtypes and
attributes (schema defaults filled in), never tensor data, except the small constant inputs
the loader could read (``NodeView.consts``). Lookup takes the newest rule whose
``since`` is at or below the model's opset for that domain, like ``onnx.reference``.

Every op is exactly one of: counted by a rule, zero-cost by design (with a reason), or
unsupported (no entry: reported, never silently zero). One registry, one source of truth;
registering the same key twice raises.

Memory traffic: unless a rule says otherwise, bytes read are the bytes of every present input
(weights included) and bytes written the bytes of every present output. The cost walker
fills these in; a rule overrides them only where an op touches less than its whole inputs
(e.g. Gather reads only the gathered rows), and its docstring says so.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from onnxperf.base import dtypes

#: op families; the conventions (docs/conventions.md) are stated per family.
FAMILIES = (
    "conv", "matmul", "attention", "rnn", "elementwise", "activation", "reduce", "norm",
    "pool", "resize", "movement", "gather_scatter", "quant", "signal", "control_flow",
    "sequence", "random", "misc", "zero",
)


@dataclass(frozen=True)
class TensorView:
    """A tensor as a rule sees it: name, element type, static shape."""

    name: str
    elem_type: int
    shape: tuple[int, ...]
    #: element count and bytes, computed once (exact Python ints)
    numel: int = field(init=False, compare=False, repr=False)
    nbytes: int = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        n = 1
        for d in self.shape:
            n *= d
        object.__setattr__(self, "numel", n)
        object.__setattr__(self, "nbytes", dtypes.nbytes(self.elem_type, n))

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def is_float(self) -> bool:
        return dtypes.is_float(self.elem_type)


@dataclass(frozen=True)
class SubgraphCost:
    """Totals of one subgraph body (If branch, Loop or Scan body), for control-flow rules."""

    macs: int
    flops: int
    int_ops: int
    bytes_read: int
    bytes_written: int
    nodes: int
    uncosted_nodes: int  # unsupported or unknown_shape inside the body
    #: nodes of the body (nested bodies included) whose figure is an upper / a lower bound
    upper_nodes: int = 0
    lower_nodes: int = 0




class BadNode(ValueError):
    """Raised by a rule for a node it cannot cost as written: a malformed or out-of-range
    attribute, inputs that contradict each other. The node is reported ``unsupported`` with this
    message. Any other exception out of a rule is a bug in the rule (``rule_error``, see
    :class:`onnxperf.base.errors.RuleError`)."""


class AbsentInput(BadNode, KeyError):
    """A rule asked for an input or output the node does not have (or whose shape is unknown)."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""

@dataclass(frozen=True)
class NodeView:
    """Everything a rule may use about one node. Built by the cost walker, never mutated."""

    op_type: str
    domain: str
    name: str
    opset: int
    inputs: tuple[TensorView | None, ...]
    outputs: tuple[TensorView | None, ...]
    attrs: Mapping[str, Any]
    consts: Mapping[int, np.ndarray] = field(default_factory=dict)
    subgraphs: Mapping[str, SubgraphCost] = field(default_factory=dict)
    #: a Loop's trip count as shape inference worked it out (:class:`onnxperf.shapes.loops.LoopTrips`), else None
    trips: Any = None

    def attr(self, name: str, default: Any = None) -> Any:
        """The attribute's value; ``attrs`` already holds the ONNX schema's defaults (filled by the
        cost walker), so a rule passes ``default`` only where no schema gives one: com.microsoft ops,
        an attribute that older versions of the op lack, or an op newer than the oldest onnx we
        support (1.17) registers."""
        v = self.attrs.get(name)
        return default if v is None else v

    def has_input(self, i: int) -> bool:
        return i < len(self.inputs) and self.inputs[i] is not None

    def inp(self, i: int) -> TensorView:
        t = self.inputs[i] if i < len(self.inputs) else None
        if t is None:
            raise AbsentInput(f"{self.op_type} {self.name!r}: input {i} is absent")
        return t

    def has_output(self, i: int) -> bool:
        return i < len(self.outputs) and self.outputs[i] is not None

    def out(self, i: int = 0) -> TensorView:
        t = self.outputs[i] if i < len(self.outputs) else None
        if t is None:
            raise AbsentInput(f"{self.op_type} {self.name!r}: output {i} is absent or its shape unknown")
        return t

    def const(self, i: int) -> np.ndarray | None:
        return self.consts.get(i)

    @property
    def present_inputs(self) -> tuple[TensorView, ...]:
        return tuple(t for t in self.inputs if t is not None)

    @property
    def present_outputs(self) -> tuple[TensorView, ...]:
        return tuple(t for t in self.outputs if t is not None)


@dataclass(frozen=True)
class OpCost:
    """What a rule returns. MACs and FLOPs are separate fields, never one 'flops'.

    ``macs``: multiply-accumulates of matmul-like and conv work (any dtype).
    ``flops``: floating-point operations (2 per MAC plus elementwise work).
    ``int_ops``: integer operations (quantized and index arithmetic), kept apart from FLOPs.
    ``bytes_read``/``bytes_written``: None means "every input / every output" (the default).
    ``exact``: False when the figure is an estimate (data-dependent sizes, unknown trip count).
    ``bound``: for an inexact figure, which side of the truth it is on when that is known:
    ``"upper"`` (the larger If branch, a Loop's M when its cond may stop it sooner), ``"lower"`` (one
    run of a loop whose trip count is unknown, a body with nodes not costed), ``"unknown"`` (both
    kinds in one figure); empty when exact or an estimate of no known side.
    """

    macs: int = 0
    flops: int = 0
    int_ops: int = 0
    bytes_read: int | None = None
    bytes_written: int | None = None
    exact: bool = True
    note: str = ""
    bound: str = ""


#: the sides an inexact figure may be on (see :attr:`OpCost.bound`)
UPPER, LOWER, EITHER = "upper", "lower", "unknown"


def combine_bounds(*bounds: str) -> str:
    """The side of a figure made of parts on these sides: an upper part and a lower part make a figure
    with no known side (``"unknown"``); empty parts (exact) do not count."""
    sides = {b for b in bounds if b}
    if not sides:
        return ""
    return sides.pop() if len(sides) == 1 else EITHER


def arith(ops: int, elem_type: int, *, macs: int = 0, exact: bool = True, note: str = "",
          bytes_read: int | None = None, bytes_written: int | None = None) -> OpCost:
    """An OpCost whose ``ops`` arithmetic count is FLOPs for floating element types and
    integer ops otherwise."""
    if dtypes.is_float(elem_type):
        return OpCost(macs=macs, flops=ops, exact=exact, note=note,
                      bytes_read=bytes_read, bytes_written=bytes_written)
    return OpCost(macs=macs, int_ops=ops, exact=exact, note=note,
                  bytes_read=bytes_read, bytes_written=bytes_written)


Rule = Callable[[NodeView], OpCost]


@dataclass(frozen=True)
class RuleEntry:
    domain: str
    op_type: str
    since: int
    family: str
    fn: Rule | None  # None: zero-cost by design
    zero_reason: str = ""
    #: the rule can run when output shapes are unknown (data-dependent outputs such as
    #: NonZero); it must then give bytes_written itself.
    outputs_may_be_unknown: bool = False
    #: the family module that registered this entry
    module: str = ""

    @property
    def is_zero(self) -> bool:
        return self.fn is None


def _owner(entry: "RuleEntry") -> str:
    """The module that registered a rule (zero-cost declarations are owned by their caller's module)."""
    return entry.module


def _norm_domain(domain: str) -> str:
    return "" if domain in ("", "ai.onnx") else domain


class Registry:
    def __init__(self) -> None:
        self._by_op: dict[tuple[str, str], list[RuleEntry]] = {}

    def add(self, entry: RuleEntry) -> None:
        if entry.family not in FAMILIES:
            raise ValueError(f"unknown family {entry.family!r} for {entry.op_type}")
        key = (_norm_domain(entry.domain), entry.op_type)
        versions = self._by_op.setdefault(key, [])
        if any(e.since == entry.since for e in versions):
            raise ValueError(f"rule for {key[0] or 'ai.onnx'}::{entry.op_type} since {entry.since} registered twice")
        owners = {_owner(e) for e in versions}
        if owners and _owner(entry) not in owners:
            raise ValueError(f"{key[0] or 'ai.onnx'}::{entry.op_type} is registered from {sorted(owners)} "
                             f"and again from {_owner(entry)!r}: one op, one module")
        versions.append(entry)
        versions.sort(key=lambda e: e.since)

    def lookup(self, domain: str, op_type: str, opset: int | None) -> RuleEntry | None:
        """Newest rule with ``since <= opset`` (any version when the opset is unknown)."""
        versions = self._by_op.get((_norm_domain(domain), op_type))
        if not versions:
            return None
        if opset is None:
            return versions[-1]
        best = None
        for e in versions:
            if e.since <= opset:
                best = e
        return best

    def entries(self) -> Iterable[RuleEntry]:
        for versions in self._by_op.values():
            yield from versions

    def op_types(self, domain: str = "") -> set[str]:
        d = _norm_domain(domain)
        return {op for (dom, op) in self._by_op if dom == d}


REGISTRY = Registry()

MS = "com.microsoft"


def rule(op_types: str | Iterable[str], *, family: str, domain: str = "", since: int = 1,
         outputs_may_be_unknown: bool = False) -> Callable[[Rule], Rule]:
    """Decorator: register ``fn`` as the cost rule of each op type in ``op_types``."""
    names = [op_types] if isinstance(op_types, str) else list(op_types)

    def deco(fn: Rule) -> Rule:
        for op in names:
            REGISTRY.add(RuleEntry(domain, op, since, family, fn,
                                   outputs_may_be_unknown=outputs_may_be_unknown, module=fn.__module__))
        return fn

    return deco


def register(op_types: str | Iterable[str], fn: Rule, *, family: str, domain: str = "",
             since: int = 1, outputs_may_be_unknown: bool = False) -> None:
    """Non-decorator form, for table-driven families (one factory-made body, many ops)."""
    rule(op_types, family=family, domain=domain, since=since,
         outputs_may_be_unknown=outputs_may_be_unknown)(fn)


def zero_cost(op_types: str | Iterable[str], *, reason: str, domain: str = "", since: int = 1) -> None:
    """Declare ops that do no arithmetic and move no data (views, metadata, constants)."""
    names = [op_types] if isinstance(op_types, str) else list(op_types)
    # the caller's module owns the declaration; sys._getframe reads one frame, where
    # inspect.stack() read the source lines of every frame (~0.1 s over the zero-cost tables)
    module = sys._getframe(1).f_globals.get("__name__", "")
    for op in names:
        REGISTRY.add(RuleEntry(domain, op, since, "zero", None, zero_reason=reason, module=module))


def prod(xs: Iterable[int]) -> int:
    """Exact integer product (Python ints: no overflow at 2**40 elements)."""
    n = 1
    for x in xs:
        n *= int(x)
    return n


def axis_of(axis: int, rank: int) -> int:
    """``axis`` in 0..rank−1 (a negative axis counts from the back; a rank-0 tensor accepts 0).
    Raises ValueError when it is out of range, so the walker reports the node."""
    a = int(axis) + rank if int(axis) < 0 else int(axis)
    if not 0 <= a < max(rank, 1):
        raise BadNode(f"axis {axis} out of range for rank {rank}")
    return a


def scalar(v: np.ndarray | None) -> int | None:
    """The integer value of a one-element constant input (``NodeView.const(i)``), or None
    when the input is absent, not a constant, or holds more than one element."""
    if v is None or np.asarray(v).size != 1:
        return None
    return int(np.asarray(v).reshape(-1)[0])
