"""benchmarks/control_tracking.py: the spread a stand-in leaves in a model's log time, on constructed rows."""

from __future__ import annotations

import json

import numpy as np
import pytest

from .util import benchmark


@pytest.fixture(scope="module")
def ct():
    return benchmark("control_tracking.py", "onnxperf_bench_control_tracking")


def _rows(ct, n: int = 60) -> list[dict]:
    """A machine whose state s (log) moves each iteration: the conv case's time is exp(s), the matrix product's
    rate exp(-s/2) (it moves half as much), the other cases and the probes' other figures stay; every model's time
    moves as the conv case's, times a fixed factor."""
    rng = np.random.default_rng(0)
    out = []
    for i, s in enumerate(rng.normal(0, 0.1, n)):
        probe = {"triad_bytes_per_s": 25e9, "matmul_flops_per_s": 150e9 * np.exp(-s / 2), "dispatch_s_per_node": 1e-6}
        controls = {k: 1e-3 for k in ct.CONTROLS} | {"conv3x3_64": 1.4e-3 * np.exp(s)}
        out.append({"t": float(i), "probe": probe, "controls": controls,
                    "models": {m: 0.01 * (k + 1) * np.exp(s) for k, m in enumerate(ct.MODELS)}})
    return out


def test_a_stand_in_that_moves_as_the_model_leaves_no_spread(ct):
    """The conv case at e = 1 takes all of the state out (spread 0); the matrix product moves half as much as the
    model, so at e = 1 half the spread is left and at e = 1/2 three quarters; a case that does not move leaves the
    raw spread. The split-half fit of the probes explains everything (the model's log is linear in one probe's)."""
    rows = _rows(ct)
    f = ct.figures(rows, 1)
    for m in ct.MODELS:
        raw = f[m]["raw"]
        assert raw > 0.05
        assert f[m]["conv3x3_64, e=1"] == pytest.approx(0.0, abs=1e-12)
        assert f[m]["matrix product (probe), e=1"] == pytest.approx(raw / 2)
        assert f[m]["matrix product (probe), e=1/2"] == pytest.approx(raw * 3 / 4)
        assert f[m]["mul_4m, e=1"] == pytest.approx(raw)
        assert f[m]["R² probes"] == pytest.approx(1.0)
    g = ct.figures(rows, 6)
    assert g[ct.MODELS[0]]["points"] == 10 and g[ct.MODELS[0]]["conv3x3_64, e=1"] == pytest.approx(0.0, abs=1e-12)


def test_the_page_rederives_from_its_rows(ct, tmp_path, capsys):
    rows = _rows(ct, 90)
    data = tmp_path / "rows.json"
    data.write_text(json.dumps({"started": "2026-12-08 00:21 UTC", "seconds": 60, "rows": rows}))
    out = tmp_path / "page.md"
    assert ct.main(["--from-json", str(data), "--out", str(out)]) == 0
    text = out.read_text()
    assert "## Medians of 30 iterations (3 points)" in text and "| conv3x3_64, e=1 | 0.000 | 0.000 | 0.000 |" in text
    assert text == capsys.readouterr().out
