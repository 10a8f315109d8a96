"""``onnxperf sweep MODEL --dim batch=1,2,4,8``: cost, memory and predicted time as the input grows."""

from __future__ import annotations

import argparse

from ..conventions import CONVENTIONS
from ..errors import OptionError
from ..output import write_output
from ..render.sweep import RENDERERS
from ..sweep import sweep
from .common import add_output, add_precision, add_strict, strict_exit

FORMATS = ("text", "json", "csv")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("sweep", help="costs, memory and predicted latency over values of a dim, with formulas",
                       description="Evaluate MODEL over values of symbolic dims (a comma list sweeps; a single "
                                   "value binds) and print each figure as an exact formula in the swept dims.")
    p.add_argument("model")
    p.add_argument("--dim", action="append", default=[], metavar="NAME=V[,V...]",
                   help="e.g. --dim batch=1,2,4,8,16 (swept) --dim sequence=128 (fixed)")
    p.add_argument("--hw", metavar="NAME|SPEC.toml", default=None, help="hardware for predicted latency")
    p.add_argument("--convention", choices=CONVENTIONS, default="default")
    p.add_argument("--no-formulas", action="store_true", help="skip the formula fit")
    add_precision(p)
    add_strict(p)
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
    grid, fixed = parse_grid(args.dim)
    result = sweep(args.model, grid, fixed, hw=args.hw, convention=args.convention, formulas=not args.no_formulas,
                   precision=args.precision)
    write_output(RENDERERS[args.format](result), args.output)
    partial = [" ".join(f"{k}={v}" for k, v in r.values) for r in result.rows if not r.complete]
    return strict_exit(args.strict, [f"{len(partial)} of {len(result.rows)} rows ({', '.join(partial[:5])}"
                                     + (" ..." if len(partial) > 5 else "") + ")"] if partial else [])
