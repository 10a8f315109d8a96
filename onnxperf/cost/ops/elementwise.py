"""Elementwise ops: arithmetic, comparisons, logic, unary math and activations (ai.onnx).

One body, many ops: cost = (ops per output element) × (output elements), where the
per-element figure comes from :data:`PER_ELEMENT` (ops whose cost is a constant per element)
or, for the variadic ops Sum/Max/Min/Mean, from the input count. Gelu, Swish and Clip (from
opset 11) cost what their attributes or optional inputs say, and have rules of their own.
The table is the single source of truth; docs/rules.md reproduces it.

Counting principle: each add, subtract, multiply, divide, compare, min/max, select and each
elementary function (exp, log, sqrt, erf, tanh, sin, ...) is 1 op; composite activations
cost the elementary ops of their ONNX function definition. The ops are integer ops, not
FLOPs, when the data is integer: the data is input 0, except for Where (input 0 is the bool
condition), whose data type is its output's (:data:`ROUTED_BY_OUTPUT`). Comparisons and
IsNaN/IsInf output bool and are counted on their inputs' type.
"""

from __future__ import annotations

from collections.abc import Callable

from onnxperf.cost.ops.registry import NodeView, OpCost, arith, register, rule

#: ops per output element. docs/rules.md reproduces it (tests/test_docs.py).
PER_ELEMENT: dict[str, int] = {
    # binary arithmetic
    "Add": 1, "Sub": 1, "Mul": 1, "Div": 1, "Pow": 1, "Mod": 1, "PRelu": 2,
    # comparisons, logic, bitwise (output bool or int, counted on the input type)
    "Equal": 1, "Less": 1, "LessOrEqual": 1, "Greater": 1, "GreaterOrEqual": 1,
    "And": 1, "Or": 1, "Xor": 1, "Not": 1, "BitShift": 1, "BitwiseAnd": 1, "BitwiseOr": 1,
    "BitwiseXor": 1, "BitwiseNot": 1, "IsNaN": 1, "IsInf": 1,
    # a select, counted on the type of the data it selects (its output's)
    "Where": 1,
    # unary math: one elementary op each
    "Abs": 1, "Neg": 1, "Sign": 1, "Reciprocal": 1, "Sqrt": 1, "Exp": 1, "Log": 1,
    "Floor": 1, "Ceil": 1, "Round": 1, "Erf": 1, "Sin": 1, "Cos": 1, "Tan": 1, "Asin": 1,
    "Acos": 1, "Atan": 1, "Sinh": 1, "Cosh": 1, "Asinh": 1, "Acosh": 1, "Atanh": 1, "Tanh": 1,
    # activations, by their ONNX function bodies
    "Relu": 1,              # max(x, 0)
    "LeakyRelu": 2,         # x < 0 ? alpha*x : x -> compare, multiply
    "ThresholdedRelu": 1,   # x > alpha ? x : 0 -> compare
    "Clip": 2,              # min, max: both bounds (attributes with defaults before opset 11)
    "Sigmoid": 4,           # 1 / (1 + exp(-x)) -> neg, exp, add, div
    "HardSigmoid": 4,       # max(0, min(1, alpha*x + beta)) -> mul, add, min, max
    "HardSwish": 5,         # x * HardSigmoid(x)
    "Elu": 4,               # x < 0 ? alpha*(exp(x) - 1) : x -> compare, exp, sub, mul
    "Selu": 5,              # gamma * Elu
    "Celu": 7,              # max(0,x) + min(0, alpha*(exp(x/alpha) - 1))
    "Softplus": 3,          # log(exp(x) + 1)
    "Softsign": 3,          # x / (1 + |x|)
    "Mish": 5,              # x * tanh(softplus(x))
    "Shrink": 3,            # two compares and a subtract/add
}

#: ops of PER_ELEMENT in family "activation" (the others are "elementwise").
ACTIVATION_OPS: frozenset[str] = frozenset({
    "Relu", "LeakyRelu", "ThresholdedRelu", "Clip", "Sigmoid", "HardSigmoid", "HardSwish",
    "Elu", "Selu", "Celu", "Softplus", "Softsign", "Mish", "Shrink", "PRelu", "Tanh",
})

#: ops of PER_ELEMENT counted on their output's element type (the data), not input 0's.
ROUTED_BY_OUTPUT: frozenset[str] = frozenset({"Where"})

#: Gelu, 0.5*x*(1 + erf(x/sqrt(2))): div, erf, add, mul, mul.
GELU_PER_ELEMENT = 5
#: Gelu with approximate="tanh": 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3))):
#: x^3 (2 mul), mul, add, mul, tanh, add, mul, mul.
GELU_TANH_PER_ELEMENT = 9

#: SiLU = x·sigmoid(x): Sigmoid and a multiply. The one definition (attention and
#: com.microsoft rules import it).
SILU_PER_ELEMENT = PER_ELEMENT["Sigmoid"] + PER_ELEMENT["Mul"]

#: variadic ops: (ops per output element per extra input, fixed ops per output element)
VARIADIC: dict[str, tuple[int, int]] = {"Sum": (1, 0), "Max": (1, 0), "Min": (1, 0), "Mean": (1, 1)}


def swish_per_element(alpha: float) -> int:
    """Ops per element of Swish, x·sigmoid(alpha·x): SiLU's, plus the multiply by alpha
    unless alpha is 1."""
    return SILU_PER_ELEMENT + (PER_ELEMENT["Mul"] if float(alpha) != 1.0 else 0)


def _per_element_rule(per_elem: int, by_output: bool) -> Callable[[NodeView], OpCost]:
    def rule(n: NodeView) -> OpCost:
        """ops = k × output elements, k from PER_ELEMENT; integer data gives int ops (the data
        is input 0, or the output for the ops of ROUTED_BY_OUTPUT)."""
        data = n.out(0) if by_output else n.inp(0)
        return arith(per_elem * n.out(0).numel, data.elem_type)

    return rule


@rule("Gelu", family="activation")
def gelu(n: NodeView) -> OpCost:
    """Gelu: 5 ops per element exact (erf form), 9 with approximate="tanh"."""
    k = GELU_TANH_PER_ELEMENT if n.attr("approximate", "none") == "tanh" else GELU_PER_ELEMENT
    return arith(k * n.out(0).numel, n.inp(0).elem_type)


@rule("Swish", family="activation")
def swish(n: NodeView) -> OpCost:
    """Swish, x·sigmoid(alpha·x): 5 ops per element (SiLU: Sigmoid 4 and a multiply) when
    alpha = 1, the default; 6 otherwise (the multiply by alpha)."""
    return arith(swish_per_element(n.attr("alpha", 1.0)) * n.out(0).numel, n.inp(0).elem_type)


@rule("Clip", family="activation", since=11)
def clip_11(n: NodeView) -> OpCost:
    """Clip from opset 11, bounds as optional inputs: 1 op (max, min) per element per bound
    given; none given is a copy (0 ops)."""
    bounds = int(n.has_input(1)) + int(n.has_input(2))
    return arith(bounds * n.out(0).numel, n.inp(0).elem_type)


def _variadic_rule(per_extra: int, fixed: int) -> Callable[[NodeView], OpCost]:
    def variadic(n: NodeView) -> OpCost:
        """Sum/Max/Min: (inputs − 1) ops per output element; Mean adds one divide per element."""
        k = per_extra * (len(n.present_inputs) - 1) + fixed
        return arith(k * n.out(0).numel, n.inp(0).elem_type)

    return variadic


for _op, _k in PER_ELEMENT.items():
    register(_op, _per_element_rule(_k, _op in ROUTED_BY_OUTPUT),
             family="activation" if _op in ACTIVATION_OPS else "elementwise")
for _op, (_extra, _fixed) in VARIADIC.items():
    register(_op, _variadic_rule(_extra, _fixed), family="elementwise")
