"""Options shared by the subcommands: model bindings, output format and file.

Light: every command's parser reads it (``hw`` too), so it imports no more than the stdlib,
onnxperf.ui, onnxperf.base and the names of the conventions; what reads an option into the
analysis's own types is :mod:`onnxperf.cli.request`."""

from __future__ import annotations

import argparse
import os
import sys

from onnxperf.cost.convention_names import CONVENTIONS
from onnxperf.predict.kv_names import EXPORTED, KV_PRECISIONS, KV_RUNTIMES
from onnxperf.ui.progress import Progress
from onnxperf.base.errors import OptionError, one_line


#: -o FILE's suffix -> the format it implies, where the command has that format
SUFFIX_FORMATS = {".json": "json", ".md": "md", ".csv": "csv", ".html": "html", ".htm": "html", ".toml": "toml",
                  ".xml": "junit", ".sarif": "sarif", ".txt": "text"}

HW_HELP = ("hardware preset id (see `onnxperf hw list`) or spec file (`onnxperf hw probe|calibrate -o "
           "FILE.toml`); ID:llama.cpp or ID:mlperf for a GPU under that runtime's kernels (llama.cpp, NVIDIA's MLPerf "
           "harness), ID:plain for the plain roofline")


def add_output(p: argparse.ArgumentParser, formats: tuple[str, ...], default: str | None = None) -> None:
    """``--format`` (with ``--json`` / ``--md`` shorthands where the command has them), ``-o FILE``
    and ``--color``. The format defaults to what -o FILE's suffix names, else ``default`` (the
    first format)."""
    default = default or formats[0]
    by_suffix = sorted({s for s, f in SUFFIX_FORMATS.items() if f in formats and f != default})
    tail = f"; default: from -o FILE's suffix ({', '.join(by_suffix)}), else {default}" if by_suffix else \
        f"; default: {default}"
    p.add_argument("--format", choices=formats, default=None, help="output format" + tail)
    for short in ("json", "md"):
        if short in formats:
            p.add_argument(f"--{short}", dest="format", action="store_const", const=short,
                           help=f"same as --format {short}")
    p.add_argument("-o", "--output", metavar="FILE", default=None,
                   help="write to FILE (atomically; never over an input) instead of standard output; '-' is "
                        "standard output")
    p.add_argument("--color", "--colour", choices=("auto", "always", "never"), default="auto",
                   help="colour text output: auto (on a terminal, unless NO_COLOR is set), always, never "
                        "(default: auto)")
    p.set_defaults(_formats=formats, _default_format=default)


def output_format(args: argparse.Namespace) -> str:
    """--format as given, else the format -o FILE's suffix names (when the command has it), else
    the command's default."""
    fmt = getattr(args, "format", None)
    if fmt:
        return fmt
    formats = getattr(args, "_formats", ())
    out = getattr(args, "output", None)
    if out and out != "-":
        suffix = os.path.splitext(str(out))[1].lower()
        if SUFFIX_FORMATS.get(suffix) in formats:
            return SUFFIX_FORMATS[suffix]
    return getattr(args, "_default_format", None) or (formats[0] if formats else "text")


def add_output_with_toml(p: argparse.ArgumentParser) -> None:
    """--format text|json|toml and -o (the format follows -o FILE's suffix: .toml, .json)."""
    add_output(p, ("text", "json", "toml"))


def format_with_toml(args: argparse.Namespace) -> str:
    return output_format(args)


def add_model(p: argparse.ArgumentParser, many: bool = False, what: str = "") -> None:
    """The model positional: one ``model``, or ``models`` (one or more) when ``many``."""
    if many:
        p.add_argument("models", nargs="+", metavar="MODEL", help=what or "one or more .onnx files")
    else:
        p.add_argument("model", metavar="MODEL", help=what or "path to an .onnx file (external data beside it)")


def add_trace(p: argparse.ArgumentParser) -> None:
    p.add_argument("--trace", metavar="FILE", default=None,
                   help="also write the predicted per-node schedule (with validation, the measured one beside "
                        "it) as Chrome trace-event JSON: open it in ui.perfetto.dev or chrome://tracing (needs --hw)")


def add_hw(p: argparse.ArgumentParser, required: bool = False,
           what: str = "adds the roofline: predicted time per node, latency and bottlenecks") -> None:
    p.add_argument("--hw", metavar="NAME|SPEC.toml", default=None, required=required, help=f"{HW_HELP}: {what}")


def add_memory(p: argparse.ArgumentParser, default: str | None = None, what: str | None = None,
               memory_dim: bool = True) -> None:
    """``--memory SIZE``: the memory budget (device memory); ``--memory-dim NAME``: the dim to grow."""
    p.add_argument("--memory", metavar="SIZE", default=default,
                   help=(what or "memory budget (e.g. 8GiB): report the largest --memory-dim value whose weights + "
                         "activation peak fit") + (f" (default: {default})" if default else ""))
    if memory_dim:
        p.add_argument("--memory-dim", metavar="NAME", default="batch",
                       help="the dim --memory grows (default: batch)")


def add_provider(p: argparse.ArgumentParser, default: str | None, what: str) -> None:
    """``--provider NAME``: the onnxruntime execution provider (``--ep`` is the same option)."""
    p.add_argument("--provider", "--ep", dest="provider", metavar="NAME", default=default,
                   help=f"onnxruntime execution provider, e.g. CUDAExecutionProvider: {what}"
                        + (f" (default: {default})" if default else ""))


def add_progress(p: argparse.ArgumentParser, lines: bool = False) -> None:
    """``--no-progress``; ``lines``: the command reports each of its steps as a line instead."""
    p.add_argument("--no-progress", action="store_true",
                   help="no progress on standard error (default: " + (
                       "a line per step, with the time left" if lines else
                       "a bar on a terminal, a line every 10 s elsewhere once a step has taken 2 s") + ")")


def progress(args: argparse.Namespace, stages: list[str], threaded: bool = True):
    """The :class:`onnxperf.ui.progress.Progress` of this run (silent with ``--no-progress``;
    ``threaded=False`` for a command that forks worker processes)."""
    return Progress(stages, enabled=not getattr(args, "no_progress", False), threaded=threaded)


DIM_HELP = ("bind a symbolic input dim, e.g. --dim batch=8 (repeatable); a dim the model lacks is left out with "
            "a note; an unbound batch dim is set to 1 with a note")
INPUT_SHAPE_HELP = ("set a whole input shape, e.g. --input-shape input=1x3x224x224 (repeatable); a dim may be a "
                    "name that --dim binds: input=batchx3x224x224")


def add_bindings(p: argparse.ArgumentParser, dim_help: str = DIM_HELP, dim_metavar: str = "NAME=VALUE",
                 convention: bool = True, many: bool = False) -> None:
    """``--dim``, ``--input-shape`` and (``convention``) ``--convention``: what the model is
    analyzed at. A command whose figures are times (``validate``) has no ``--convention``: the
    roofline counts every FLOP, whatever convention a table is printed in. ``many``: the command
    reads several models, and an input shape applies to each one that has that input."""
    p.add_argument("--dim", action="append", default=[], metavar=dim_metavar, help=dim_help)
    p.add_argument("--input-shape", action="append", default=[], metavar="INPUT=SHAPE",
                   help=INPUT_SHAPE_HELP + ("; applied to each model that has an input of that name" if many else ""))
    if not convention:
        return
    p.add_argument("--convention", choices=CONVENTIONS, default="default",
                   help="how MACs/FLOPs are counted: default (onnxperf), torch (torch.utils.flop_counter), "
                        "fvcore (fvcore FlopCountAnalysis), tf (the TF profiler's float_ops); see docs/conventions.md")


def parse_dims(items: list[str]) -> dict[str, int]:
    dims: dict[str, int] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise OptionError(f"--dim {item!r}: expected NAME=VALUE, e.g. batch=8")
        try:
            v = int(value)
        except ValueError:
            raise OptionError(f"--dim {item!r}: {value!r} is not an integer") from None
        if v <= 0:
            raise OptionError(f"--dim {item!r}: dim {name!r} must be a positive integer (got {v})")
        dims[name] = v
    return dims


def add_strict(p: argparse.ArgumentParser, what: str = "any figure") -> None:
    p.add_argument("--strict", action="store_true",
                   help=f"exit 1 when {what} is partial (a node not costed, a tensor of unknown size); "
                        "the output is written all the same")


def strict_exit(strict: bool, reasons: list[str]) -> int:
    """1 (with one line on stderr saying why) when ``--strict`` is given and some figure is partial."""
    if not strict or not reasons:
        return 0
    print(one_line("onnxperf: --strict: results are partial: " + "; ".join(reasons)), file=sys.stderr)
    return 1


def add_llm(p: argparse.ArgumentParser) -> None:
    """Options of the decoder-LLM section (KV cache, prefill and decode): see onnxperf.insights.llm."""
    g = p.add_argument_group("decoder LLMs (a decode step with a KV cache)")
    g.add_argument("--llm", action="store_true",
                   help="compute the deployment figures: KV-cache bytes, memory, prefill and decode speed "
                        "(with --hw), the context and batch that fit --memory; an error if the graph is not a "
                        "decoder step")
    g.add_argument("--context", type=_positive, metavar="N", default=None,
                   help="tokens in the KV cache after a decode step (implies --llm; default: the bound past + new, "
                        "else 2048)")
    g.add_argument("--prompt", type=_positive, metavar="N", default=None,
                   help="prompt length for prefill and time to first token (implies --llm; default: 512, at most "
                        "the context)")
    g.add_argument("--kv-dim", action="append", default=[], metavar="ROLE=DIM",
                   help="name a dim where the graph is ambiguous: batch, past, new (or a number) or total "
                        "(bound to past + new); repeatable")
    g.add_argument("--kv-cache", action="append", default=[], metavar="NAME",
                   help="the KV-cache inputs, by name or shell pattern ('past_*'); repeatable")
    g.add_argument("--kv-precision", choices=KV_PRECISIONS, default=None,
                   help="the KV cache in a precision of its own (an fp8 or int8 cache beside fp16 weights: "
                        "--precision fp16 --kv-precision fp8); implies --llm")
    g.add_argument("--devices", type=_positive, metavar="N", default=1,
                   help="tensor parallel over N devices (Megatron layout: heads and MLP split, the residual "
                        "replicated, two all-reduces per layer over the spec's interconnect): one device's memory "
                        "and the step's time with the all-reduces; with a capacity, the fewest devices that fit; "
                        "implies --llm")
    g.add_argument("--kv-runtime", choices=KV_RUNTIMES, default=EXPORTED,
                   help="how the runtime keeps the KV cache: 'exported' (default: as the graph moves it, the past "
                        "concatenated with the new token every step, as onnxruntime runs the file) or 'in-place' "
                        "(serving runtimes: vLLM, TensorRT-LLM, onnxruntime-genai with a shared buffer: the cache "
                        "read once, the new token written); implies --llm")


def _positive(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if v <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: must be a positive integer")
    return v
