"""Command line: ``onnxperf <command> ...``. Typed errors become exit codes here, and only here."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from . import __version__, output
from .commands import check, compare, hw, report, summary, sweep, validate
from .errors import OnnxPerfError, OptionError

COMMANDS = (summary, report, sweep, validate, compare, hw, check)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="onnxperf", description="Static performance analysis of ONNX models.")
    parser.add_argument("--version", action="version", version=f"onnxperf {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks for errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for mod in COMMANDS:
        mod.add_parser(sub)
    return parser


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _guard_outputs(args: argparse.Namespace) -> None:
    """Before any work: the files named on the command line are this run's inputs, and no output
    (``-o``, ``--netron``) may be one of them or a kind of file that is never written."""
    output.forget_inputs()
    named = [getattr(args, "model", None), *(getattr(args, "models", None) or ()),
             getattr(args, "budget", None), getattr(args, "hw", None)]
    for path in named:
        if isinstance(path, str) and path != "-":
            output.note_input(path)
    for option, dest in (("-o", "output"), ("--netron", "netron")):
        output.check_output(getattr(args, dest, None), option)
    out, netron = getattr(args, "output", None), getattr(args, "netron", None)
    if out and netron and out != "-" and os.path.realpath(out) == os.path.realpath(netron):
        raise OptionError(f"--netron {netron}: is also the -o file; give them two names")


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    debug = "--debug" in argv
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse already printed its message
        return 0 if exc.code in (0, None) else 2
    if not getattr(args, "command", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        _guard_outputs(args)
        return int(args.run(args))
    except OnnxPerfError as exc:
        if debug:
            raise
        print(f"onnxperf: error: {_one_line(exc)}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("onnxperf: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except MemoryError:
        if debug:
            raise
        print("onnxperf: error: out of memory", file=sys.stderr)
        return 2
