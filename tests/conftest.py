"""Suite-wide settings.

A cost rule that raises is a bug (issue 16): in the tests it fails the test that met it, with the
rule's traceback, instead of being recorded as a ``rule_error`` node. Tests of that recording switch
it back off (``monkeypatch.setattr(cost, "RAISE_RULE_ERRORS", False)``)."""

import pytest

from onnxperf import cost


@pytest.fixture(autouse=True)
def _rule_errors_raise(monkeypatch):
    monkeypatch.setattr(cost, "RAISE_RULE_ERRORS", True)
