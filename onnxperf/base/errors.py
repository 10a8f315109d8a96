"""Typed errors. Every error the tool raises on purpose is an :class:`OnnxPerfError`.

The CLI maps them to exit codes in one place (:func:`onnxperf.cli.main`): a subclass names
its own ``exit_code``; anything else that escapes is a bug and gets a traceback.
"""

from __future__ import annotations


def one_line(text: object) -> str:
    """``text`` made safe for one line of a terminal or a log: control and other non-printable
    characters (newlines, ESC, NUL, bidi controls) escaped as ``\\n``, ``\\x1b``..., so a name
    taken from a model can neither break the line nor drive the terminal."""
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in str(text))


class OnnxPerfError(Exception):
    """Base class; ``exit_code`` is what the CLI returns for it.

    The message is always one printable line (see :func:`one_line`): model files are untrusted,
    and their names end up in messages."""

    exit_code = 2

    def __str__(self) -> str:
        return one_line(super().__str__())


class InputError(OnnxPerfError):
    """The model file or an option cannot be used (missing, unreadable, not ONNX, bad flag)."""


class ModelFileError(InputError):
    """The file exists but is not a readable ONNX model."""


class GraphError(InputError):
    """The graph is malformed: a cycle, a dangling input, duplicate names."""


class ExternalDataError(InputError):
    """An external-data reference is unsafe (leaves the model's folder) or malformed."""


class DimBindingError(InputError):
    """A ``--dim`` or ``--input-shape`` names something the model does not have, or is malformed."""


class OptionError(InputError):
    """A command-line option or API argument has a bad value."""


class OutputError(OnnxPerfError):
    """The output file cannot be written (disk full, permission denied, a directory in the way);
    nothing is left half-written."""


class RuleError(OnnxPerfError):
    """A cost rule raised on a node: a bug in the rule, never an unsupported op. The cost walker
    records the node as ``rule_error`` with this message (the rule, the node, the exception), counts
    it apart in the coverage, and every output shows it; with ``--debug`` (and in the test suite)
    it is raised instead, with the rule's traceback as its cause."""

    exit_code = 1

    def __init__(self, rule: str, node: str, cause: BaseException):
        self.rule, self.node, self.cause = rule, node, cause
        super().__init__(f"rule {rule} failed on node {node}: {type(cause).__name__}: {cause}")

