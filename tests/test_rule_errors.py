"""A cost rule that raises is a bug, not an unsupported op (issue 16, point 3).

The walker records such a node as ``rule_error`` with a :class:`~onnxperf.base.errors.RuleError` message
that names the rule and the node; coverage counts it apart, the totals are partial, and every
output says so. A rule's deliberate refusal of a malformed node (:class:`BadNode`) stays
``unsupported``. In the test suite (tests/conftest.py) and with ``--debug`` the error is raised
instead: these tests switch that off where they check the recording."""

from __future__ import annotations

import dataclasses
import json

import pytest

import onnxperf
from onnxperf import cli
from onnxperf.cost import walker as cost
from onnxperf.base.errors import RuleError
from onnxperf.cost.ops import REGISTRY
from onnxperf.cost.ops.registry import BadNode

from .util import model, vi


def _relu_chain():
    from onnx import helper

    nodes = [helper.make_node("Relu", ["x"], ["a"], name="first"), helper.make_node("Relu", ["a"], ["b"], name="second"),
             helper.make_node("Sigmoid", ["b"], ["y"], name="third")]
    return model(nodes, [vi("x", [2, 8])], [vi("y", [2, 8])])


def _broken(monkeypatch, exc: BaseException):
    """Relu's rule replaced by one that raises ``exc``."""
    lookup = REGISTRY.lookup

    def boom(view):
        raise exc

    def patched(domain, op_type, opset):
        e = lookup(domain, op_type, opset)
        return dataclasses.replace(e, fn=boom) if e is not None and op_type == "Relu" else e

    monkeypatch.setattr(REGISTRY, "lookup", patched)
    monkeypatch.setattr(cost, "RAISE_RULE_ERRORS", False)


def test_a_rule_that_raises_is_a_rule_error_naming_the_rule_and_the_node(monkeypatch):
    _broken(monkeypatch, TypeError("unsupported operand type(s)"))
    a = onnxperf.analyze(_relu_chain())
    first, second, third = a.nodes
    assert first.status == second.status == cost.RULE_ERROR
    assert "test_rule_errors" in first.note and "boom" in first.note  # the rule
    assert "'first'" in first.note and "'second'" in second.note  # the node (not memoized across nodes)
    assert "TypeError: unsupported operand type(s)" in first.note
    assert third.status == cost.COUNTED  # the others are still costed
    c = a.coverage
    assert (c.rule_errors, c.unsupported, c.unknown_shape) == (2, 0, 0)
    assert dict(c.rule_error_op_types) == {"Relu": 2}
    assert not c.complete and c.flops_exact_share is None
    assert not a.totals.complete and dict(a.totals.uncosted) == {"Relu": 2}
    assert dict(a.totals.uncosted_by_status) == {"rule_error": (("Relu", 2),)}
    assert a.totals.flops == third.flops  # a lower bound: only what was costed


def test_every_output_shows_the_rule_error(monkeypatch, tmp_path, capsys):
    _broken(monkeypatch, ZeroDivisionError("division by zero"))
    path = tmp_path / "m.onnx"
    import onnx

    onnx.save(_relu_chain(), path)
    assert cli.main(["summary", str(path), "--format", "json", "-o", str(tmp_path / "s.json")]) == 0
    d = json.loads((tmp_path / "s.json").read_text())
    assert d["coverage"]["rule_errors"] == 2 and d["totals"]["complete"] is False
    assert [n["status"] for n in d["nodes"]] == ["rule_error", "rule_error", "counted"]
    assert cli.main(["summary", str(path)]) == 0
    text = capsys.readouterr().out
    assert "2 where a cost rule failed (Relu ×2)" in text
    assert "A cost rule failed on 2 nodes" in text and "(partial)" in text
    assert cli.main(["summary", str(path), "--format", "md"]) == 0
    assert "A cost rule failed on 2 nodes" in capsys.readouterr().out
    assert cli.main(["summary", str(path), "--strict"]) == 1  # partial totals
    capsys.readouterr()
    assert cli.main(["report", str(path), "-o", str(tmp_path / "r.html"), "--no-progress"]) == 0
    html = (tmp_path / "r.html").read_text()
    assert "A cost rule failed on 2 nodes" in html and "2 rule error" in html
    assert cli.main(["check", str(path), "--format", "json", "-o", str(tmp_path / "c.json")]) == 1
    found = json.loads((tmp_path / "c.json").read_text())
    assert "OP013" in json.dumps(found)


def test_debug_and_the_test_suite_raise_it_with_the_cause(monkeypatch):
    _broken(monkeypatch, KeyError("oops"))
    monkeypatch.setattr(cost, "RAISE_RULE_ERRORS", True)
    with pytest.raises(RuleError) as info:
        onnxperf.analyze(_relu_chain())
    assert info.value.node.startswith("0 Relu 'first'") and isinstance(info.value.cause, KeyError)
    assert "test_rule_errors" in info.value.rule


def test_a_rule_refusing_a_malformed_node_is_unsupported_not_an_error(monkeypatch):
    _broken(monkeypatch, BadNode("alpha must be positive"))
    a = onnxperf.analyze(_relu_chain())
    assert a.nodes[0].status == cost.UNSUPPORTED
    assert a.nodes[0].note == "rule could not cost this node: alpha must be positive"
    assert a.coverage.rule_errors == 0 and a.coverage.unsupported == 2
