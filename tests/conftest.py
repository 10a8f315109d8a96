"""Suite-wide settings.

A cost rule that raises is a bug (issue 16): in the tests it fails the test that met it, with the
rule's traceback, instead of being recorded as a ``rule_error`` node. Tests of that recording switch
it back off (``monkeypatch.setattr(cost, "RAISE_RULE_ERRORS", False)``).

``cli.console`` ends its process with ``os._exit`` (no teardown): called in the test process it
would end pytest itself, with the command's exit code (0: a green run that never finished). Here it
raises ``SystemExit`` instead, as a normal exit would; subprocess tests run the real thing."""

import pytest

from onnxperf import cli
from onnxperf.cost import walker as cost


def _exit(rc: int) -> None:
    raise SystemExit(rc)


@pytest.fixture(autouse=True)
def _console_exits_normally(monkeypatch):
    monkeypatch.setattr(cli, "_exit_now", _exit)


@pytest.fixture(autouse=True)
def _rule_errors_raise(monkeypatch):
    monkeypatch.setattr(cost, "RAISE_RULE_ERRORS", True)


def pytest_report_header(config):
    """The versions the shapes are checked against (tests/test_onnx_node_cases.py runs onnx's own node
    test cases; the fast shape functions are compared with the installed onnx's inference)."""
    import onnx
    import onnxruntime

    return f"onnx {onnx.__version__}, onnxruntime {onnxruntime.__version__}"
