"""``onnxperf report MODEL -o report.html``: everything the analysis knows, in one self-contained HTML
file (or the same report model as JSON, or a Markdown summary), plus an optional Netron attachment."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from typing import Any

from ..errors import OptionError
from ..output import write_output
from ..progress import Progress
from ..report import build_report
from ..render.report import RENDERERS, render_netron
from ..summary import summarize
from ..units import parse_bytes
from .common import add_bindings, add_llm, add_precision, add_strict, llm_options, parse_dims, parse_input_shapes, strict_exit

FORMATS = ("html", "json", "md")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report", help="one self-contained HTML report (or its JSON / Markdown) of a model",
        description="Analyze MODEL and write a report: summary figures, cost by op type, roofline, bottlenecks, "
                    "memory over execution order and every node, as one HTML file that opens offline.")
    p.add_argument("model", help="path to an .onnx file")
    add_bindings(p)
    p.add_argument("--hw", metavar="NAME|SPEC.toml", default=None,
                   help="hardware preset id (see 'onnxperf hw list') or spec file: adds the roofline, predicted "
                        "times and bottlenecks")
    p.add_argument("--memory", metavar="SIZE", default=None,
                   help="memory budget (e.g. 8GiB): report the largest --memory-dim value that fits")
    p.add_argument("--memory-dim", metavar="NAME", default="batch", help="dim to grow for --memory (default: batch)")
    p.add_argument("--format", choices=FORMATS, default="html",
                   help="html (default), json (the report model, schema onnxperf.report/1) or md (a compact "
                        "summary for a pull request or a CI job summary)")
    p.add_argument("--json", dest="format", action="store_const", const="json",
                   help="the report model as JSON: same as --format json")
    p.add_argument("--md", dest="format", action="store_const", const="md",
                   help="the compact Markdown summary: same as --format md")
    p.add_argument("-o", "--output", metavar="FILE", default=None,
                   help="write to FILE (atomically) instead of standard output")
    p.add_argument("--netron", metavar="FILE", default=None,
                   help="also write a Netron attachment (JSON, signature netron:attachment): open the model in "
                        "Netron, then this file, to see onnxperf's figures on every node")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on the terminal")
    add_precision(p)
    add_llm(p)
    add_strict(p)
    add_validate_options(p)
    p.set_defaults(run=run)


def add_validate_options(p: argparse.ArgumentParser) -> None:
    """``--validate`` and the options it shares with ``onnxperf validate``."""
    from .validate import add_validation_options

    p.add_argument("--validate", action="store_true",
                   help="also run the model in onnxruntime (needs --hw: this machine's spec) and show measured "
                        "times beside the predictions")
    add_validation_options(p)


def run_validation(args: argparse.Namespace, sm: Any) -> Any:
    """Measure the model when ``--validate`` was given: the mapping that
    :func:`onnxperf.report.measured_section` reads; ``None`` when not asked for."""
    if not getattr(args, "validate", False):
        return None
    if sm.spec is None:
        raise OptionError("--validate needs --hw: the spec of this machine (`onnxperf hw probe -o local.toml`, "
                          "or `onnxperf hw calibrate -o local.toml`)")
    from ..roofline import roofline
    from ..calibration.fit import uncalibrated
    from .validate import validation_from_args

    v = validation_from_args(args, sm.spec)
    plain = roofline(sm.analysis, uncalibrated(sm.spec))
    figures = v.calibrated_figures or v.plain
    return {
        # the mean, as `onnxperf validate` uses for the end-to-end error
        "latency_s": v.latency.mean_s, "provider": ", ".join(v.providers), "runs": v.latency.n,
        "device": f"onnxruntime {v.ort_version}, opt={v.opt}",
        "node_times_s": {str(i): t for i, t in sorted(v.node_measured_s(plain).items())},
        "groups": [{"keys": [str(i) for i in g.original_node_ids], "measured_s": g.measured_s}
                   for g in v.groups if not g.folded],
        "errors": figures.to_dict(),
        "errors_by_roofline": {"plain": v.plain.to_dict(),
                               **({"calibrated": v.calibrated_figures.to_dict()} if v.calibrated_figures else {})},
        "warnings": list(v.warnings),
    }


def options_of(args: argparse.Namespace) -> dict[str, Any]:
    """The options given, as they are kept in the report (paths of outputs left out: they do not
    change the content, and the report stays byte-identical wherever it is written)."""
    opts: dict[str, Any] = {
        "dims": parse_dims(args.dim), "input_shapes": {k: list(v) for k, v in parse_input_shapes(args.input_shape).items()},
        "convention": args.convention, "hw": args.hw, "memory": args.memory,
        "memory_dim": args.memory_dim if args.memory else None,
    }
    if args.precision:
        opts["precision"] = args.precision
    llm = llm_options(args)
    if llm.full:
        opts["llm"] = {"context": args.context, "prompt": args.prompt, "kv_dim": list(args.kv_dim),
                       "kv_cache": list(args.kv_cache)}
    if getattr(args, "validate", False):
        opts["validate"] = True
        opts["provider"] = getattr(args, "provider", None)
    return opts


def run(args: argparse.Namespace) -> int:
    if args.netron == "-":
        raise OptionError("--netron needs a file name (the report itself may go to standard output)")
    if args.format == "html" and args.output in (None, "-") and sys.stdout.isatty():
        raise OptionError("--format html writes a whole HTML file: give -o FILE (e.g. -o report.html)")
    budget = parse_bytes(args.memory) if args.memory else None
    stages = ["analyzing", "measuring", "building the report", f"rendering {args.format}", "writing"]
    if not hasattr(args, "validate") or not getattr(args, "validate", None):
        stages.remove("measuring")
    with Progress(stages, enabled=False if args.no_progress else None) as progress:
        progress.stage("analyzing")
        sm = summarize(args.model, dims=parse_dims(args.dim), input_shapes=parse_input_shapes(args.input_shape),
                       convention=args.convention, hw=args.hw, memory_budget=budget, memory_dim=args.memory_dim,
                       llm=replace(llm_options(args), curve=True), precision=args.precision)
        validation = None
        if "measuring" in stages:
            progress.stage("measuring")
            validation = run_validation(args, sm)
        progress.stage("building the report")
        model = build_report(sm, validation, options_of(args))
        progress.stage(f"rendering {args.format}")
        text = RENDERERS[args.format](model)
        netron = render_netron(model) if args.netron else None
        progress.stage("writing")
        if netron is not None:
            write_output(netron, args.netron)
    write_output(text, args.output)
    from ..partial import reasons

    return strict_exit(args.strict, reasons(sm))
