"""The GPU kernel model's constants per generation and the error bands (issue 29, item 2).

``benchmarks/gpu_realism.py`` names the device classes (GPU generations), splits each class's published
TensorRT rows into a fit half and a held-out half, fits the constants on the first and measures the band
(measured / predicted time, P10 and P90) on the second. Here: every GPU preset of a class carries that
class's constants and sources; bands are present exactly where held-out rows exist and name them; the split
never puts one row on both sides; and one class's band is recomputed from its few held-out rows through the
library's own prediction (not the fast path the script fits with).
"""

from __future__ import annotations

import statistics
from pathlib import Path

import numpy as np
import pytest

from onnxperf.hardware.files import list_presets, load_preset, load_spec
from onnxperf.predict.roofline import band_of

from .util import benchmark

ROOT = Path(__file__).resolve().parents[1]


def _bench():
    return benchmark("gpu_realism.py", "onnxperf_bench_gpu_realism_gen")


G = _bench()
GPU_PRESETS = sorted(p for p in list_presets() if "fusion.gpu" in load_preset(p).efficiency)


@pytest.fixture(scope="module")
def rows_and_halves():
    rows = G.entries()
    return rows, G.split(rows)


def test_every_gpu_preset_is_in_exactly_one_class():
    listed = [p for ps in G.CLASSES.values() for p in ps]
    assert sorted(listed) == GPU_PRESETS and len(set(listed)) == len(listed)
    assert set(G.DONORS) < set(G.CLASSES) and all(d in G.CLASSES and d not in G.DONORS for d, _ in G.DONORS.values())


@pytest.mark.parametrize("cls", list(G.CLASSES))
def test_a_class_shares_its_constants_and_sources(cls):
    """Every preset of a class: the same five constants with the same sources, naming the class they were
    fitted on (a donor class's for a class without published rows); no per-run overhead (no source gives one)."""
    presets = G.CLASSES[cls]
    first = load_preset(presets[0])
    fitted_on = G.DONORS[cls][0] if cls in G.DONORS else cls
    for p in presets:
        s = load_preset(p)
        assert {k: s.efficiency[k] for k in G.FIT_KEYS} == {k: first.efficiency[k] for k in G.FIT_KEYS}, p
        assert {k: s.efficiency_sources[k] for k in G.FIT_KEYS} == {k: first.efficiency_sources[k] for k in G.FIT_KEYS}
        for k in G.FIT_KEYS:
            assert f"the {fitted_on} class" in s.efficiency_sources[k], (p, k)
        assert "overhead_run_s" not in s.efficiency
        assert s.efficiency["default.compute"] == 0.5 and s.efficiency["fusion.gpu"] == 1
    if cls in G.DONORS:
        donor = load_preset(G.CLASSES[G.DONORS[cls][0]][0])
        assert {k: first.efficiency[k] for k in G.FIT_KEYS} == {k: donor.efficiency[k] for k in G.FIT_KEYS}


def test_the_split_puts_no_row_on_both_sides(rows_and_halves):
    """Fit and held-out halves are disjoint by construction (one label per row) and, within a batch sweep,
    alternate over the batch grid: a batch (every release of the table) is on one side only. Rows that
    measure other work, and the relabelled table, are on neither."""
    rows, halves = rows_and_halves
    side: dict[tuple, set] = {}
    for e in rows:
        if e["_id"] not in halves:
            assert G.not_comparable(e) is not None
            continue
        if e["scenario"] == "fixed_batch":
            side.setdefault((e["model"], e.get("seq_len"), e["device"], e["precision"], e["batch"]), set()).add(
                halves[e["_id"]])
    assert side and all(len(v) == 1 for v in side.values())
    conflict = [e for e in rows if e.get("device_label_conflict")]
    assert conflict and not any(e["_id"] in halves for e in conflict)
    for cls in G.DONORS:  # a donor class's own rows fit nothing of the class; its MLPerf rows fit the profile
        assert not any(halves[e["_id"]] == "fit" for e in rows
                       if e["_class"] == cls and e["_id"] in halves and not G.harness(e))


def test_the_mlperf_rows_alternate_within_each_class_and_fit_only_the_profile(rows_and_halves):
    """NVIDIA's MLPerf harness rows (every MLPerf scenario) alternate fit / held-out within each class in
    (device, scenario, source) order; the classes' constants are fitted without them."""
    rows, halves = rows_and_halves
    by_class: dict[str, list[str]] = {}
    for e in rows:
        if e["_id"] in halves and G.harness(e):
            by_class.setdefault(e["_class"], []).append(halves[e["_id"]])
    assert {"turing", "ampere", "ampere-jetson", "ada", "hopper"} <= set(by_class)
    for cls, sides in by_class.items():
        assert sides.count("fit") - sides.count("held") in (0, 1), cls
    fitted = G.fit(rows, halves, "hopper", G.shipped_l2())  # Hopper: MLPerf rows only
    assert fitted["fit_rows"] == 0 and {k: fitted[k] for k in G.FIT_KEYS} == G.A100
    assert all("MLPerf harness" in why for why in fitted["pinned"].values())


def test_bands_exactly_where_held_out_rows_exist(rows_and_halves):
    """A class with held-out rows: every preset has band.p10 <= band.p90 and band.points = their count, the
    source naming the class, the held-out rows and the files; a class without: no band (outputs say so)."""
    rows, halves = rows_and_halves
    held: dict[str, list] = {}
    for e in rows:
        if halves.get(e["_id"]) == "held" and not G.harness(e):  # the harness rows are the profile's band
            held.setdefault(e["_class"], []).append(e)
    assert {"turing", "ampere", "ada"} <= set(held) and "hopper" not in held
    for cls, presets in G.CLASSES.items():
        for p in presets:
            s = load_preset(p)
            band = band_of(s)
            if cls not in held:
                assert band is None, p
                continue
            assert band is not None and 0 < band.p10 <= band.p90 and band.points == len(held[cls]), p
            src = s.efficiency_sources["band.p10"]
            assert f"{len(held[cls])} held-out" in src and f"{cls} class" in src and "gpu_realism.py --bands" in src
            assert all(f in src for f in {e["_file"] for e in held[cls]})


def test_the_harness_band_recomputed_from_its_rows(rows_and_halves):
    """The mlperf profile's band: its held-out rows (MLPerf ResNet-50 of every class) predicted through the
    library's full plan under ``--hw DEVICE:mlperf``, measured / predicted time per item; the fast path the
    fit uses gives the same ratios."""
    rows, halves = rows_and_halves
    held = [e for e in rows if G.harness(e) and halves.get(e["_id"]) == "held"]
    assert len(held) >= 30 and {e["_class"] for e in held} >= {"ampere", "ampere-jetson", "ada", "hopper"}
    ev = G.evaluate(held, lambda e, b: G.predict_latency(e["model"], b, G._seq(e), e["device"], e["precision"],
                                                         runtime="mlperf"))
    ratios = [r["_ratio"] for r in ev]
    band = band_of(load_spec("jetson-orin:mlperf"))
    assert band is not None and band.points == len(ratios)
    assert band.p10 == pytest.approx(round(float(np.percentile(ratios, 10)), 2))
    assert band.p90 == pytest.approx(round(float(np.percentile(ratios, 90)), 2))
    assert band.p10 <= statistics.median(ratios) <= band.p90
    assert band_of(load_preset("jetson-orin")) is None  # no row outside the harness: the class has no band
    for r in ev:
        assert G.fast_ratio(r, G.row_constants(r), G.shipped_l2())[0] == pytest.approx(r["_ratio"], rel=1e-9)