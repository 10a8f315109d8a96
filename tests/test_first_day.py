"""What a first day with onnxperf finds, and what a hostile name does to a terminal (issue 28, items 6, 10,
11, 12, 14, 15): each fixed, each checked here through the command line or the Python API."""

from __future__ import annotations

import json
import unicodedata
from fractions import Fraction
from pathlib import Path

import onnx
import pytest
from onnx import helper

import onnxperf
from onnxperf import cli
from onnxperf.ui.numbers import binary_bytes, si
from tests.util import model, vi

ROOT = Path(__file__).resolve().parent.parent
RESNET = str(ROOT / "models" / "resnet50_torch.onnx")
CORPUS = ROOT / "models" / "corpus"


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = cli.main([*argv, "--no-progress"])
    out, err = capsys.readouterr()
    return rc, out, err


def _raw_controls(text: str) -> list[str]:
    return [c for c in text if c != "\n" and unicodedata.category(c) in ("Cc", "Cf")]


# ---------------------------------------------------------------------- item 6: sweep's names escaped

def test_sweep_escapes_the_models_op_types_and_domains(tmp_path, capsys):
    """A row left partial by an op no rule knows names it: control characters and bidi overrides from
    the model are escaped, never sent to the terminal."""
    dom, op = "\x1b]0;pwn\x07dom\u202e", "Op\x1b[2J\u202eX"
    m = model([helper.make_node("Relu", ["x"], ["h"]), helper.make_node(op, ["h"], ["y"], domain=dom)],
              [vi("x", ["n", 3])], [vi("y", None)], extra_opsets={dom: 1})
    p = tmp_path / "evil.onnx"
    onnx.save(m, str(p))
    rc, out, _ = _run(capsys, "sweep", str(p), "--dim", "n=2,4", "--no-formulas")
    assert rc == 0 and "not costed" in out and "\\x1b" in out
    assert _raw_controls(out) == []


# ---------------------------------------------------------------------- item 10: sweep over a dim the model lacks

def test_sweeping_a_dim_the_model_lacks_is_refused_with_the_input_shape_that_names_one(tmp_path, capsys):
    m = model([helper.make_node("Relu", ["input"], ["y"])], [vi("input", [1, 3, 8, 8])], [vi("y", None)])
    p = tmp_path / "static.onnx"
    onnx.save(m, str(p))
    rc, out, err = _run(capsys, "sweep", str(p), "--dim", "batch=1,2,4")
    assert rc == 2 and out == "" and err.count("\n") == 1
    assert "no dim named 'batch'" in err and "--input-shape input=batchx3x8x8" in err
    # the shape it points at works: the rows differ
    rc, out, _ = _run(capsys, "sweep", str(p), "--input-shape", "input=batchx3x8x8", "--dim", "batch=1,2,4",
                      "--format", "json")
    assert rc == 0 and [r["bytes"] for r in json.loads(out)["rows"]] == [2 * 4 * 192 * b for b in (1, 2, 4)]


def test_a_dim_name_close_to_the_models_says_which(capsys):
    rc, _, err = _run(capsys, "sweep", str(ROOT / "models" / "bert_encoder_torch.onnx"), "--dim", "seq=64,128",
                      "--dim", "batch=1")
    assert rc == 2 and "(did you mean 'sequence'?)" in err and err.count("\n") == 1


def test_a_dim_not_applied_by_summary_says_which_name_was_meant(capsys):
    """summary goes on without a --dim the model lacks (a loop over many exports), and its note names
    the dim meant."""
    rc, out, err = _run(capsys, "summary", str(ROOT / "models" / "bert_encoder_torch.onnx"), "--dim", "seq=128",
                        "--format", "json")
    assert rc == 0
    note = next(n for n in json.loads(out)["notes"] if n.startswith("--dim seq=128 not applied"))
    assert "(did you mean 'sequence'?)" in note and "symbolic dims: batch, sequence" in note


# ---------------------------------------------------------------------- item 11: the device's memory

def test_a_run_the_device_cannot_hold_is_said_with_the_batch_that_fits(capsys):
    """ResNet-50 at batch 4096 needs 36.8 GiB; a T4 has 16 GiB: a warning, the largest batch that fits
    (weights 97.4 MiB + 9,633,792 B per item of activation peak, exact), the latency marked."""
    rc, out, _ = _run(capsys, "summary", RESNET, "--dim", "batch=4096", "--hw", "t4", "--format", "json")
    d = json.loads(out)
    dev = d["device_memory"]
    assert rc == 0 and dev["fits"] is False and dev["total_bytes"] == d["memory"]["total_bytes"] > dev["capacity_bytes"]
    per_item, weights = 9633792, d["memory"]["weight_bytes"]
    assert dev["largest"]["value"] == (dev["capacity_bytes"] - weights) // per_item
    rc, text, _ = _run(capsys, "summary", RESNET, "--dim", "batch=4096", "--hw", "t4", "--color", "never")
    assert "Does not fit t4" in text and f"the largest batch that fits is {dev['largest']['value']:,}" in text
    assert "(cannot run: needs 36.8 GiB of the device's 16 GiB)" in text
    rc, out, _ = _run(capsys, "summary", RESNET, "--dim", "batch=1", "--hw", "t4", "--format", "json")
    assert json.loads(out)["device_memory"]["fits"] is True
    # with --precision the what-if's bytes decide: fp16 halves the weights and activations
    rc, out, _ = _run(capsys, "summary", RESNET, "--dim", "batch=2048", "--hw", "t4", "--precision", "fp16",
                      "--format", "json")
    assert json.loads(out)["device_memory"]["fits"] is True


# ---------------------------------------------------------------------- item 12: the API's defaults and repr

def test_the_api_binds_the_batch_as_the_command_line_does_and_prints_one_line():
    a = onnxperf.analyze(RESNET)
    assert dict(a.dims) == {"batch": 1} and a.totals.macs == 4_089_184_256
    assert repr(a).count("\n") == 0 and len(repr(a)) < 300 and "macs=4,089,184,256" in repr(a)
    b = onnxperf.analyze(RESNET, default_batch=False)
    assert b.totals.complete is False and "macs=unknown" in repr(b)


# ---------------------------------------------------------------------- item 14: LLM figures said as they are

def test_a_token_by_token_ttft_is_an_upper_estimate_and_the_default_context_is_said(capsys, monkeypatch):
    import onnxperf.insights.llm.figures as fig

    counted = []
    monkeypatch.setattr(fig, "advance", lambda done, total, what="": counted.append((done, total, what)))
    rc, out, _ = _run(capsys, "summary", str(CORPUS / "gpt2_decode_legacy.onnx"), "--llm", "--hw", "a100-80gb",
                      "--color", "never")
    assert rc == 0
    assert "context 2,048 (default: pass --context N for yours)" in out
    ttft = next(ln for ln in out.splitlines() if ln.strip().startswith("TTFT"))
    assert "≤ " in ttft and "upper estimate" in ttft
    steps = [c for c in counted if c[2] == "prefill steps"]
    assert steps[-1][:2] == (fig.PREFILL_SAMPLES, fig.PREFILL_SAMPLES)  # each evaluated step counted
    rc, out, _ = _run(capsys, "summary", str(CORPUS / "gpt2_decode_legacy.onnx"), "--llm", "--context", "256",
                      "--hw", "a100-80gb", "--format", "json")
    pre = json.loads(out)["llm"]["figures"]["prefill"]
    assert pre["time_is_upper_estimate"] is True and pre["method"] == "token by token"


# ---------------------------------------------------------------------- item 15: rough edges

@pytest.mark.parametrize("x, text", [(4.09e20, "409 EFLOP"), (999.6e12, "1 PFLOP"), (5.2e27, "5.2e+27 FLOP"),
                                     (999.4, "999 FLOP")])
def test_numbers_past_peta_keep_a_prefix(x, text):
    assert si(x, "FLOP") == text


@pytest.mark.parametrize("n, text", [(876188 * 2**40, "856 PiB"), (2**65, "32 EiB"), (2**90, "1.24e+27 B")])
def test_bytes_past_tebi_keep_a_prefix(n, text):
    assert binary_bytes(n) == text


def test_a_resolution_sweep_has_formulas_on_the_multiples_it_sweeps(capsys):
    """MobileNetV2 at R = 160, 224, 320 (multiples of 32, its total stride): fitted at multiples of 32,
    where its sizes are polynomials; MACs = c2·R² + c0 with c0 the classifier's 1280 x 1000."""
    rc, out, _ = _run(capsys, "sweep", str(ROOT / "models" / "mobilenetv2_torch.onnx"), "--input-shape",
                      "input=1x3xRxR", "--dim", "R=160,224,320", "--format", "json")
    d = json.loads(out)
    assert rc == 0 and d["formulas_hold_for_multiples_of"] == 32
    assert all("error" not in f for f in d["formulas"].values())
    macs = {tuple(sorted(t["exponents"].items())): Fraction(t["coefficient"]) for t in d["formulas"]["macs"]["terms"]}
    assert macs[(("R", 0),)] == 1280 * 1000
    for r in d["rows"]:
        assert r["macs"] == sum(c * r["R"] ** dict(e)["R"] for e, c in macs.items())


def test_the_trace_puts_the_nodes_without_work_on_their_own_thread_and_nests_scopes(tmp_path, capsys):
    """Swin-T on an A100: 92% of its nodes run no kernel (folded, views): on thread 2, so thread 1 holds
    the work; its name scopes are parent slices."""
    path = tmp_path / "swin.json"
    rc, _, _ = _run(capsys, "summary", str(CORPUS / "swin_t_torch.onnx"), "--dim", "batch=1", "--hw", "a100-80gb",
                    "--trace", str(path), "-o", str(tmp_path / "s.txt"))
    events = [e for e in json.loads(path.read_text())["traceEvents"] if e["ph"] == "X" and e["pid"] == 1]
    nodes = [e for e in events if "key" in e["args"]]
    idle = [e for e in nodes if e["tid"] == 2]
    assert rc == 0 and len(idle) > 0.9 * len(nodes) and all(e["dur"] == 0 for e in idle)
    assert all(e["dur"] > 0 for e in nodes if e["tid"] == 1)
    scopes = [e for e in events if e["cat"] == "scope"]
    assert any(e["name"] == "features" for e in scopes) and any(e["name"].count("/") == 2 for e in scopes)
