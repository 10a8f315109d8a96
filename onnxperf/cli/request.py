"""A command line's :class:`~onnxperf.cost.request.Request`, and the options read into the analysis's
own types: ``--precision`` (its choices are the analysis's precisions), ``--input-shape``, the LLM
options. Read by the commands that analyze a model; the commands that analyze nothing (``hw``,
``completion``) never import it, nor the analysis with it."""

from __future__ import annotations

import argparse

from onnxperf.cost.analysis import parse_shape
from onnxperf.cost.request import Request
from onnxperf.insights.llm.recognize import Overrides
from onnxperf.insights.llm.section import LLMOptions
from onnxperf.predict.kv_names import EXPORTED
from onnxperf.predict.precision import PRECISIONS
from onnxperf.shapes.infer import is_binding_note
from onnxperf.ui.progress import say
from onnxperf.ui.units import parse_bytes
from onnxperf.base.errors import OptionError, one_line
from onnxperf.cli.common import parse_dims


def add_precision(p: argparse.ArgumentParser) -> None:
    p.add_argument("--precision", choices=tuple(PRECISIONS), default=None,
                   help="what if the model ran in this precision: floating-point tensors (weights and activations) "
                        "at its width, arithmetic at its peak; stated in every output (default: as stored in the "
                        "file)")


def parse_input_shapes(items: list[str]) -> dict[str, tuple[int, ...]]:
    out: dict[str, tuple[int, ...]] = {}
    for item in items:
        name, sep, value = item.rpartition("=")
        if not sep or not name:
            raise OptionError(f"--input-shape {item!r}: expected INPUT=SHAPE, e.g. input=1x3x224x224")
        out[name] = parse_shape(value)
    return out


def announce_bindings(notes) -> None:
    """The notes of the bindings as applied (a ``--dim`` the model lacks, a batch dim set to 1), on
    stderr, once: they change what the figures are, whatever the output format."""
    for note in notes:
        if is_binding_note(note):
            say(f"onnxperf: note: {one_line(note)}")


def llm_options(args: argparse.Namespace) -> LLMOptions:
    """The LLM options the command line asks for; a ``--prompt`` longer than ``--context`` is refused
    (the prompt is in the context: its KV cache is the first ``--prompt`` tokens of it)."""
    if args.context is not None and args.prompt is not None and args.prompt > args.context:
        raise OptionError(f"--prompt {args.prompt}: longer than --context {args.context}; the prompt is part of the "
                          f"context: give --context {args.prompt} or more")
    kv_runtime = getattr(args, "kv_runtime", EXPORTED)
    kv_precision = getattr(args, "kv_precision", None)
    devices = getattr(args, "devices", 1) or 1
    full = bool(args.llm or args.context or args.prompt or kv_runtime != EXPORTED or kv_precision or devices > 1)
    return LLMOptions(full=full, context=args.context, prompt=args.prompt,
                      overrides=Overrides.parse(args.kv_dim, args.kv_cache), kv_runtime=kv_runtime,
                      kv_precision=kv_precision, devices=devices)


def request_of(args: argparse.Namespace, **fields) -> Request:
    """The one :class:`~onnxperf.cost.request.Request` of a command line: MODEL, ``--dim``, ``--input-shape``,
    ``--convention``, ``--hw``, ``--memory`` / ``--memory-dim``, ``--precision`` and the LLM options, as
    the command has them; an unbound batch dim binds to 1 (with a note). ``fields`` set the parts a
    command reads its own way (sweep's fixed dims, validate's ``--memory`` that bounds a run instead)."""
    memory = getattr(args, "memory", None)
    made = {
        "model": lambda: getattr(args, "model", None),
        "dims": lambda: parse_dims(getattr(args, "dim", None) or []),
        "input_shapes": lambda: parse_input_shapes(getattr(args, "input_shape", None) or []),
        "default_batch": lambda: True, "convention": lambda: getattr(args, "convention", None) or "default",
        "precision": lambda: getattr(args, "precision", None), "hw": lambda: getattr(args, "hw", None),
        "memory_budget": lambda: parse_bytes(memory) if memory else None,
        "memory_dim": lambda: getattr(args, "memory_dim", None) or "batch",
        "llm": lambda: llm_options(args) if hasattr(args, "llm") else None,
    }
    made = {k: fields[k] if k in fields else v() for k, v in made.items()}
    made.update((k, v) for k, v in fields.items() if k not in made)
    return Request(**made)

