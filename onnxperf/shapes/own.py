"""onnxperf's own shape functions, looked up by (domain, op type): the ai.onnx.ml ops and the ai.onnx ops
ONNX's inference cannot follow (:mod:`onnxperf.shapes.rules`) and the com.microsoft ops
(:mod:`onnxperf.shapes.rules_ms`)."""

from __future__ import annotations

from onnxperf.shapes.rules import RULES, Out, Rule, ShapeCtx
from onnxperf.shapes.rules_ms import RULES as MS_RULES

#: every own shape function, by (domain with "ai.onnx" written "", op type)
ALL: dict[tuple[str, str], Rule] = {**RULES, **MS_RULES}


def rule_for(domain: str, op_type: str) -> Rule | None:
    return ALL.get(("" if domain == "ai.onnx" else domain, op_type))


def infer(ctx: ShapeCtx) -> list[Out] | None:
    """Output (element type, shape) pairs by our own rule, or None when there is no rule."""
    rule = rule_for(ctx.node.domain, ctx.node.op_type)
    if rule is None:
        return None
    return rule(ctx)


__all__ = ["ALL", "infer", "rule_for"]
