"""``onnxperf hw calibrate``: measure the calibration suite on this machine and write the
calibrated spec (text table, JSON, or a TOML spec file)."""

from __future__ import annotations

import argparse
import sys

from onnxperf.base.errors import OptionError
from onnxperf.ui.output import write_output
from onnxperf.hardware import load_spec, to_toml
from onnxperf.hardware import render
from onnxperf.cli.common import add_output_with_toml, add_progress, format_with_toml


def add_parser(actions: argparse._SubParsersAction) -> None:
    """The ``calibrate`` action of ``onnxperf hw``."""
    q = actions.add_parser("calibrate", help="fit how much of the roofline each op family attains here",
                           description="Run a fixed suite of small single-op models through onnxruntime on this "
                                       "machine and fit, per op family, the share of the compute and memory roofs "
                                       "attained, plus a per-node overhead. The result is a spec file whose "
                                       "predictions use the fit (never fitted to the model being validated).")
    q.add_argument("--hw", metavar="NAME|SPEC.toml", default=None,
                   help="base spec to calibrate (default: measure this machine with a full probe)")
    q.add_argument("--runs", type=int, default=10, metavar="N", help="timed runs per suite model (default 10)")
    q.add_argument("--repeats", type=int, default=3, metavar="N",
                   help="passes over the suite; each case keeps its median (default 3)")
    q.add_argument("--warmup", type=int, default=3, metavar="N", help="warm-up runs (default 3)")
    q.add_argument("--threads", type=int, default=None, metavar="N", help="onnxruntime intra-op threads")
    q.add_argument("--opt", choices=("disable", "basic", "extended", "all"), default="all",
                   help="onnxruntime graph optimization level (use the one you validate with)")
    q.add_argument("--short", action="store_true",
                   help="small suite sizes, one pass of 10 runs, no state probe around each case: a smoke test, "
                        "not figures")
    add_progress(q, lines=True)
    add_output_with_toml(q)
    q.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Measure the suite (on ``--hw``, or on a fresh probe of this machine) and write the calibrated spec."""
    # here: `hw list` and `hw show` import this module for its parser; onnx, numpy and the
    # calibration suite load only when calibrating
    from onnxperf.products.calibration.run import calibration_table, run_calibration

    fmt = format_with_toml(args)
    output = getattr(args, "output", None)

    def say(msg: str) -> None:
        # every stage, with the time left, on a terminal or in a log alike (minutes of silence
        # when redirected read as a hang)
        print(f"onnxperf: {msg}", file=sys.stderr, flush=True)

    progress = None if args.no_progress else say

    short = bool(args.short)
    if args.runs < 1 or args.warmup < 0 or args.repeats < 1:
        raise OptionError("--runs and --repeats must be at least 1 and --warmup at least 0")
    if args.hw:
        base = load_spec(args.hw)
    else:
        from onnxperf.hardware.probe import run_probe  # here: numba (and numpy) load only when probing

        base = run_probe(short=short, progress=progress).spec
    result = run_calibration(base, runs=10 if short else args.runs, warmup=5 if short else args.warmup,
                             threads=args.threads, opt=args.opt, scale=1 / 16 if short else 1.0,
                             repeats=1 if short else args.repeats, probed=not short, progress=progress)
    table = calibration_table(result)
    if fmt == "json":
        text = render.to_json({"schema": "onnxperf.calibration/1", "spec": result.spec.to_dict(),
                               "samples": [s.__dict__ for s in result.samples]})
    elif fmt == "toml":
        text = to_toml(result.spec, header=table)
        if output not in (None, "-"):
            sys.stdout.write(table)
    else:
        text = table
    write_output(text, output)
    return 0
