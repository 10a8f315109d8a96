"""``onnxperf compare A.onnx B.onnx [C.onnx ...]``: exports of one network side by side (the first is the
baseline), their heavy nodes aligned block by block, and the differences explained."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..compare.model import build, load_sides
from ..compare.render import FORMATS, RENDERERS
from ..conventions import CONVENTIONS
from ..errors import OptionError
from ..output import write_output
from .common import add_strict, parse_dims, strict_exit


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "compare", help="compare exports of one network (e.g. PyTorch vs TensorFlow): aligned and explained",
        description="Compare MODEL A (the baseline) with one or more other exports: totals side by side with "
                    "deltas, the compute-heavy nodes aligned block by block, and named explanations (layout "
                    "Transposes, BatchNorm folding, decomposed activations, Pad, constants, opsets, dtypes, "
                    "quantization, architecture changes) with their node count and cost.")
    p.add_argument("models", nargs="+", metavar="MODEL", help="two or more .onnx files; the first is the baseline")
    p.add_argument("--dim", action="append", default=[], metavar="NAME=VALUE",
                   help="bind a symbolic input dim in every model, e.g. --dim batch=1 (repeatable); a model "
                        "without that dim ignores it")
    p.add_argument("--hw", metavar="NAME|SPEC.toml", default=None,
                   help="hardware preset id (see 'onnxperf hw list') or spec file: adds predicted latency")
    p.add_argument("--convention", choices=CONVENTIONS, default="default",
                   help="how MACs/FLOPs are counted (see docs/conventions.md)")
    p.add_argument("--format", choices=FORMATS, default=None,
                   help="text (default), json (schema onnxperf.compare/1), md (for CI), html (self-contained); "
                        "default html when -o ends with .html")
    p.add_argument("-o", "--output", metavar="FILE", default=None,
                   help="write to FILE (atomically) instead of standard output")
    p.add_argument("--validate", action="store_true",
                   help="also measure each model's latency in onnxruntime under the same conditions "
                        "(needs --hw: this machine's spec)")
    p.add_argument("--runs", type=int, default=10, metavar="N", help="--validate: timed runs (default 10)")
    p.add_argument("--warmup", type=int, default=3, metavar="N", help="--validate: warm-up runs (default 3)")
    p.add_argument("--threads", type=int, default=None, metavar="N", help="--validate: onnxruntime threads")
    p.add_argument("--opt", choices=("disable", "basic", "extended", "all"), default="all",
                   help="--validate: onnxruntime graph optimization level (default all)")
    p.add_argument("--random-weights", action="store_true",
                   help="--validate: run with random weights where weight files are missing")
    p.add_argument("--seed", type=int, default=0, help="--validate: seed of inputs and random weights")
    p.add_argument("--timeout", type=float, default=300, metavar="S", help="--validate: runtime time limit")
    add_strict(p)
    p.set_defaults(run=run)


def output_format(args: argparse.Namespace) -> str:
    if args.format:
        return args.format
    return "html" if args.output and args.output.lower().endswith((".html", ".htm")) else "text"


def measure(args: argparse.Namespace, sides: list[Any]) -> list[float | None] | None:
    """``--validate``: the measured latency (median of the timed runs, s) of each model, every model
    run under the same conditions: the same bindings, runs, threads, optimization level and seed."""
    if not args.hw:
        raise OptionError("--validate needs --hw: the spec of this machine (`onnxperf hw probe -o local.toml`)")
    if args.runs < 1 or args.warmup < 0:
        raise OptionError("--runs must be at least 1 and --warmup at least 0")
    from ..hardware import load_spec
    from ..validate.compare import validate

    spec = load_spec(args.hw)
    out: list[float | None] = []
    for path, side in zip(args.models, sides):
        v = validate(path, spec, dims=dict(side.dims_applied), runs=args.runs, warmup=args.warmup,
                     threads=args.threads, opt=args.opt, seed=args.seed, random_weights=args.random_weights,
                     timeout_s=args.timeout)
        out.append(v.latency.p50_s)
    return out


def run(args: argparse.Namespace) -> int:
    if len(args.models) < 2:
        raise OptionError("compare needs at least two models (the first is the baseline)")
    fmt = output_format(args)
    if fmt == "html" and args.output in (None, "-") and sys.stdout.isatty():
        raise OptionError("--format html writes a whole HTML file: give -o FILE (e.g. -o diff.html)")
    dims = parse_dims(args.dim)
    sides = load_sides(args.models, dims, args.hw, args.convention)
    measured = None
    if args.validate:
        measured = measure(args, sides)
    options = {"dims": dict(sorted(dims.items())), "hw": args.hw, "convention": args.convention,
               "validate": bool(args.validate)}
    write_output(RENDERERS[fmt](build(sides, measured, options)), args.output)
    from ..partial import reasons

    why = [f"{s.label}: " + "; ".join(reasons(s.summary)) for s in sides if reasons(s.summary)]
    return strict_exit(args.strict, why)
