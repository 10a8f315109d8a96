"""``onnxperf hw list | show NAME | probe``: hardware presets, spec files, and measuring this machine."""

from __future__ import annotations

import argparse
import sys

from ..errors import OptionError
from ..hardware import list_presets, load_preset, load_spec, to_toml
from ..hardware import render
from ..output import write_output
from .common import add_output


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("hw", help="hardware presets and specs; measure this machine",
                       description="Hardware specs for the roofline: dense peak rates per dtype, memory "
                                   "bandwidth and capacity, each with its source.")
    hw = p.add_subparsers(dest="hw_command", metavar="ACTION", required=True)

    q = hw.add_parser("list", help="the built-in presets", description="List the built-in hardware presets.")
    add_output(q, ("text", "json"))
    q.set_defaults(run=run)

    q = hw.add_parser("show", help="one preset or spec file, with the source of every figure",
                      description="Show a preset (by id) or a spec file (a path ending in .toml).")
    q.add_argument("name", metavar="NAME", help="preset id (see `onnxperf hw list`) or path to a .toml spec file")
    _add_output_with_toml(q)
    q.set_defaults(run=run)

    q = hw.add_parser("probe", help="measure this machine's fp32 compute and memory bandwidth",
                      description="Measure attainable fp32 compute (numba FMA kernel, numpy sgemm) and memory "
                                  "bandwidth (STREAM copy/triad) on this machine, next to the theoretical peak. "
                                  "With -o FILE.toml it writes a spec file usable wherever a preset is.")
    q.add_argument("--short", action="store_true", help="tiny sizes, 2 runs: a smoke test, not figures")
    q.add_argument("--repeats", type=int, default=None, metavar="N",
                   help="timed runs per kernel (default: 7, or 2 with --short)")
    _add_output_with_toml(q)
    q.set_defaults(run=run)

    q = hw.add_parser("calibrate", help="fit how much of the roofline each op family attains here",
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
    q.add_argument("--short", action="store_true", help="small suite sizes and few runs: a smoke test")
    _add_output_with_toml(q)
    q.set_defaults(run=run)


def _add_output_with_toml(p: argparse.ArgumentParser) -> None:
    add_output(p, ("text", "json", "toml"))
    p.set_defaults(format=None)
    for action in p._actions:
        if action.dest == "format":
            action.help = "output format (default: toml when -o FILE ends in .toml, else text)"


def _format(args: argparse.Namespace) -> str:
    fmt = getattr(args, "format", None)
    if fmt:
        return fmt
    out = getattr(args, "output", None)
    return "toml" if out and str(out).lower().endswith(".toml") else "text"


def run(args: argparse.Namespace) -> int:
    action = getattr(args, "hw_command", None)
    fmt = _format(args)
    output = getattr(args, "output", None)
    if action == "list":
        specs = [load_preset(i) for i in list_presets()]
        if fmt == "json":
            text = render.to_json({"schema": "onnxperf.hardware-list/1", "presets": [s.to_dict() for s in specs]})
        else:
            text = render.list_text(specs)
        write_output(text, output)
        return 0
    if action == "show":
        spec = load_spec(args.name)
        text = {"json": lambda: render.to_json(spec.to_dict()), "toml": lambda: to_toml(spec),
                "text": lambda: render.show_text(spec)}[fmt]()
        write_output(text, output)
        return 0
    if action == "probe":
        from ..hardware.probe import run_probe  # imports numba: only when probing

        repeats = getattr(args, "repeats", None)
        if repeats is not None and repeats < 1:
            raise OptionError(f"--repeats {repeats}: must be at least 1")
        result = run_probe(short=bool(getattr(args, "short", False)), repeats=repeats,
                           progress=lambda msg: print(f"onnxperf: {msg}", file=sys.stderr, flush=True))
        if fmt == "json":
            text = render.to_json(result.to_dict())
        elif fmt == "toml":
            table = render.probe_text(result)
            text = to_toml(result.spec, header=table)
            if output not in (None, "-"):
                sys.stdout.write(table)  # the measured-vs-theoretical table, while the spec goes to the file
        else:
            text = render.probe_text(result)
        write_output(text, output)
        return 0
    if action == "calibrate":
        return _calibrate(args, fmt, output)
    raise OptionError("hw: choose an action: list, show NAME, probe or calibrate")


def _calibrate(args: argparse.Namespace, fmt: str, output: str | None) -> int:
    from ..validate.calibration import calibration_table, run_calibration

    def progress(msg: str) -> None:
        if sys.stderr.isatty():
            print(f"onnxperf: {msg}", file=sys.stderr, flush=True)

    short = bool(args.short)
    if args.runs < 1 or args.warmup < 0 or args.repeats < 1:
        raise OptionError("--runs and --repeats must be at least 1 and --warmup at least 0")
    if args.hw:
        base = load_spec(args.hw)
    else:
        from ..hardware.probe import run_probe

        base = run_probe(short=short, progress=progress).spec
    result = run_calibration(base, runs=2 if short else args.runs, warmup=1 if short else args.warmup,
                             threads=args.threads, opt=args.opt, scale=1 / 16 if short else 1.0,
                             repeats=1 if short else args.repeats, progress=progress)
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
