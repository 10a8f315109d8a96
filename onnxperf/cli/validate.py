"""``onnxperf validate MODEL --hw SPEC``: measured per-node times beside the predictions."""

from __future__ import annotations

import argparse

from onnxperf.base.errors import OptionError
from onnxperf.ui.output import write_output
from onnxperf.ui.units import parse_bytes
from onnxperf.graph.loader import load
from onnxperf.hardware import load_spec
from onnxperf.insights.partial import reasons
from onnxperf.analysis.compose import compose
from onnxperf.products.render.validation import RENDERERS
from onnxperf.products.trace import build_trace, render_trace
from onnxperf.products.validate.compare import validate
from onnxperf.products.validate.runner import DEFAULT_PROVIDERS
from onnxperf.cli import COMMANDS
from onnxperf.cli.common import add_bindings, add_hw, add_model, add_output, add_progress, add_provider, add_strict, add_trace, output_format, progress, strict_exit
from onnxperf.cli.request import announce_bindings, request_of


#: the memory budget of a validation run when --memory is not given
DEFAULT_RUN_MEMORY = "4GiB"
RUN_MEMORY_HELP = ("memory budget of the run (e.g. 8GiB): refuse generated inputs beyond it, stop --batch before "
                   "the first batch whose predicted memory exceeds it, and cap the onnxruntime child's address "
                   f"space at it plus 1 GiB for the runtime (CPU provider; default {DEFAULT_RUN_MEMORY})")


def add_run_options(p: argparse.ArgumentParser, prefix: str = "") -> None:
    """How onnxruntime runs the model: shared by ``validate``, ``report --validate`` and
    ``compare --validate`` (``prefix``: what the options depend on, in their help)."""
    p.add_argument("--runs", type=int, default=10, metavar="N", help=f"{prefix}timed runs (default: 10)")
    p.add_argument("--warmup", type=int, default=3, metavar="N", help=f"{prefix}warm-up runs (default: 3)")
    p.add_argument("--threads", type=int, default=None, metavar="N",
                   help=f"{prefix}onnxruntime intra-op threads (default: onnxruntime's, one per core)")
    p.add_argument("--opt", choices=("disable", "basic", "extended", "all"), default="all",
                   help=f"{prefix}onnxruntime graph optimization level (default: all)")
    add_provider(p, DEFAULT_PROVIDERS[0], f"{prefix}the provider that runs the model (CPU stays the fallback for "
                                         "nodes it lacks)")
    p.add_argument("--random-weights", action="store_true",
                   help=f"{prefix}run with random weights of the analyzed shapes when the weight files are missing")
    p.add_argument("--seed", type=int, default=0, metavar="N", help=f"{prefix}seed of the generated inputs and weights (default: 0)")
    p.add_argument("--timeout", type=float, default=300, metavar="S",
                   help=f"{prefix}time limit of the runtime, seconds (default: 300)")


def add_validation_options(p: argparse.ArgumentParser, prefix: str = "") -> None:
    """Options shared by ``validate`` and ``report --validate`` (``--memory`` is the command's)."""
    add_run_options(p, prefix)
    p.add_argument("--batch", default=None, metavar="B1,B2,...",
                   help=f"{prefix}also measure latency/throughput at these values of --batch-dim")
    p.add_argument("--batch-dim", default="batch", metavar="NAME", help=f"{prefix}the dim --batch sets (default: batch)")
    p.add_argument("--blocks", type=int, default=5, metavar="N",
                   help=f"{prefix}the timed runs in N blocks between short probes of the machine (bandwidth, "
                        "arithmetic, dispatch): blocks starved of CPU are dropped and the error is normalized to "
                        "each block's state, with a noise band (default: 5; 1: one block, no probes)")
    p.add_argument("--decode-context", default=None, metavar="C1,C2,...",
                   help=f"{prefix}a decoder LLM: also measure its decode step at these contexts (past = context - "
                        "new tokens) beside the predictions")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("validate", help=COMMANDS["validate"],
                       description="Run MODEL in onnxruntime (in a child process, with a time limit), profile it, "
                                   "map the measured kernels to the original nodes, and print the error of the "
                                   "roofline prediction: end to end, per node, and rank correlation.")
    add_model(p)
    add_bindings(p, convention=False)
    add_hw(p, required=True, what="the spec of THIS machine (`onnxperf hw probe -o local.toml`, or for calibrated "
                                  "predictions `onnxperf hw calibrate -o local.toml`)")
    add_validation_options(p)
    p.add_argument("--memory", "--max-memory", dest="memory", metavar="SIZE", default=None, help=RUN_MEMORY_HELP)
    add_strict(p, what="the prediction")
    add_trace(p)
    add_progress(p)
    add_output(p, ("text", "json"))
    p.set_defaults(run=run)


def parse_batches(text: str | None, option: str = "--batch") -> list[int] | None:
    if not text:
        return None
    try:
        vals = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise OptionError(f"{option} {text!r}: expected integers like 1,2,4,8") from None
    if not vals or any(v <= 0 for v in vals):
        raise OptionError(f"{option} {text!r}: values must be positive")
    return vals


def validation_from_args(args: argparse.Namespace, spec):
    if args.runs < 1 or args.warmup < 0:
        raise OptionError("--runs must be at least 1 and --warmup at least 0")
    blocks = getattr(args, "blocks", 5)
    if blocks < 1:
        raise OptionError(f"--blocks {blocks}: at least 1")
    return validate(request_of(args, memory_budget=None, precision=None, llm=None, hw=None), spec, runs=args.runs, warmup=args.warmup, threads=args.threads, opt=args.opt, seed=args.seed,
                    random_weights=args.random_weights, timeout_s=args.timeout,
                    batches=parse_batches(args.batch), batch_dim=args.batch_dim,
                    max_memory_bytes=parse_bytes(args.memory or DEFAULT_RUN_MEMORY), progress=False,
                    provider=args.provider,
                    decode_contexts=parse_batches(getattr(args, "decode_context", None), "--decode-context"),
                    blocks=min(blocks, args.runs))


def run(args: argparse.Namespace) -> int:
    fmt = output_format(args)
    spec = load_spec(args.hw)
    with progress(args, ["measuring", "writing"]) as p:
        p.stage("measuring")
        v = validation_from_args(args, spec)
        announce_bindings(v.notes if hasattr(v, "notes") else ())
        names = {i: n.name for i, n in enumerate(load(args.model).graph.nodes)}
        p.stage("writing")
        write_output(RENDERERS[fmt](v, names), args.output, text_format=fmt == "text")
        sm = None
        if args.trace or args.strict:  # the static side, as summary --hw gives it
            sm = compose(request_of(args, memory_budget=None, hw=spec))
        if args.trace:
            write_output(render_trace(build_trace(sm, v)), args.trace, option="--trace")
    if args.strict:
        return strict_exit(True, reasons(sm))
    return 0
