"""``onnxperf hw list | show NAME | probe | calibrate``: hardware presets, spec files, and measuring this
machine (``calibrate`` lives with the fit and its run, in :mod:`onnxperf.cli.calibrate`)."""

from __future__ import annotations

import argparse
import sys

from onnxperf.base.errors import OptionError
from onnxperf.ui.output import write_output
from onnxperf.hardware import list_presets, load_preset, load_spec, to_toml
from onnxperf.hardware import render
from onnxperf.cli import COMMANDS
from onnxperf.cli import calibrate as calibration_command
from onnxperf.cli.common import add_output, add_output_with_toml, add_progress, format_with_toml


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("hw", help=COMMANDS["hw"],
                       description="Hardware specs for the roofline: dense peak rates per dtype, memory "
                                   "bandwidth and capacity, each with its source.")
    hw = p.add_subparsers(dest="hw_command", metavar="ACTION", required=True)

    q = hw.add_parser("list", help="the built-in presets", description="List the built-in hardware presets.")
    add_output(q, ("text", "json"))
    q.set_defaults(run=run)

    q = hw.add_parser("show", help="one preset or spec file, with the source of every figure",
                      description="Show a preset (by id) or a spec file (a path ending in .toml).")
    q.add_argument("name", metavar="NAME", help="preset id (see `onnxperf hw list`) or path to a .toml spec file")
    add_output_with_toml(q)
    q.set_defaults(run=run)

    q = hw.add_parser("probe", help="measure this machine's fp32 compute and memory bandwidth",
                      description="Measure attainable fp32 compute (numba FMA kernel, numpy sgemm) and memory "
                                  "bandwidth (STREAM copy/triad) on this machine, next to the theoretical peak. "
                                  "With -o FILE.toml it writes a spec file usable wherever a preset is.")
    q.add_argument("--short", action="store_true", help="tiny sizes, 2 runs: a smoke test, not figures")
    q.add_argument("--repeats", type=int, default=None, metavar="N",
                   help="timed runs per kernel (default: 7, or 2 with --short)")
    add_progress(q, lines=True)
    add_output_with_toml(q)
    q.set_defaults(run=run)

    calibration_command.add_parser(hw)


def run(args: argparse.Namespace) -> int:
    action = getattr(args, "hw_command", None)
    fmt = format_with_toml(args)
    output = getattr(args, "output", None)
    if action == "list":
        specs = [load_preset(i) for i in list_presets()]
        if fmt == "json":
            text = render.to_json({"schema": "onnxperf.hardware-list/1", "presets": [s.to_dict() for s in specs]})
        else:
            text = render.list_text(specs)
        write_output(text, output, text_format=fmt == "text")
        return 0
    if action == "show":
        spec = load_spec(args.name)
        text = {"json": lambda: render.to_json(spec.to_dict()), "toml": lambda: to_toml(spec),
                "text": lambda: render.show_text(spec)}[fmt]()
        write_output(text, output)
        return 0
    if action == "probe":
        from onnxperf.hardware.probe import run_probe  # here: numba (and numpy) load only when probing

        repeats = getattr(args, "repeats", None)
        if repeats is not None and repeats < 1:
            raise OptionError(f"--repeats {repeats}: must be at least 1")
        result = run_probe(short=bool(getattr(args, "short", False)), repeats=repeats,
                           progress=None if args.no_progress else
                           (lambda msg: print(f"onnxperf: {msg}", file=sys.stderr, flush=True)))
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
    raise OptionError("hw: choose an action: list, show NAME, probe or calibrate")
