"""Options shared by the subcommands: model bindings, output format and file."""

from __future__ import annotations

import argparse
import sys

from ..conventions import CONVENTIONS
from ..errors import OptionError, one_line


def add_output(p: argparse.ArgumentParser, formats: tuple[str, ...]) -> None:
    p.add_argument("--format", choices=formats, default=formats[0], help="output format (default: %(default)s)")
    p.add_argument("-o", "--output", metavar="FILE", default=None,
                   help="write to FILE (atomically) instead of standard output")


def add_output_with_toml(p: argparse.ArgumentParser) -> None:
    """--format text|json|toml and -o; the format defaults to the file's suffix (:func:`format_with_toml`)."""
    add_output(p, ("text", "json", "toml"))
    p.set_defaults(format=None)
    for action in p._actions:
        if action.dest == "format":
            action.help = "output format (default: toml when -o FILE ends in .toml, else text)"


def format_with_toml(args: argparse.Namespace) -> str:
    """--format as given, else toml when -o FILE ends in .toml, else text."""
    fmt = getattr(args, "format", None)
    if fmt:
        return fmt
    out = getattr(args, "output", None)
    return "toml" if out and str(out).lower().endswith(".toml") else "text"


def add_bindings(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dim", action="append", default=[], metavar="NAME=VALUE",
                   help="bind a symbolic input dim, e.g. --dim batch=8 (repeatable)")
    p.add_argument("--input-shape", action="append", default=[], metavar="INPUT=SHAPE",
                   help="set a whole input shape, e.g. --input-shape input=1x3x224x224 (repeatable)")
    p.add_argument("--convention", choices=CONVENTIONS, default="default",
                   help="how MACs/FLOPs are counted: default (onnxperf), torch (torch.utils.flop_counter), "
                        "fvcore (fvcore FlopCountAnalysis), tf (the TF profiler's float_ops); see docs/conventions.md")


def add_precision(p: argparse.ArgumentParser) -> None:
    from ..precision import PRECISIONS

    p.add_argument("--precision", choices=tuple(PRECISIONS), default=None,
                   help="what if the model ran in this precision: floating-point tensors (weights and activations) "
                        "at its width, arithmetic at its peak; stated in every output (default: as stored in the "
                        "file)")


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


def parse_input_shapes(items: list[str]) -> dict[str, tuple[int, ...]]:
    from ..analysis import parse_shape  # here: commands that analyze nothing (hw) never load the analysis

    out: dict[str, tuple[int, ...]] = {}
    for item in items:
        name, sep, value = item.rpartition("=")
        if not sep or not name:
            raise OptionError(f"--input-shape {item!r}: expected INPUT=SHAPE, e.g. input=1x3x224x224")
        out[name] = parse_shape(value)
    return out


def add_strict(p: argparse.ArgumentParser) -> None:
    p.add_argument("--strict", action="store_true",
                   help="exit 1 when any figure is partial (a node not costed, a tensor of unknown size); "
                        "the output is written all the same")


def strict_exit(strict: bool, reasons: list[str]) -> int:
    """1 (with one line on stderr saying why) when ``--strict`` is given and some figure is partial."""
    if not strict or not reasons:
        return 0
    print(one_line("onnxperf: --strict: results are partial: " + "; ".join(reasons)), file=sys.stderr)
    return 1


def add_llm(p: argparse.ArgumentParser) -> None:
    """Options of the decoder-LLM section (KV cache, prefill and decode): see onnxperf.llm."""
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


def _positive(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if v <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: must be a positive integer")
    return v


def llm_options(args: argparse.Namespace):
    """The :class:`onnxperf.llm.section.LLMOptions` the command line asks for."""
    from ..llm.recognize import Overrides
    from ..llm.section import LLMOptions

    full = bool(args.llm or args.context or args.prompt)
    return LLMOptions(full=full, context=args.context, prompt=args.prompt,
                      overrides=Overrides.parse(args.kv_dim, args.kv_cache))
