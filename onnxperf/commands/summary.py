"""``onnxperf summary MODEL``: model facts, totals, per-op-type table, top nodes, coverage."""

from __future__ import annotations

import argparse

from ..output import write_output
from ..render.summary import RENDERERS, STREAMS
from ..summary import summarize
from ..units import parse_bytes
from .common import add_bindings, add_llm, add_output, add_precision, add_strict, llm_options, parse_dims, parse_input_shapes, strict_exit

FORMATS = ("text", "json", "csv", "md")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("summary", help="shapes, MACs, FLOPs, params and memory traffic of a model",
                       description="Analyze MODEL statically: shapes, per-node MACs/FLOPs/bytes/params, totals.")
    p.add_argument("model", help="path to an .onnx file")
    add_bindings(p)
    p.add_argument("--hw", metavar="NAME|SPEC.toml", default=None,
                   help="hardware preset id (see 'onnxperf hw list') or spec file: adds the roofline prediction")
    p.add_argument("--memory", metavar="SIZE", default=None,
                   help="memory budget (e.g. 8GiB): report the largest --memory-dim value whose weights + "
                        "activation peak fit")
    p.add_argument("--memory-dim", metavar="NAME", default="batch", help="dim to grow for --memory (default: batch)")
    add_precision(p)
    add_llm(p)
    add_strict(p)
    add_output(p, FORMATS)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    budget = parse_bytes(args.memory) if args.memory else None
    sm = summarize(args.model, dims=parse_dims(args.dim), input_shapes=parse_input_shapes(args.input_shape),
                   convention=args.convention, hw=args.hw, memory_budget=budget, memory_dim=args.memory_dim,
                   llm=llm_options(args), precision=args.precision)
    write_output(STREAMS.get(args.format, RENDERERS[args.format])(sm), args.output)
    from ..partial import reasons

    return strict_exit(args.strict, reasons(sm))
