"""benchmarks/normalization.py: the variants of validate's state normalization, re-evaluated on kept blocks."""

from __future__ import annotations

import json

import onnxperf
import pytest

from onnxperf.hardware import load_spec
from onnxperf.predict.roofline import roofline
from onnxperf.products.validate.runner import Probe
from onnxperf.products.validate.state import reference_of, scaled_spec

from .util import BENCHMARKS, benchmark

ROOT = BENCHMARKS.parent

SPEC = "benchmarks/measured/calibrated-zen3-20261207-gru.toml"


@pytest.fixture(scope="module")
def nb():
    return benchmark("normalization.py", "onnxperf_bench_normalization")


def test_a_variant_raises_each_ratio_to_its_power(nb):
    spec = load_spec(str(ROOT / SPEC))
    ref = reference_of(spec)
    state = Probe(ref.triad_bytes_per_s * 0.8, ref.matmul_flops_per_s * 0.5, ref.dispatch_s_per_node * 4, None)
    assert nb.variant_spec(spec, state, ref, (1, 1, 1)) == scaled_spec(spec, state, ref)
    assert nb.variant_spec(spec, state, ref, (0, 0, 0)) == scaled_spec(spec, ref, ref)
    half = nb.variant_spec(spec, state, ref, (1, 0.5, 0.5))
    assert half.peak_for("float32") == pytest.approx(spec.peak_for("float32") * 0.5 ** 0.5)
    assert half.efficiency["overhead_s"] == pytest.approx(spec.efficiency["overhead_s"] * 2)
    assert half.memory_bandwidth_bytes_per_s == pytest.approx(spec.memory_bandwidth_bytes_per_s * 0.8)


def test_analyze_counts_the_pairs_an_hour_apart(nb, tmp_path, capsys):
    """Two runs of one model 60 minutes apart whose blocks measured 1.10x and 1.00x validate's prediction at
    their state: the normalized errors are -9.1% and 0% (9.1 points apart: no repeat), and a run an hour later
    at 1.00x again repeats the second. A block whose stored prediction is not this code's stops the analysis."""
    spec = load_spec(str(ROOT / SPEC))
    ref = reference_of(spec)
    (m,) = [x for x in nb.accuracy.suite() if x.name == "mobilenetv2_torch.onnx"]
    a = onnxperf.analyze(m.path, dims=dict(m.dims))
    state = Probe(ref.triad_bytes_per_s * 0.9, ref.matmul_flops_per_s * 1.1, ref.dispatch_s_per_node, None)
    pred = roofline(a, scaled_spec(spec, state, ref)).latency_s

    def run(label, started, slower, predicted=pred):
        w = {"measured_s": pred * slower, "state": state.to_dict(), "dropped": None, "predicted_s": predicted}
        p = tmp_path / f"{label}.json"
        p.write_text(json.dumps({"label": label, "started": started, "spec_file": SPEC, "spec": spec.id,
                                 "models": [{"model": m.name, "windows": [w, w]}]}))
        return str(p)

    files = [run("a", "2026-12-07 10:00:00 UTC", 1.10), run("b", "2026-12-07 11:00:00 UTC", 1.00),
             run("c", "2026-12-07 12:00:00 UTC", 1.00)]
    assert nb.main(["analyze", *files]) == 0
    out = capsys.readouterr().out
    row = next(ln for ln in out.splitlines() if ln.startswith("| the ratios themselves |"))
    assert "| 1 of 3 | 1 of 3 |" in row  # a-b 9.1 points, a-c 9.1, b-c 0
    assert f"| {m.name} | {-1 / 11 * 100:+.1f} (" in out
    assert nb.main(["analyze", "--validate-only", *files]) == 0
    only = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("| ") and " | 1, 1, 1 | " in ln]
    assert [ln.split(" | ")[0] for ln in only] == [f"| {nb.VALIDATE}"]  # validate's own normalization alone
    with pytest.raises(SystemExit, match="not the code that ran"):
        nb.main(["analyze", run("d", "2026-12-07 13:00:00 UTC", 1.0, predicted=pred * 1.01)])


def test_the_unstable_table_asks_which_probe_tells_a_stray_run(nb):
    """Four runs of one model: the fourth strays (its error 20 points from the others' median 0) and moved the
    matrix product 30% between its blocks, the others 5%; every run moved the dispatch probe 50%, the first
    90%. The arithmetic control flags the stray run alone (AUC 1); the dispatch probe flags all four and its
    move tells nothing (AUC 1/3: the stray run moved it less than the first)."""
    labels, name = ["a", "b", "c", "d"], "m.onnx"
    err = {(nb.VALIDATE, lab, name): e for lab, e in zip(labels, (0.0, 0.0, 0.0, 0.2))}
    assert nb.stray(err, labels, [name]) == pytest.approx({("a", name): 0.0, ("b", name): 0.0, ("c", name): 0.0,
                                                          ("d", name): 0.2})
    moves = {(lab, name): {"triad_bytes_per_s": 0.02, "matmul_flops_per_s": mm, "dispatch_s_per_node": d}
             for lab, mm, d in zip(labels, (0.05, 0.05, 0.05, 0.3), (0.9, 0.5, 0.5, 0.5))}
    rows = {ln.split(" | ")[0].lstrip("| "): ln for ln in nb.unstable_section(err, moves, labels, [name])
            if ln.startswith("| ")}
    assert rows["arithmetic"] == "| arithmetic | 5% | 1.00 | 1 (1) | 3 (0) | 1 (1) | 3 (0) |"
    assert rows["bandwidth or arithmetic (validate)"].endswith("| 1 (1) | 3 (0) |")
    assert rows["dispatch"] == "| dispatch | 50% | 0.33 | 4 (1) | 0 (0) | 4 (1) | 0 (0) |"
    assert nb.auc([1.0, 1.0], [True, True]) is None
