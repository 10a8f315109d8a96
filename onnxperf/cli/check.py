"""``onnxperf check MODEL...``: budgets and lints; exit 0 pass, 1 a limit broken or an error-level
lint, 2 a model (or an option) could not be read."""

from __future__ import annotations

import argparse

from onnxperf.base.errors import OptionError
from onnxperf.ui.output import write_output
from onnxperf.ui.units import parse_bytes
from onnxperf.hardware import load_spec
from onnxperf.products.check.budget import Budget, discover_budget, read_budget
from onnxperf.products.check.ep import kernel_table
from onnxperf.products.check.render import RENDERERS
from onnxperf.products.check.runner import check_models, exit_code
from onnxperf.cli import COMMANDS
from onnxperf.cli.common import add_bindings, add_hw, add_memory, add_model, add_output, add_progress, add_provider, output_format, parse_dims, progress
from onnxperf.cli.request import add_precision, request_of

FORMATS = ("text", "json", "junit", "sarif", "md")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("check", help=COMMANDS["check"],
                       description="Check each MODEL against a budget (params, size, MACs/FLOPs, memory, latency, "
                                   "opsets, op types, dtypes, static shapes, execution-provider support) and the "
                                   "lints. Exit 0: all pass; 1: a limit broken or an error-level lint; 2: a model "
                                   "could not be read. See docs/check.md.")
    add_model(p, many=True, what="one or more .onnx files")
    p.add_argument("--budget", metavar="FILE", default=None,
                   help="budget TOML file (default: [tool.onnxperf] of the nearest pyproject.toml, if any)")
    p.add_argument("--no-pyproject", action="store_true", help="do not look for a budget in pyproject.toml")
    add_bindings(p, many=True, dim_help="bind a symbolic input dim in every model, e.g. --dim batch=1 (repeatable; wins over "
                             "the budget's dims); a model without that dim leaves it out with a note; an unbound "
                             "batch dim is set to 1 with a note")
    add_hw(p, what="the hardware of max_latency / min_throughput (wins over the budget's hw)")
    add_memory(p, memory_dim=False,
               what="device memory (e.g. 24GiB) for the decoder-LLM limits such as min_context_fit (wins over the "
                    "budget's device_memory)")
    add_provider(p, None, "every node must have a kernel in it (wins over the budget's execution_provider; "
                          "default: not checked)")
    add_precision(p)
    p.add_argument("-j", "--jobs", type=int, default=None, metavar="N",
                   help="worker processes for many models (default: one per CPU)")
    p.add_argument("--strict", action="store_true",
                   help="a model with any partial figure (a node not costed, a tensor of unknown size) fails "
                        "(exit 1), whatever its limits; same as strict = true in the budget")
    add_progress(p)
    add_output(p, FORMATS)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.jobs is not None and args.jobs < 1:
        raise OptionError("--jobs must be at least 1")
    if args.budget:
        budget = read_budget(args.budget)
    elif args.no_pyproject:
        budget = Budget()
    else:
        budget = discover_budget()
    budget = budget.with_overrides(hw=args.hw, dims=parse_dims(args.dim), execution_provider=args.provider,
                                   strict=args.strict, precision=args.precision,
                                   device_memory_bytes=parse_bytes(args.memory) if args.memory else None)
    # the budget holds the dims, hardware and precision (the options above override it); the request the rest
    request = request_of(args, model=None, dims={}, hw=None, precision=None, memory_budget=None, llm=None)
    _validate_up_front(budget)
    fmt = output_format(args)
    with progress(args, ["checking"], threaded=False) as p:  # no thread: check forks its workers
        p.stage("checking")
        verdicts = check_models(args.models, budget, request, args.jobs)
    write_output(RENDERERS[fmt](verdicts, budget), args.output, text_format=fmt == "text")
    return exit_code(verdicts)


def _validate_up_front(budget) -> None:
    """Options that are wrong for every model fail once, before any model is read."""
    if (budget.max_latency_s is not None or budget.min_throughput_per_s is not None) and not budget.hw:
        raise OptionError("max_latency / min_throughput need a hardware spec: hw = \"...\" in the budget, or --hw")
    if budget.hw:
        load_spec(budget.hw)
    if budget.execution_provider:
        kernel_table(budget.execution_provider)
