"""Command line: ``onnxperf <command> ...``. Typed errors become exit codes here, and only here.

Start-up: of onnxperf's own modules this one imports :mod:`onnxperf.ui.output` and
:mod:`onnxperf.base.errors` only. The parser :func:`main` reads lists the commands from
:data:`COMMANDS`; a command's module (``onnxperf.cli.<name>``: its options and what it runs) is
imported when argparse reaches the command's name, so ``onnxperf --version``, ``--help`` and a
misspelt command build no subcommand's parser, and a run imports its own command and no other.
"""

from __future__ import annotations

import argparse
import atexit
import gc
import os
import sys
from collections.abc import Sequence
from importlib import import_module

from onnxperf import __version__
from onnxperf.ui import output
from onnxperf.base.errors import OnnxPerfError, OptionError

#: the subcommands, in help order, each with the line ``onnxperf --help`` prints for it: each is the
#: module ``onnxperf.cli.<name>`` (``add_parser`` and ``run``), imported only when it is needed
COMMANDS = {
    "summary": "shapes, MACs, FLOPs, params and memory traffic of a model",
    "report": "one self-contained HTML report (or its JSON / Markdown) of a model",
    "sweep": "costs, memory and predicted latency over values of a dim, with formulas",
    "validate": "run the model in onnxruntime; measured vs predicted per node",
    "compare": "compare exports of one network (e.g. PyTorch vs TensorFlow): aligned and explained",
    "hw": "hardware presets and specs; measure this machine",
    "check": "check models against a budget and lints (for CI)",
    "completion": "print a shell completion script (bash, zsh or fish)",
}


def command_module(name: str):
    return import_module(f"{__name__}.{name}")


class _Commands(argparse._SubParsersAction):
    """The subcommands: listed (name and help) from :data:`COMMANDS`, each one's parser made by its
    module's ``add_parser`` when argparse reaches its name (:meth:`make`), not before."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        for name, help in COMMANDS.items():
            self._choices_actions.append(self._ChoicesPseudoAction(name, (), help))
            self._name_parser_map[name] = None  # listed, not made

    def make(self, name: str) -> None:
        """The parser of command ``name``, made from its module (once)."""
        if self._name_parser_map.get(name, False) is None:
            made = argparse._SubParsersAction(option_strings=[], prog=self._prog_prefix,
                                              parser_class=self._parser_class)
            command_module(name).add_parser(made)
            self._name_parser_map[name] = made.choices[name]

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        self.make(values[0])
        super().__call__(parser, namespace, values, option_string)


def build_parser(lazy: bool = False) -> argparse.ArgumentParser:
    """The parser of ``onnxperf``: every subcommand's parser made now (what a completion script or a
    check of the options walks), or with ``lazy`` each made when argparse reaches its name."""
    parser = argparse.ArgumentParser(prog="onnxperf", description="Static performance analysis of ONNX models.")
    parser.add_argument("--version", action="version", version=f"onnxperf {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks for errors")
    sub = parser.add_subparsers(action=_Commands, dest="command", metavar="COMMAND")
    if not lazy:
        for name in COMMANDS:
            sub.make(name)
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
    extra = (("--netron", "netron"), ("--trace", "trace"))
    for option, dest in (("-o", "output"), *extra):
        output.check_output(getattr(args, dest, None), option)
    named_outputs = [(opt, getattr(args, dest, None)) for opt, dest in (("-o", "output"), *extra)]
    named_outputs = [(opt, path) for opt, path in named_outputs if path and path != "-"]
    for i, (opt, path) in enumerate(named_outputs):
        for other, path2 in named_outputs[:i]:
            if os.path.realpath(path) == os.path.realpath(path2):
                raise OptionError(f"{opt} {path}: is also the {other} file; give them two names")


def console() -> int:
    """The ``onnxperf`` command: :func:`main` in a process whose cyclic garbage collector is off.

    A run lives seconds and makes few reference cycles; the collector would instead scan every
    object the analysis holds, again and again as they are made (~40 ms a collection at the end of
    a 6,000-node Swin-T). Reference counting still frees everything acyclic."""
    gc.disable()
    rc = main()
    _exit_now(rc)
    return rc  # not reached


def _exit_now(rc: int) -> None:
    """End the process without the interpreter's teardown, once everything is written.

    Teardown frees every object the analysis made, one by one, and unloads every module: ~40 ms
    after a 6,000-node Swin (8% of the run), seconds after a million nodes, for nothing: the
    output is complete. Exit handlers still run (libraries' ``atexit``, logging's flush), and the
    standard streams are flushed first; a pipe closed early (``| head``) ends quietly, as
    :func:`main` treats it."""
    try:
        run_exitfuncs = getattr(atexit, "_run_exitfuncs", None)
        if run_exitfuncs is not None:
            run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except BrokenPipeError:
        pass
    except OSError as exc:  # stdout on a full disk: say so, as a failed write says it
        try:
            print(f"onnxperf: error: cannot write the output: {exc.strerror or exc}", file=sys.stderr)
            sys.stderr.flush()
        except OSError:
            pass
        rc = rc or 2
    os._exit(rc)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(lazy=True)
    debug = "--debug" in argv
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse already printed its message
        return 0 if exc.code in (0, None) else 2
    if not getattr(args, "command", None):
        parser.print_help(sys.stderr)
        return 2
    if debug:  # a bug in a cost rule stops the run with its traceback instead of a rule_error node
        # imported here: the cost walker (and its rules) stays off the path of the commands that cost nothing
        from onnxperf.cost import walker as cost

        cost.RAISE_RULE_ERRORS = True
    output.announce_writes(True, getattr(args, "color", "never"))
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
