"""``onnxperf validate MODEL --hw SPEC``: measured per-node times beside the predictions."""

from __future__ import annotations

import argparse
import sys

from ..errors import OptionError
from ..hardware import load_spec
from ..output import write_output
from ..render.validation import RENDERERS
from ..units import parse_bytes
from ..validate.compare import validate
from ..validate.runner import DEFAULT_PROVIDERS
from .common import add_bindings, add_output, parse_dims, parse_input_shapes


def add_validation_options(p: argparse.ArgumentParser) -> None:
    """Options shared by ``validate`` and ``report --validate``."""
    p.add_argument("--runs", type=int, default=10, metavar="N", help="timed runs (default 10)")
    p.add_argument("--warmup", type=int, default=3, metavar="N", help="warm-up runs (default 3)")
    p.add_argument("--threads", type=int, default=None, metavar="N", help="onnxruntime intra-op threads")
    p.add_argument("--opt", choices=("disable", "basic", "extended", "all"), default="all",
                   help="onnxruntime graph optimization level (default all)")
    p.add_argument("--provider", default=DEFAULT_PROVIDERS[0], metavar="NAME",
                   help="onnxruntime execution provider, e.g. CUDAExecutionProvider (default CPUExecutionProvider; "
                        "CPU stays the fallback for nodes it lacks)")
    p.add_argument("--batch", default=None, metavar="B1,B2,...",
                   help="also measure latency/throughput at these values of --batch-dim")
    p.add_argument("--batch-dim", default="batch", metavar="NAME", help="the dim --batch sets (default batch)")
    p.add_argument("--decode-context", default=None, metavar="C1,C2,...",
                   help="a decoder LLM: also measure its decode step at these contexts (past = context - new "
                        "tokens) beside the predictions")
    p.add_argument("--random-weights", action="store_true",
                   help="run with random weights of the analyzed shapes when the weight files are missing")
    p.add_argument("--seed", type=int, default=0, help="seed of the generated inputs and weights")
    p.add_argument("--timeout", type=float, default=300, metavar="S", help="time limit of the runtime, seconds")
    p.add_argument("--max-memory", default="4GiB", metavar="SIZE",
                   help="refuse generated inputs beyond this size, stop --batch before the first batch whose "
                        "predicted memory exceeds it, and cap the onnxruntime child's address space at it plus "
                        "1 GiB for the runtime (CPU provider; default 4GiB)")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("validate", help="run the model in onnxruntime; measured vs predicted per node",
                       description="Run MODEL in onnxruntime (in a child process, with a time limit), profile it, "
                                   "map the measured kernels to the original nodes, and print the error of the "
                                   "roofline prediction: end to end, per node, and rank correlation.")
    p.add_argument("model")
    add_bindings(p)
    p.add_argument("--hw", required=True, metavar="NAME|SPEC.toml",
                   help="hardware spec of THIS machine: `onnxperf hw probe -o local.toml` or, for calibrated "
                        "predictions, `onnxperf hw calibrate -o local.toml`")
    add_validation_options(p)
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
    return validate(args.model, spec, dims=parse_dims(args.dim), input_shapes=parse_input_shapes(args.input_shape),
                    runs=args.runs, warmup=args.warmup, threads=args.threads, opt=args.opt, seed=args.seed,
                    random_weights=args.random_weights, timeout_s=args.timeout,
                    batches=parse_batches(args.batch), batch_dim=args.batch_dim,
                    max_memory_bytes=parse_bytes(args.max_memory), progress=sys.stderr.isatty(),
                    provider=args.provider,
                    decode_contexts=parse_batches(getattr(args, "decode_context", None), "--decode-context"))


def run(args: argparse.Namespace) -> int:
    spec = load_spec(args.hw)
    v = validation_from_args(args, spec)
    from ..loader import load

    names = {i: n.name for i, n in enumerate(load(args.model).graph.nodes)}
    write_output(RENDERERS[args.format](v, names), args.output)
    return 0
