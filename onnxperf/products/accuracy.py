"""Error figures of predicted vs measured times: pure functions on two sequences.

* end-to-end error: (predicted − measured) / measured of the totals;
* per-node absolute percentage error |p − m| / m, its median (MdAPE), and the share of nodes
  within ±10% and ±25%, and the share of measured *time* in nodes within ±25% (a model of many
  µs-sized nodes, whose profiled times carry the profiler's own cost per event, is judged
  by its count figures on nodes that hardly weigh);
* Spearman's rank correlation ρ between predicted and measured node times (average ranks for
  ties), which says whether the prediction orders the nodes right even where it misses the scale.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from onnxperf.ui.numbers import seconds

#: tolerance on the ±10%/±25% bands, so 2.2 vs 2.0 counts as within 10%
_EPS = 1e-9


@dataclass(frozen=True)
class ErrorFigures:
    n: int
    predicted_total_s: float
    measured_total_s: float
    end_to_end_error: float | None  # signed fraction
    median_ape: float | None
    within_10: float | None
    within_25: float | None
    spearman: float | None
    #: share of the measured time that lies in nodes predicted within ±25%
    within_25_time: float | None = None

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def rankdata(x: Sequence[float]) -> np.ndarray:
    """Ranks 1..n, ties given their average rank (as scipy.stats.rankdata(method='average'))."""
    a = np.asarray(x, dtype=float)
    order = np.argsort(a, kind="mergesort")
    ranks = np.empty(len(a), dtype=float)
    sorted_a = a[order]
    i = 0
    while i < len(a):
        j = i
        while j + 1 < len(a) and sorted_a[j + 1] == sorted_a[i]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def spearman(p: Sequence[float], m: Sequence[float]) -> float | None:
    """Pearson correlation of the ranks; None with fewer than 3 pairs or a constant side."""
    if len(p) < 3:
        return None
    rp, rm = rankdata(p), rankdata(m)
    if rp.std() == 0 or rm.std() == 0:
        return None
    return float(np.corrcoef(rp, rm)[0, 1])


def error_figures(predicted: Sequence[float], measured: Sequence[float]) -> ErrorFigures:
    """Compare per-node (or per-group) times; pairs with measured time 0 are left out of the
    percentage errors (they cannot be expressed as a ratio) but stay in the totals."""
    if len(predicted) != len(measured):
        raise ValueError("predicted and measured must have the same length")
    pt, mt = float(sum(predicted)), float(sum(measured))
    pairs = [(p, m) for p, m in zip(predicted, measured) if m > 0]
    ape = [abs(p - m) / m for p, m in pairs]
    return ErrorFigures(
        n=len(predicted), predicted_total_s=pt, measured_total_s=mt,
        end_to_end_error=None if mt == 0 else (pt - mt) / mt,
        median_ape=float(np.median(ape)) if ape else None,
        within_10=(sum(e <= 0.10 + _EPS for e in ape) / len(ape)) if ape else None,
        within_25=(sum(e <= 0.25 + _EPS for e in ape) / len(ape)) if ape else None,
        spearman=spearman([p for p, _ in pairs], [m for _, m in pairs]),
        within_25_time=(sum(m for (p, m), e in zip(pairs, ape) if e <= 0.25 + _EPS) / sum(m for _, m in pairs))
        if ape else None,
    )


#: an end-to-end error beyond this (either way) is a warning: the band the predicted-vs-measured chart draws
LARGE_ERROR = 0.25


def large_error_warning(e: float | None, pred: float | None, real: float | None, calibrated: bool) -> str | None:
    """The warning for an end-to-end error ``e`` beyond ±:data:`LARGE_ERROR` (None within it)."""
    if e is None or abs(e) <= LARGE_ERROR:
        return None
    figures = f" (predicted {seconds(pred)}, measured {seconds(real)})" if pred and real else ""
    if e < 0 and not calibrated:
        hint = ("a plain roofline is an estimate with nothing fused or overlapped; `onnxperf hw calibrate -o local.toml`, then "
                "--hw local.toml, fits this machine's efficiencies")
    else:
        hint = "check that --hw describes this machine (`onnxperf hw calibrate -o local.toml` measures it)"
    return (f"The prediction is {abs(e):.0%} {'below' if e < 0 else 'above'} the measured end-to-end "
            f"latency{figures}, more than ±{LARGE_ERROR:.0%}: {hint}.")
