"""Cost as the input grows: evaluate a model over values of one or more dims, and recover the
exact polynomial of each figure in those dims where it is one."""

from __future__ import annotations

import itertools
import math
import os
from dataclasses import dataclass, replace
from typing import Any

from onnxperf.analysis.compose import compose
from onnxperf.base.errors import OptionError
from onnxperf.base.formula import NotPolynomialError, Polynomial, fit_many
from onnxperf.analysis.result import Analysis
from onnxperf.cost.request import Request
from onnxperf.graph.loader import LoadedModel, load
from onnxperf.hardware import load_spec
from onnxperf.predict.memory import LargestFit, largest_fitting
from onnxperf.predict.plan import dominant
from onnxperf.shapes.infer import input_dim_names, is_binding_note
from onnxperf.base.suggest import did_you_mean
from onnxperf.ui.progress import advance

#: the knee: the smallest batch that no larger batch beats in throughput by more than this fraction
KNEE_GAIN = 0.10

FIGURES = ("macs", "flops", "bytes", "activation_peak_bytes", "total_memory_bytes")


@dataclass(frozen=True)
class SweepRow:
    values: tuple[tuple[str, int], ...]
    #: the cost figures as the row's totals give them: None where nothing of one was counted while
    #: something was left out (:class:`onnxperf.cost.analysis.Totals`): unknown, never 0
    macs: int | None
    flops: int | None
    int_ops: int | None
    bytes: int | None
    intensity: float | None
    activation_peak_bytes: int
    total_memory_bytes: int
    latency_s: float | None
    throughput_per_s: float | None
    compute_bound_share: float | None
    #: False when a figure of this row is a lower bound (some node not costed, or some tensor of
    #: unknown size): a row past a model's limits (a sequence longer than its position table)
    complete: bool
    #: nodes left out of the cost figures, by op type (the costs are lower bounds when any)
    uncosted: tuple[tuple[str, int], ...] = ()
    #: tensors of unknown size (the memory figures are lower bounds when any)
    unknown_size_tensors: int = 0
    #: the first node where shapes were lost (``#key op 'name'``), when some were
    lost_at: str | None = None
    #: weights + activation peak within ``--memory`` (None: no budget given, or the size unknown)
    fits_memory: bool | None = None
    #: which side of the truth the cost figures (and the latency) are on, and the memory figures
    #: (:attr:`onnxperf.cost.analysis.Totals.side`, :attr:`onnxperf.predict.memory.MemoryResult.side`)
    cost_side: str = ""
    memory_side: str = ""
    #: the nodes that make the costs an upper bound, by op type
    upper: tuple[tuple[str, int], ...] = ()
    #: the limiter holding most of the row's predicted time (:func:`onnxperf.predict.plan.dominant`) and its share
    #: of the latency (None without --hw, or when the latency is partial)
    limiter: str | None = None
    limiter_share: float | None = None

    @property
    def costs_complete(self) -> bool:
        """Nothing left out of the cost figures (they may still be upper bounds)."""
        return self.cost_side not in ("lower", "unknown")

    @property
    def uncosted_nodes(self) -> int:
        return sum(k for _, k in self.uncosted)


@dataclass(frozen=True)
class SweepResult:
    model: str
    dims: tuple[str, ...]
    fixed: tuple[tuple[str, int], ...]
    hardware: str | None
    rows: tuple[SweepRow, ...]
    formulas: tuple[tuple[str, Polynomial | None, str], ...]  # (figure, polynomial, why-not)
    knee: tuple[tuple[str, int], ...] | None  # where throughput stops rising (batch sweeps)
    #: the --precision what-if of every row, None: as stored
    precision: str | None = None
    #: the latencies are lower bounds (no prediction is one now: see ``latency_plain``)
    latency_lower_bound: bool = False
    #: the bindings as applied: a dim the model lacks, a batch dim set to 1 (one note each)
    notes: tuple[str, ...] = ()
    #: ``--memory``: the budget, and the largest ``memory_dim`` value that fits it
    memory_budget: int | None = None
    largest: LargestFit | None = None
    #: the formulas hold where every swept dim is a multiple of this (the swept values' gcd; 1: everywhere)
    formula_step: int = 1
    #: the latencies are a plain roofline's (no launch overhead, no fusion): estimates, not bounds, and
    #: the knee of such a curve comes early (nothing to amortize)
    latency_plain: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": "onnxperf.sweep/1", "model": self.model, "dims": list(self.dims),
            "fixed": dict(self.fixed), "hardware": self.hardware,
            "rows": [{**dict(r.values), **{k: getattr(r, k) for k in (
                "macs", "flops", "int_ops", "bytes", "intensity", "activation_peak_bytes", "total_memory_bytes",
                "latency_s", "throughput_per_s", "compute_bound_share", "limiter", "limiter_share", "complete")},
                      "uncosted_nodes": r.uncosted_nodes, "uncosted": dict(r.uncosted),
                      "unknown_size_tensors": r.unknown_size_tensors, "lost_at": r.lost_at,
                      "bound": r.cost_side or "exact", "memory_bound": r.memory_side or "exact",
                      "upper_bounded": dict(r.upper),
                      **({"fits_memory": r.fits_memory} if self.memory_budget is not None else {})}
                     for r in self.rows],
            "formulas": {name: (p.to_dict() if p is not None else {"error": why}) for name, p, why in self.formulas},
            **({"formulas_hold_for_multiples_of": self.formula_step} if self.formula_step > 1 else {}),
            "knee": None if self.knee is None else dict(self.knee),
            **({"precision": self.precision} if self.precision else {}),
            **({"latency_is_lower_bound": self.latency_lower_bound, "plain_roofline": self.latency_plain}
               if self.hardware else {}),
            "notes": list(self.notes),
            **({"memory": {"budget_bytes": self.memory_budget,
                           "largest": self.largest.to_dict() if self.largest is not None else None}}
               if self.memory_budget is not None else {}),
        }


def knee_index(throughputs: list[float], gain: float = KNEE_GAIN) -> int:
    """Index of the knee of a throughput curve over growing batches: the first point that no
    later point beats by more than ``gain`` (a dip followed by a rise is not a knee)."""
    for i, t in enumerate(throughputs):
        if all(later <= t * (1 + gain) for later in throughputs[i + 1:]):
            return i
    return len(throughputs) - 1


def _row(sm: Analysis, values: tuple[tuple[str, int], ...], budget: int | None = None) -> SweepRow:
    t = sm.totals
    r = sm.roofline
    lat = r.latency_s if r else None
    items = dict(values).get("batch", sm.batch) if any("batch" in k for k, _ in values) else sm.batch
    return SweepRow(
        values=values, macs=t.macs, flops=t.flops, int_ops=t.int_ops, bytes=t.bytes_total,
        intensity=t.intensity_flops_per_byte, activation_peak_bytes=sm.memory.peak_bytes,
        total_memory_bytes=sm.memory.total_bytes, latency_s=lat,
        throughput_per_s=(items / lat) if lat else None,
        compute_bound_share=(r.compute_bound_time_s / r.latency_s) if r and r.latency_s and r.complete
        else None,
        limiter=dominant(r.time_by_bound()) if r and r.latency_s and r.complete else None,
        limiter_share=(r.time_by_bound().get(dominant(r.time_by_bound()), 0.0) / r.latency_s)
        if r and r.latency_s and r.complete else None,
        complete=t.complete and sm.memory.complete and (r is None or r.complete),
        uncosted=t.uncosted, unknown_size_tensors=sm.memory.unknown_tensors,
        lost_at=sm.coverage.first_lost_at,
        fits_memory=(sm.memory.total_bytes <= budget if sm.memory.complete else None) if budget is not None else None,
        cost_side=r.side if r is not None else t.side, memory_side=sm.memory.side, upper=t.upper_bounded,
    )


def _row_figures(r: SweepRow) -> list[int | None]:
    """:func:`_figures` of a row, in the same order."""
    return [r.macs, r.flops, r.bytes, r.activation_peak_bytes, r.total_memory_bytes]


def _figures(sm: Analysis) -> list[int | None]:
    """The figures fitted (:data:`FIGURES`); only complete ones are fitted, so none is None there."""
    t = sm.totals
    return [t.macs, t.flops, t.bytes_total, sm.memory.peak_bytes, sm.memory.total_bytes]


def _check_swept(loaded, grid: dict[str, list[int]], input_shapes: dict[str, tuple]) -> None:
    """Every swept dim must be one the model's inputs have (or an input shape names): a dim it lacks
    would give the same row at every value. Refused with what the model has and, for a static input,
    the --input-shape that names one."""
    known = input_dim_names(loaded)
    for shape in input_shapes.values():
        known += [d for d in shape if isinstance(d, str) and d not in known]
    for name in grid:
        if name in known:
            continue
        hint = did_you_mean(name, known)
        if not hint:
            real = [vi for vi in loaded.proto.graph.input if vi.name not in loaded.graph.initializers]
            example = next((vi for vi in real if vi.type.tensor_type.HasField("shape")
                            and vi.type.tensor_type.shape.dim), None)
            if example is not None:
                dims = [d.dim_param or str(d.dim_value) for d in example.type.tensor_type.shape.dim]
                dims[0] = name
                hint = f"; name one in an input shape: --input-shape {example.name}={'x'.join(dims)}"
        raise OptionError(f"--dim {name}={','.join(map(str, grid[name]))}: the model's inputs have no dim named "
                          f"{name!r} (symbolic dims: {', '.join(known) or 'none'}), so every row would be the same"
                          + hint)


def sweep(request: Request, grid: dict[str, list[int]], formulas: bool = True) -> SweepResult:
    """Evaluate every combination of ``grid`` values and fit formulas: each row is ``request`` with
    those values bound (``request.at(...)``), so its fixed dims, input shapes, convention, precision,
    hardware and memory budget hold at every row.

    Input shapes may name dims (``{"input": ("batch", 3, 224, 224)}``), which ``grid`` sweeps:
    a static export swept by batch. A swept or fixed dim the model lacks is left out with a note;
    with ``request.default_batch``, an unbound batch dim that is not swept is bound to 1, with a note.
    ``request.memory_budget``: each row says whether it fits, and the largest ``request.memory_dim``
    value that fits is searched (:func:`onnxperf.predict.memory.largest_fitting`)."""
    if not grid:
        raise OptionError("sweep needs at least one --dim NAME=V1,V2,...")
    model = request.model
    loaded = model if isinstance(model, LoadedModel) else load(model)
    _check_swept(loaded, grid, dict(request.input_shapes))
    hw = request.hw
    spec = load_spec(hw) if isinstance(hw, (str, os.PathLike)) else hw  # loaded once for every row
    base = replace(request, model=loaded, hw=spec, llm=None)
    names = tuple(grid)
    rows = []
    lower = plain = False
    notes: list[str] = []
    combos = list(itertools.product(*(grid[n] for n in names)))
    for k, combo in enumerate(combos):
        advance(k, len(combos), "rows")
        values = tuple(zip(names, combo))
        sm = compose(replace(base, memory_budget=None).at(**dict(values)))
        rows.append(_row(sm, values, request.memory_budget))
        lower = lower or bool(sm.roofline is not None and sm.roofline.lower_bound)
        plain = plain or bool(sm.roofline is not None and sm.roofline.plain)
        for n in sm.notes:  # one note per dim, not one per swept value
            if is_binding_note(n) and not any(m.split("=")[0] == n.split("=")[0] for m in notes):
                notes.append(n)
    advance(len(combos), len(combos), "rows")
    fits: list[tuple[str, Polynomial | None, str]] = []
    # the fit points share the swept values' step (their gcd): a resolution swept at 160, 224, 320 is fitted
    # at multiples of 32, where a stride-32 network's sizes are exact polynomials (at R = 1, 2, 3 they are not)
    step = math.gcd(*(v for vals in grid.values() for v in vals))
    if formulas:
        def evaluate(b: dict[str, int]) -> list[int]:
            sm = compose(replace(base, hw=None, memory_budget=None).at(**b))
            if not (sm.totals.complete and sm.memory.complete):
                raise NotPolynomialError("some nodes stay without cost at the fit points; bind every dim")
            return _figures(sm)

        try:
            polys = fit_many(evaluate, names, degree=3, scale=step)
            for k, (name, p) in enumerate(zip(FIGURES, polys)):
                why = "" if p is not None else f"not a polynomial of degree ≤ 3 in {', '.join(names)}"
                # the swept rows check the fit too: a peak (a max over the graph's steps) can look
                # polynomial at the small fit points and change branch at the values asked about
                miss = next((r for r in rows if p is not None and r.complete
                             and p(dict(r.values)) != _row_figures(r)[k]), None)
                if miss is not None:
                    p, why = None, ("piecewise: the polynomial of the small fit points misses the value at "
                                    + ", ".join(f"{d}={v}" for d, v in miss.values) + " (a maximum that changes branch)")
                fits.append((name, p, why))
        except NotPolynomialError as exc:
            fits = [(name, None, str(exc)) for name in FIGURES]
    knee = None
    if len(names) == 1 and "batch" in names[0] and all(r.throughput_per_s for r in rows) and len(rows) > 1 \
            and all(r.costs_complete for r in rows):  # a partial row's throughput is only an upper bound
        at = knee_index([r.throughput_per_s for r in rows])
        knee = rows[at].values if at < len(rows) - 1 else None  # still rising at the last value: no knee seen
    largest = largest_fitting(base) if request.memory_budget is not None else None
    return SweepResult(str(getattr(loaded, "path", model)), names, tuple(sorted(request.dims.items())),
                       hw if hw is None or isinstance(hw, str) else getattr(hw, "id", str(hw)), tuple(rows),
                       tuple(fits), knee, request.precision, lower, tuple(notes), request.memory_budget, largest,
                       step if formulas else 1, latency_plain=plain)
