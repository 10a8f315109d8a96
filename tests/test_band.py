"""Error bands (issue 29, item 2): a predicted time of the GPU kernel model is given with the band its
device class showed on held-out published measurements ("3.2 ms, -20%/+35% on 40 published points"),
read from the spec's ``band.*`` figures; ``band.llm.*`` for decoder LLMs. A spec without one says so."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from onnxperf import cli
from onnxperf.hardware import load_spec
from onnxperf.predict.roofline import Band, band_of

from .util import benchmark

ROOT = Path(__file__).resolve().parents[1]
RESNET = str(ROOT / "models" / "resnet50_torch.onnx")
LLAMA = str(ROOT / "models" / "corpus" / "llama_decode_legacy.onnx")


def _spec_with_band(tmp_path: Path) -> Path:
    text = subprocess.run([sys.executable, "-m", "onnxperf", "hw", "show", "v100-sxm2-32gb", "--format", "toml"],
                          capture_output=True, text=True, check=True).stdout
    text = text.replace("[efficiency]\n", "[efficiency]\n\"band.p10\" = 0.8\n\"band.p90\" = 1.35\n\"band.points\" = 40\n"
                        "\"band.llm.p10\" = 0.9\n\"band.llm.p90\" = 1.5\n\"band.llm.points\" = 12\n", 1)
    text = text.replace("[efficiency_sources]\n", "[efficiency_sources]\n"
                        "\"band.p10\" = \"test: 40 held-out rows\"\n\"band.p90\" = \"test\"\n\"band.points\" = \"test\"\n"
                        "\"band.llm.p10\" = \"test: 12 held-out decoder rows\"\n\"band.llm.p90\" = \"test\"\n"
                        "\"band.llm.points\" = \"test\"\n", 1)
    p = tmp_path / "v100-band.toml"
    p.write_text(text)
    return p


def test_a_band_is_a_pair_of_ratios_around_the_prediction():
    b = Band(0.8, 1.35, 40, "src")
    assert b.around(2e-3) == pytest.approx((1.6e-3, 2.7e-3))
    assert b.text() == "-20%/+35% on 40 published points"
    assert band_of(load_spec("epyc-9654")) is None  # a CPU preset: no published GPU rows


def test_every_output_gives_the_band(tmp_path, capsys):
    spec = str(_spec_with_band(tmp_path))
    capsys.readouterr()
    assert cli.main(["summary", RESNET, "--hw", spec, "--format", "json", "--no-progress"]) == 0
    r = json.loads(capsys.readouterr().out)["roofline"]
    band = r["latency_band"]
    assert band["low_s"] == pytest.approx(0.8 * r["latency_s"]) and band["high_s"] == pytest.approx(1.35 * r["latency_s"])
    assert band["points"] == 40 and band["source"] == "test: 40 held-out rows"
    assert cli.main(["summary", RESNET, "--hw", spec, "--no-progress"]) == 0
    assert "(-20%/+35% on 40 published points)" in capsys.readouterr().out
    assert cli.main(["summary", RESNET, "--hw", spec, "--format", "md", "--no-progress"]) == 0
    assert "(-20%/+35% on 40 published points)" in capsys.readouterr().out
    page = tmp_path / "r.html"
    assert cli.main(["report", RESNET, "--hw", spec, "-o", str(page), "--no-progress"]) == 0
    assert "-20%/+35% on 40 published points" in page.read_text()


def test_the_llm_figures_take_the_decoder_band(tmp_path, capsys):
    spec = str(_spec_with_band(tmp_path))
    capsys.readouterr()
    assert cli.main(["summary", LLAMA, "--llm", "--hw", spec, "--format", "json", "--no-progress"]) == 0
    f = json.loads(capsys.readouterr().out)["llm"]["figures"]
    d = f["decode"]
    assert d["latency_band"]["points"] == 12
    assert d["latency_band"]["low_s"] == pytest.approx(0.9 * d["latency_s"])
    assert f["prefill"]["latency_band"]["high_s"] == pytest.approx(1.5 * f["prefill"]["latency_s"])
    assert cli.main(["summary", LLAMA, "--llm", "--hw", spec, "--no-progress"]) == 0
    assert "per token (-10%/+50% on 12 published points)" in capsys.readouterr().out


def test_without_a_band_the_kernel_model_says_so(capsys):
    """A GPU preset with no held-out point: its figures are predictions, never called a bound, and the
    output says no band was measured."""
    capsys.readouterr()
    assert cli.main(["summary", LLAMA, "--llm", "--hw", "b200", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "no error band: no published" in out and "lower bound on time" not in out


def test_the_decoder_bands_in_the_presets_are_sourced_and_come_from_the_compared_rows():
    """band.llm.* (benchmarks/llm_bands.py) sits in the presets of the classes that have published decoder rows,
    with a source naming the rows; recomputing from the results file gives what the presets hold."""
    import sys as _sys

    from onnxperf.hardware import list_presets, load_preset

    _sys.path.insert(0, str(ROOT / "benchmarks"))  # llm_bands reads gpu_realism's classes beside it
    lb = benchmark("llm_bands.py", "llm_bands")
    CLASS_OF = lb.CLASS_OF
    computed = lb.bands(lb.rows(lb.RESULTS.read_text()))
    seen = 0
    for p in list_presets():
        s = load_preset(p)
        b = band_of(s, "llm")
        cls = CLASS_OF.get(p)
        if cls in computed:
            seen += 1
            assert b is not None and (b.p10, b.p90, b.points) == (computed[cls]["p10"], computed[cls]["p90"],
                                                                   computed[cls]["points"]), p
            assert "published decoder rows" in b.source and b.p10 < b.p90
        else:
            assert b is None, p
    assert seen >= 10
