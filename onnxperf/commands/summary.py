"""``onnxperf summary MODEL``: model facts, totals, per-op-type table, top nodes, coverage."""

from __future__ import annotations

import argparse

from ..analysis import analyze
from ..output import write_output
from ..render.summary import RENDERERS
from .common import add_bindings, add_output, parse_dims, parse_input_shapes

FORMATS = ("text", "json", "csv", "md")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("summary", help="shapes, MACs, FLOPs, params and memory traffic of a model",
                       description="Analyze MODEL statically: shapes, per-node MACs/FLOPs/bytes/params, totals.")
    p.add_argument("model", help="path to an .onnx file")
    add_bindings(p)
    add_output(p, FORMATS)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    a = analyze(args.model, dims=parse_dims(args.dim), input_shapes=parse_input_shapes(args.input_shape),
                convention=args.convention)
    write_output(RENDERERS[args.format](a), args.output)
    return 0
