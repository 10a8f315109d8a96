"""``onnxperf summary MODEL``: model facts, totals, per-op-type table, top nodes, coverage."""

from __future__ import annotations

import argparse

from onnxperf.base.errors import OptionError
from onnxperf.ui.output import write_output
from onnxperf.products.render.summary import RENDERERS, STREAMS
from onnxperf.products.trace import build_trace, render_trace
from onnxperf.analysis.compose import compose
from onnxperf.insights.partial import reasons
from onnxperf.cli import COMMANDS
from onnxperf.cli.common import add_bindings, add_hw, add_llm, add_memory, add_model, add_output, add_progress, add_strict, add_trace, output_format, progress, strict_exit
from onnxperf.cli.request import add_precision, announce_bindings, request_of

FORMATS = ("text", "json", "csv", "md")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("summary", help=COMMANDS["summary"],
                       description="Analyze MODEL statically: shapes, per-node MACs/FLOPs/bytes/params, totals.")
    add_model(p)
    add_bindings(p)
    add_hw(p)
    add_memory(p)
    add_precision(p)
    add_llm(p)
    add_strict(p)
    add_trace(p)
    add_progress(p)
    add_output(p, FORMATS)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    fmt = output_format(args)
    if args.trace and not args.hw:
        raise OptionError("--trace needs --hw: the schedule is the roofline's predicted time per node")
    with progress(args, ["analyzing", "writing"]) as p:
        p.stage("analyzing")
        sm = compose(request_of(args))
        announce_bindings(sm.notes)
        p.stage("writing")
        if args.trace:
            write_trace(sm, args.trace)
        write_output(STREAMS.get(fmt, RENDERERS[fmt])(sm), args.output, text_format=fmt == "text")
    return strict_exit(args.strict, reasons(sm))


def write_trace(sm, path: str, validation=None) -> None:
    """``--trace FILE``: the predicted per-node schedule (and the measured one) as Chrome trace events."""
    if sm.roofline is None:
        raise OptionError("--trace needs --hw: the schedule is the roofline's predicted time per node")
    write_output(render_trace(build_trace(sm, validation)), path, option="--trace")
