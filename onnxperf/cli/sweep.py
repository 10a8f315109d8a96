"""``onnxperf sweep MODEL --dim batch=1,2,4,8``: cost, memory and predicted time as the input grows."""

from __future__ import annotations

import argparse

from onnxperf.base.errors import OptionError, one_line
from onnxperf.ui.output import write_output
from onnxperf.ui.progress import say
from onnxperf.products.render.sweep import RENDERERS
from onnxperf.products.sweep import sweep
from onnxperf.cli import COMMANDS
from onnxperf.cli.common import add_bindings, add_hw, add_memory, add_model, add_output, add_progress, add_strict, output_format, progress, strict_exit
from onnxperf.cli.request import add_precision, request_of

FORMATS = ("text", "json", "csv")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("sweep", help=COMMANDS["sweep"],
                       description="Evaluate MODEL over values of symbolic dims (a comma list sweeps; a single "
                                   "value binds) and print each figure as an exact formula in the swept dims. A "
                                   "static export is swept by naming a dim in its input shape: --input-shape "
                                   "input=batchx3x224x224 --dim batch=1,2,4,8.")
    add_model(p)
    add_bindings(p, dim_metavar="NAME=V[,V...]",
                 dim_help="a dim to sweep (a comma list: --dim batch=1,2,4,8,16) or to bind (one value: --dim "
                          "sequence=128); repeatable; a dim the model lacks is left out with a note")
    add_hw(p, what="adds predicted latency, throughput and the knee of a batch sweep")
    add_memory(p, what="memory budget (e.g. 8GiB): mark the rows whose weights + activation peak fit, and report "
                       "the largest --memory-dim value that fits")
    p.add_argument("--no-formulas", action="store_true", help="skip the formula fit")
    add_precision(p)
    add_strict(p)
    add_progress(p)
    add_output(p, FORMATS)
    p.set_defaults(run=run)


def parse_grid(items: list[str]) -> tuple[dict[str, list[int]], dict[str, int]]:
    grid: dict[str, list[int]] = {}
    fixed: dict[str, int] = {}
    for item in items:
        name, sep, values = item.partition("=")
        if not sep or not name or not values:
            raise OptionError(f"--dim {item!r}: expected NAME=V1,V2,... e.g. batch=1,2,4")
        try:
            vals = [int(v) for v in values.split(",") if v.strip()]
        except ValueError:
            raise OptionError(f"--dim {item!r}: values must be integers") from None
        if not vals or any(v <= 0 for v in vals):
            raise OptionError(f"--dim {item!r}: values must be positive integers")
        if len(vals) == 1:
            fixed[name] = vals[0]
        else:
            grid[name] = vals
    return grid, fixed


def run(args: argparse.Namespace) -> int:
    fmt = output_format(args)
    grid, fixed = parse_grid(args.dim)
    with progress(args, ["evaluating", "writing"]) as p:
        p.stage("evaluating")
        result = sweep(request_of(args, dims=fixed), grid, formulas=not args.no_formulas)
        for note in result.notes:
            say(f"onnxperf: note: {one_line(note)}")
        p.stage("writing")
        write_output(RENDERERS[fmt](result), args.output, text_format=fmt == "text")
    partial = [" ".join(f"{k}={v}" for k, v in r.values) for r in result.rows if not r.complete]
    return strict_exit(args.strict, [f"{len(partial)} of {len(result.rows)} rows ({', '.join(partial[:5])}"
                                     + (" ..." if len(partial) > 5 else "") + ")"] if partial else [])
