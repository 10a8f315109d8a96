"""``onnxperf report MODEL -o report.html``: everything the analysis knows, in one self-contained HTML
file (or the same report model as JSON, or a Markdown summary), plus an optional Netron attachment."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from typing import Any

from onnxperf.base.errors import OptionError
from onnxperf.ui.output import write_output
from onnxperf.shapes.infer import is_binding_note
from onnxperf.hardware.spec import uncalibrated
from onnxperf.predict.roofline import roofline
from onnxperf.insights.partial import reasons
from onnxperf.analysis.compose import compose
from onnxperf.products.report import build_report
from onnxperf.products.render.report import RENDERERS, render_netron
from onnxperf.cli import COMMANDS
from onnxperf.cli.common import add_bindings, add_hw, add_llm, add_memory, add_model, add_output, add_progress, add_strict, add_trace, output_format, parse_dims, progress, strict_exit
from onnxperf.cli.request import add_precision, announce_bindings, llm_options, parse_input_shapes, request_of
from onnxperf.cli.summary import write_trace
from onnxperf.cli.validate import add_validation_options, validation_from_args

FORMATS = ("html", "json", "md")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report", help=COMMANDS["report"],
        description="Analyze MODEL and write a report: summary figures, cost by op type, roofline, bottlenecks, "
                    "memory over execution order and every node, as one HTML file that opens offline.")
    add_model(p)
    add_bindings(p)
    add_hw(p, what="adds the roofline, predicted times and bottlenecks")
    add_memory(p, what="memory budget (e.g. 8GiB): report the largest --memory-dim value that fits; with "
                       "--validate, also the budget of the run (default there: 4GiB)")
    add_precision(p)
    add_llm(p)
    add_strict(p)
    add_validate_options(p)
    add_trace(p)
    add_progress(p)
    add_output(p, FORMATS)
    for action in p._actions:
        if "--format" in action.option_strings:
            action.help = ("html (a self-contained page), json (the report model, schema onnxperf.report/1) or md "
                           "(a compact summary for a pull request or a CI job summary); " + action.help.split("; ", 1)[1])
    p.add_argument("--netron", metavar="FILE", default=None,
                   help="also write a Netron attachment (JSON, signature netron:attachment): open the model in "
                        "Netron, then this file, to see onnxperf's figures on every node")
    p.set_defaults(run=run)


def add_validate_options(p: argparse.ArgumentParser) -> None:
    """``--validate`` and the options it shares with ``onnxperf validate``."""
    p.add_argument("--validate", action="store_true",
                   help="also run the model in onnxruntime (needs --hw: this machine's spec) and show measured "
                        "times beside the predictions")
    add_validation_options(p, prefix="--validate: ")


def run_validation(args: argparse.Namespace, sm: Any) -> tuple[Any, Any]:
    """Measure the model when ``--validate`` was given: the mapping that
    :func:`onnxperf.products.report.measured_section` reads, and the validation itself; ``(None, None)``
    when not asked for."""
    if not getattr(args, "validate", False):
        return None, None
    if sm.spec is None:
        raise OptionError("--validate needs --hw: the spec of this machine (`onnxperf hw probe -o local.toml`, "
                          "or `onnxperf hw calibrate -o local.toml`)")
    v = validation_from_args(args, sm.spec)
    plain = roofline(sm, uncalibrated(sm.spec))
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
        # the binding notes are the analysis's already; the run's own (random weights, the profile's limits)
        "notes": [n for n in v.notes if not is_binding_note(n)],
        "state": None if v.state is None else v.state.to_dict(),
    }, v


def options_of(args: argparse.Namespace, sm: Any = None) -> dict[str, Any]:
    """The options given, as they are kept in the report (paths of outputs left out: they do not
    change the content, and the report stays byte-identical wherever it is written). The dims are
    those applied (``sm``): a dim the model lacks left out, a batch set to 1 by default kept, so
    the options rebuild the same report."""
    opts: dict[str, Any] = {
        "dims": dict(sm.dims) if sm is not None else parse_dims(args.dim), "input_shapes": {k: list(v) for k, v in parse_input_shapes(args.input_shape).items()},
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
    fmt = output_format(args)
    if args.netron == "-":
        raise OptionError("--netron needs a file name (the report itself may go to standard output)")
    if fmt == "html" and args.output in (None, "-") and sys.stdout.isatty():
        raise OptionError("--format html writes a whole HTML file: give -o FILE (e.g. -o report.html)")
    if args.trace and not args.hw:
        raise OptionError("--trace needs --hw: the schedule is the roofline's predicted time per node")
    stages = ["analyzing", "measuring", "building the report", f"rendering {fmt}", "writing"]
    if not getattr(args, "validate", False):
        stages.remove("measuring")
    with progress(args, stages) as p:
        p.stage("analyzing")
        request = request_of(args)
        sm = compose(replace(request, llm=replace(request.llm, curve=True)))
        announce_bindings(sm.notes)
        validation = None
        raw = None
        if "measuring" in stages:
            p.stage("measuring")
            validation, raw = run_validation(args, sm)
        p.stage("building the report")
        model = build_report(sm, validation, options_of(args, sm))
        p.stage(f"rendering {fmt}")
        text = RENDERERS[fmt](model)
        netron = render_netron(model) if args.netron else None
        p.stage("writing")
        if netron is not None:
            write_output(netron, args.netron, option="--netron")
        if args.trace:
            write_trace(sm, args.trace, raw)
    write_output(text, args.output)
    return strict_exit(args.strict, reasons(sm))
