"""``onnxperf compare A.onnx B.onnx [C.onnx ...]``: exports of one network side by side (the first is the
baseline), their heavy nodes aligned block by block, and the differences explained."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from typing import Any

from onnxperf.base.errors import OptionError
from onnxperf.ui.output import write_output
from onnxperf.ui.units import parse_bytes
from onnxperf.hardware import load_spec
from onnxperf.insights.partial import reasons
from onnxperf.products.compare.model import build, load_sides
from onnxperf.products.compare.render import FORMATS, RENDERERS
from onnxperf.products.validate import compare as validation
from onnxperf.cli import COMMANDS
from onnxperf.cli.common import add_bindings, add_hw, add_model, add_output, add_progress, add_strict, output_format, progress, strict_exit
from onnxperf.cli.request import add_precision, request_of
from onnxperf.cli.validate import DEFAULT_RUN_MEMORY, RUN_MEMORY_HELP, add_run_options


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "compare", help=COMMANDS["compare"],
        description="Compare MODEL A (the baseline) with one or more other exports: totals side by side with "
                    "deltas, the compute-heavy nodes aligned block by block, and named explanations (layout "
                    "Transposes, BatchNorm folding, decomposed activations, Pad, constants, opsets, dtypes, "
                    "quantization, architecture changes) with their node count and cost.")
    add_model(p, many=True, what="two or more .onnx files; the first is the baseline")
    add_bindings(p, many=True, dim_help="bind a symbolic input dim in every model, e.g. --dim batch=1 (repeatable); a model "
                             "without that dim leaves it out with a note; an unbound batch dim is set to 1 with a "
                             "note")
    add_hw(p, what="adds predicted latency")
    add_precision(p)
    p.add_argument("--validate", action="store_true",
                   help="also measure each model's latency in onnxruntime under the same conditions "
                        "(needs --hw: this machine's spec)")
    add_run_options(p, prefix="--validate: ")
    p.add_argument("--memory", "--max-memory", dest="memory", metavar="SIZE", default=None,
                   help="--validate: " + RUN_MEMORY_HELP)
    add_strict(p)
    add_progress(p)
    add_output(p, FORMATS)
    p.set_defaults(run=run)


def measure(args: argparse.Namespace, sides: list[Any]) -> list[float | None] | None:
    """``--validate``: the measured latency (median of the timed runs, s) of each model, every model
    run under the same conditions: the same bindings, runs, threads, optimization level and seed."""
    if not args.hw:
        raise OptionError("--validate needs --hw: the spec of this machine (`onnxperf hw probe -o local.toml`)")
    if args.runs < 1 or args.warmup < 0:
        raise OptionError("--runs must be at least 1 and --warmup at least 0")
    spec = load_spec(args.hw)
    out: list[float | None] = []
    for path, side in zip(args.models, sides):
        v = validation.validate(replace(side.request, model=path, hw=None, precision=None), spec,
                                runs=args.runs, warmup=args.warmup, threads=args.threads, opt=args.opt,
                                seed=args.seed, random_weights=args.random_weights, timeout_s=args.timeout,
                                provider=args.provider, progress=False,
                                max_memory_bytes=parse_bytes(args.memory or DEFAULT_RUN_MEMORY))
        out.append(v.latency.p50_s)
    return out


def run(args: argparse.Namespace) -> int:
    if len(args.models) < 2:
        raise OptionError("compare needs at least two models (the first is the baseline)")
    fmt = output_format(args)
    if fmt == "html" and args.output in (None, "-") and sys.stdout.isatty():
        raise OptionError("--format html writes a whole HTML file: give -o FILE (e.g. -o diff.html)")
    request = request_of(args, model=None, memory_budget=None)  # its --memory bounds --validate's runs
    dims = dict(request.dims)
    with progress(args, ["analyzing", "measuring", "comparing"] if args.validate else ["analyzing", "comparing"]) as p:
        p.stage("analyzing")
        sides = load_sides(request, args.models)
        measured = None
        if args.validate:
            p.stage("measuring")
            measured = measure(args, sides)
        p.stage("comparing")
        options = {"dims": dict(sorted(dims.items())), "hw": args.hw, "convention": args.convention,
                   "validate": bool(args.validate)}
        if request.input_shapes:
            options["input_shapes"] = {k: list(v) for k, v in sorted(request.input_shapes.items())}
        if args.precision:
            options["precision"] = args.precision
        text = RENDERERS[fmt](build(sides, measured, options))
    write_output(text, args.output, text_format=fmt == "text")
    why = [f"{s.label}: " + "; ".join(reasons(s.analysis)) for s in sides if reasons(s.analysis)]
    return strict_exit(args.strict, why)
