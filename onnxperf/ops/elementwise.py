"""Elementwise ops: arithmetic, comparisons, logic, unary math and activations (ai.onnx).

One body, many ops: cost = (ops per output element) × (output elements), where the
per-element figure comes from :data:`PER_ELEMENT` (binary/unary ops) or, for the variadic
ops Sum/Max/Min/Mean, from the input count. The table is the single source of truth and is
reproduced in docs/conventions.md (a test keeps the two equal).

Counting principle: each add, subtract, multiply, divide, compare, min/max, select and each
elementary function (exp, log, sqrt, erf, tanh, sin, ...) is 1 op; composite activations
cost the elementary ops of their ONNX function definition. Integer inputs make the ops
integer ops, not FLOPs.
"""

from __future__ import annotations

from collections.abc import Callable

from .registry import NodeView, OpCost, arith, register

#: ops per output element. Keep docs/conventions.md in step (tests/test_conventions_doc.py).
PER_ELEMENT: dict[str, int] = {
    # binary arithmetic
    "Add": 1, "Sub": 1, "Mul": 1, "Div": 1, "Pow": 1, "Mod": 1, "PRelu": 2,
    # comparisons, logic, bitwise (output bool or int, counted on the input type)
    "Equal": 1, "Less": 1, "LessOrEqual": 1, "Greater": 1, "GreaterOrEqual": 1,
    "And": 1, "Or": 1, "Xor": 1, "Not": 1, "BitShift": 1, "BitwiseAnd": 1, "BitwiseOr": 1,
    "BitwiseXor": 1, "BitwiseNot": 1, "IsNaN": 1, "IsInf": 1, "Where": 1,
    # unary math: one elementary op each
    "Abs": 1, "Neg": 1, "Sign": 1, "Reciprocal": 1, "Sqrt": 1, "Exp": 1, "Log": 1,
    "Floor": 1, "Ceil": 1, "Round": 1, "Erf": 1, "Sin": 1, "Cos": 1, "Tan": 1, "Asin": 1,
    "Acos": 1, "Atan": 1, "Sinh": 1, "Cosh": 1, "Asinh": 1, "Acosh": 1, "Atanh": 1, "Tanh": 1,
    # activations, by their ONNX function bodies
    "Relu": 1,              # max(x, 0)
    "LeakyRelu": 2,         # x < 0 ? alpha*x : x -> compare, multiply
    "ThresholdedRelu": 1,   # x > alpha ? x : 0 -> compare
    "Clip": 2,              # min, max
    "Sigmoid": 4,           # 1 / (1 + exp(-x)) -> neg, exp, add, div
    "HardSigmoid": 4,       # max(0, min(1, alpha*x + beta)) -> mul, add, min, max
    "HardSwish": 5,         # x * HardSigmoid(x)
    "Elu": 4,               # x < 0 ? alpha*(exp(x) - 1) : x -> compare, exp, sub, mul
    "Selu": 5,              # gamma * Elu
    "Celu": 7,              # max(0,x) + min(0, alpha*(exp(x/alpha) - 1))
    "Softplus": 3,          # log(exp(x) + 1)
    "Softsign": 3,          # x / (1 + |x|)
    "Swish": 6,             # x * sigmoid(alpha*x) -> mul, sigmoid(4), mul
    "Mish": 5,              # x * tanh(softplus(x))
    "Shrink": 3,            # two compares and a subtract/add
    "Gelu": 5,              # 0.5*x*(1 + erf(x/sqrt(2))) -> div, erf, add, mul, mul
}

#: Gelu with approximate="tanh": 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3))):
#: x^3 (2 mul), mul, add, mul, tanh, add, mul, mul.
GELU_TANH_PER_ELEMENT = 9

#: variadic ops: (ops per output element per extra input, fixed ops per output element)
VARIADIC: dict[str, tuple[int, int]] = {"Sum": (1, 0), "Max": (1, 0), "Min": (1, 0), "Mean": (1, 1)}


def _per_element_rule(per_elem: int) -> Callable[[NodeView], OpCost]:
    def rule(n: NodeView) -> OpCost:
        """ops = k × output elements, k from PER_ELEMENT; integer inputs give int ops."""
        return arith(per_elem * n.out(0).numel, n.inp(0).elem_type)

    return rule


def gelu(n: NodeView) -> OpCost:
    """Gelu: 5 ops per element exact (erf form), 9 with approximate="tanh"."""
    k = GELU_TANH_PER_ELEMENT if n.attr("approximate", "none") == "tanh" else PER_ELEMENT["Gelu"]
    return arith(k * n.out(0).numel, n.inp(0).elem_type)


def variadic(n: NodeView) -> OpCost:
    """Sum/Max/Min: (inputs − 1) ops per output element; Mean adds one divide per element."""
    per_extra, fixed = VARIADIC[n.op_type]
    k = per_extra * (len(n.present_inputs) - 1) + fixed
    return arith(k * n.out(0).numel, n.inp(0).elem_type)


for _op, _k in PER_ELEMENT.items():
    if _op == "Gelu":
        continue
    _family = "activation" if _op in {
        "Relu", "LeakyRelu", "ThresholdedRelu", "Clip", "Sigmoid", "HardSigmoid", "HardSwish",
        "Elu", "Selu", "Celu", "Softplus", "Softsign", "Swish", "Mish", "Shrink", "PRelu", "Tanh",
    } else "elementwise"
    register(_op, _per_element_rule(_k), family=_family)
register("Gelu", gelu, family="activation")
register(list(VARIADIC), variadic, family="elementwise")
