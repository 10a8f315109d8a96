"""Command line: ``onnxperf <command> ...``. Typed errors become exit codes here, and only here.

Start-up: of onnxperf's own modules this one imports :mod:`onnxperf.ui.output` and
:mod:`onnxperf.base.errors` only. The parser :func:`main` reads lists the commands from
:data:`COMMANDS`; a command's module (``onnxperf.cli.<name>``: its options and what it runs) is
imported when argparse reaches the command's name, so ``onnxperf --version``, ``--help`` and a
misspelt command build no subcommand's parser, and a run imports its own command and no other.

What argparse refuses is one line too (``onnxperf: error: ...``, exit 2, no usage block), with
"did you mean" for an option or a choice close to one the command has; ``--help`` is unchanged.
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


class UsageError(Exception):
    """What argparse found wrong in a command line (``message``), and the parser of the command that
    found it: :func:`main` prints it as one line, exit 2."""

    def __init__(self, message: str, parser: argparse.ArgumentParser | None = None) -> None:
        super().__init__(message)
        self.parser = parser


#: how alike a word and a suggestion must be (:func:`difflib.get_close_matches`' ratio). Above its default
#: 0.6: a letter dropped, added or changed in a word (``jsn``, ``--dims``, ``summry``, ``--repets``: 0.86 to
#: 0.93) is a typo; another number in a precision (``fp64`` / ``fp16``: 0.75, ``fp4`` / ``fp8``: 0.67,
#: ``int4`` / ``int8``: 0.75) is another precision, and suggesting it would mislead.
CLOSE = 0.8


def did_you_mean(word: str, candidates, quote: bool = True) -> str:
    """``"; did you mean 'json'?"`` when ``word`` is close to one of ``candidates``
    (:func:`difflib.get_close_matches` at :data:`CLOSE`), else ``""``."""
    import difflib  # here: only a command line with an error needs it (1 ms of every start-up otherwise)

    close = difflib.get_close_matches(word, [str(c) for c in candidates], n=1, cutoff=CLOSE)
    if not close:
        return ""
    return f"; did you mean {close[0]!r}?" if quote else f"; did you mean {close[0]}?"


class _Parser(argparse.ArgumentParser):
    """argparse's parser, whose errors are raised (:class:`UsageError`) instead of printed after the
    usage block, and whose "invalid choice" says which choice was meant when one is close. Its
    subcommands' parsers are made of the same class."""

    def error(self, message: str):
        raise UsageError(message, self)

    def _check_value(self, action: argparse.Action, value) -> None:
        if action.choices is not None and value not in action.choices:
            choices = [str(c) for c in action.choices]
            raise argparse.ArgumentError(action, f"invalid choice: {str(value)!r} (choose from "
                                         f"{', '.join(map(repr, choices))}){did_you_mean(str(value), choices)}")

    def parse_known_args(self, args=None, namespace=None):
        parsed, extras = super().parse_known_args(args, namespace)
        if not hasattr(parsed, "_parser"):  # the innermost command's parser: what an unknown option was meant for
            parsed._parser = self
        return parsed, extras


def _unrecognized(parser: argparse.ArgumentParser, extras: list[str]) -> str:
    """``unrecognized arguments: --dims batch=1; did you mean --dim?``: the first unknown option
    against the options of the command it was given to."""
    message = f"unrecognized arguments: {' '.join(extras)}"
    options = [o for a in parser._actions for o in a.option_strings]
    flags = [e.split("=", 1)[0] for e in extras if e.startswith("-") and len(e) > 1]
    hint = next((h for h in (did_you_mean(f, options, quote=False) for f in flags) if h), "")
    return message + (hint or f"; see {parser.prog} --help")


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
    parser = _Parser(prog="onnxperf", description="Static performance analysis of ONNX models.")
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
    (``-o``, ``--netron``, ``--trace``) may be one of them or a kind of file that is never written;
    nor may two outputs go to one file or stream (``--trace -`` beside the result on standard output,
    ``--trace /dev/stdout`` with standard output redirected to the ``-o`` file)."""
    output.forget_inputs()
    named = [getattr(args, "model", None), *(getattr(args, "models", None) or ()),
             getattr(args, "budget", None), getattr(args, "hw", None)]
    for path in named:
        if isinstance(path, str) and path != "-":
            output.note_input(path)
    extra = (("--netron", "netron"), ("--trace", "trace"))
    for option, dest in (("-o", "output"), *extra):
        output.check_output(getattr(args, dest, None), option)
    # the result goes to -o, else to standard output; the others only where they are given
    outputs = [("-o", getattr(args, "output", None))]
    outputs += [(opt, getattr(args, dest)) for opt, dest in extra if getattr(args, dest, None) is not None]
    stdout = output.destination(None)
    seen: list[tuple[str, str | None, tuple]] = []
    for opt, path in outputs:
        where = output.destination(path)
        if where is None:  # the null device: nothing written there is lost
            continue
        for other, path2, where2 in seen:
            if where == where2:
                raise OptionError(_same_place(opt, path, other, path2, on_stdout=where == stdout))
        seen.append((opt, path, where))


def _same_place(opt: str, path: str, other: str, path2: str | None, on_stdout: bool) -> str:
    if not on_stdout:
        return f"{opt} {path}: is also the {other} file; give them two names"
    first = "the result (no -o)" if path2 is None else f"{other} {path2}"
    return (f"{opt} {path}: {'standard output' if path == '-' else 'is standard output'}, where {first} goes too; "
            "write one of them to a file")


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
        args, extras = parser.parse_known_args(argv)
        if extras:
            raise UsageError(_unrecognized(args._parser, extras), args._parser)
    except UsageError as exc:
        print(f"onnxperf: error: {_usage_line(exc)}", file=sys.stderr)
        return 2
    except SystemExit as exc:  # --help, --version: argparse printed them
        return 0 if exc.code in (0, None) else 2
    if not getattr(args, "command", None):
        parser.print_help(sys.stderr)
        return 2
    if debug:  # a bug in a cost rule stops the run with its traceback instead of a rule_error node
        # imported here: the cost walker (and its rules) stays off the path of the commands that cost nothing
        from onnxperf.cost import walker as cost

        cost.RAISE_RULE_ERRORS = True
    output.announce_writes(True, getattr(args, "color", "never"))
    output.stop_writes_on_signals(True)
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
    except output.Stopped as exc:  # SIGTERM / SIGHUP while a file was written: its temporary file is gone
        what = f" while writing {exc.path}" if exc.path else ""
        print(_one_line(f"onnxperf: stopped by {exc.name}{what}; nothing half-written is left"), file=sys.stderr)
        return 128 + exc.signum
    except BrokenPipeError:
        return 0
    except MemoryError:
        if debug:
            raise
        print("onnxperf: error: out of memory", file=sys.stderr)
        return 2
    finally:
        output.stop_writes_on_signals(False)


def _usage_line(exc: UsageError) -> str:
    """argparse's message as one line; a missing argument also says where the usage is."""
    message = _one_line(exc)
    if exc.parser is not None and message.startswith("the following arguments are required"):
        message += f"; see {exc.parser.prog} --help"
    return message
