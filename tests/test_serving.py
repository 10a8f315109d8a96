"""The KV cache kept in place (issue 29, item 1): :func:`onnxperf.predict.serving.in_place` re-expresses a
decode step as a serving runtime runs it, node by node. Expected bytes are derived from the export's
config (models/corpus/make_nlp.py): Llama with 4 layers, 8 query heads, 2 KV heads (groups g = 4),
head dim d = 32, float32; bound to batch b = 4 and context C = 1024 (past C - 1, one new token)."""

from __future__ import annotations

import collections
from pathlib import Path

import pytest

from onnxperf.cost.request import Request
from onnxperf.graph.loader import load
from onnxperf.insights.llm import recognize
from onnxperf.predict.precision import priced
from onnxperf.predict.serving import APPEND_NOTE, MOVE_NOTE, READ_NOTE, in_place

CORPUS = Path(__file__).resolve().parents[1] / "models" / "corpus"
L, KV, G, D, F32 = 4, 2, 4, 32, 4
B, C = 4, 1024
S = B * KV * C * D * F32  # one layer's K (or V) cache after the step, stored once
TOKEN = B * KV * 1 * D * F32  # what one step appends to it
PAST = B * KV * (C - 1) * D * F32


@pytest.fixture(scope="module")
def step():
    ld = load(CORPUS / "llama_decode_legacy.onnx")
    st = recognize(ld)
    a = priced(Request(ld).at(**st.bindings(B, C - 1, 1)), empty_dims=True)
    return a, in_place(a, [c.name for c in st.caches])


def _saved(a, ip) -> dict[tuple[str, str], int]:
    out: dict[tuple[str, str], int] = collections.Counter()
    for x, y in zip(a.main_nodes, ip.main_nodes):
        d = (x.bytes_read + x.bytes_written) - (y.bytes_read + y.bytes_written)
        if d:
            out[(x.op_type, x.name.rsplit("/", 1)[-1])] += d
    return dict(out)


def test_the_append_reads_and_writes_the_new_token_only(step):
    a, ip = step
    appends = [n for n in ip.main_nodes if n.note == APPEND_NOTE]
    assert len(appends) == 2 * L
    assert all((n.bytes_read, n.bytes_written) == (TOKEN, TOKEN) for n in appends)


def test_the_copies_of_the_cache_run_no_work(step):
    """The GQA repeat (Unsqueeze -> Expand -> Reshape), the K transpose and a lone Concat of the past:
    fused attention reads the cache as stored and repeats grouped heads by indexing."""
    a, ip = step
    moves = [n for n in ip.main_nodes if n.note == MOVE_NOTE]
    assert all(n.status == "zero_by_design" and n.bytes_read == n.bytes_written == 0 for n in moves)
    assert collections.Counter(n.op_type for n in moves) == {"Unsqueeze": 2 * L, "Expand": 2 * L, "Reshape": 2 * L,
                                                            "Transpose": L, "Concat": 1}


def test_attention_reads_each_cache_once(step):
    a, ip = step
    readers = {n.key: n for n in ip.main_nodes if n.note.endswith(READ_NOTE)}
    assert len(readers) == 2 * L and {n.op_type for n in readers.values()} == {"MatMul"}
    for n in a.main_nodes:
        if n.key in readers:
            assert n.bytes_read - readers[n.key].bytes_read == (G - 1) * S  # read the g-times repeat before


def test_what_the_step_no_longer_moves_is_derived_from_the_config(step):
    """Per layer and per K and V: the Concat's 2S - 2·token, the Expand's (1 + g)·S and its shape
    input (5 int64), the attention MatMul's (g - 1)·S; per layer the transpose of the repeated K
    (2·g·S); once the lone Concat copying the first past (2·past). MACs and FLOPs do not change."""
    a, ip = step
    assert _saved(a, ip) == {
        ("Concat", "Concat"): 2 * PAST,
        ("Concat", "Concat_5"): L * (2 * S - 2 * TOKEN), ("Concat", "Concat_6"): L * (2 * S - 2 * TOKEN),
        ("Expand", "Expand"): L * ((1 + G) * S + 5 * 8), ("Expand", "Expand_1"): L * ((1 + G) * S + 5 * 8),
        ("MatMul", "MatMul"): L * (G - 1) * S, ("MatMul", "MatMul_1"): L * (G - 1) * S,
        ("Transpose", "Transpose_3"): L * 2 * G * S,
    }
    assert (ip.totals.macs, ip.totals.flops) == (a.totals.macs, a.totals.flops)
    assert a.totals.bytes_total - ip.totals.bytes_total == sum(_saved(a, ip).values())


def test_a_graph_without_the_cache_is_unchanged(step):
    a, _ = step
    assert in_place(a, []) is a


def test_the_cache_is_held_once(step):
    """As exported, the step holds the past (C - 1 tokens) and the present (C) of every cache, and the
    repeated copies; in place it holds each cache once, grown by the new token: the activation peak
    drops by at least the 2·L pasts."""
    from onnxperf.predict.memory import liveness
    from onnxperf.predict.serving import shared_buffers

    a, ip = step
    exported, kept = liveness(a), liveness(ip, shared_buffers(ip))
    assert exported.peak_bytes - kept.peak_bytes >= 2 * L * PAST
    # every present shares its past's buffer
    shared = shared_buffers(ip)
    def root(name: str) -> str:
        while name in shared:
            name = shared[name][0]
        return name

    presents = [k for k in shared if k.startswith("present.")]
    assert len(presents) == 2 * L and all(shared[k][1] for k in presents)
    assert {k: root(k) for k in presents} == {k: "past_key_values." + k.split(".", 1)[1] for k in presents}


# ---------------------------------------------------------------- --kv-runtime through the command line

def _llm(capsys, *extra):
    from onnxperf import cli
    import json

    capsys.readouterr()
    rc = cli.main(["summary", str(CORPUS / "llama_decode_legacy.onnx"), "--dim", f"batch={B}", "--context", str(C),
                   "--hw", "a100-80gb", "--format", "json", "--no-progress", *extra])
    out, err = capsys.readouterr()
    assert rc == 0, err
    return json.loads(out)["llm"]["figures"]


KV_PER_TOKEN = 2 * L * KV * D * F32  # K and V of every layer, per sequence: 2,048 B


@pytest.mark.slow
def test_the_runtime_model_is_stated_and_the_exported_step_is_warned_about(capsys):
    f = _llm(capsys)
    kv = f["kv_runtime"]
    assert kv["model"] == "exported" and kv["text"].startswith("as exported")
    assert kv["kv_moved_per_cache"] == kv["exported_kv_moved_per_cache"] == f["decode"]["kv_bytes"] / (KV_PER_TOKEN * B * C)
    assert kv["kv_moved_per_cache"] > 2
    assert any("--kv-runtime in-place" in n and f"moves {kv['kv_moved_per_cache']:.1f}× the KV cache" in n
               for n in _notes(capsys))


def _notes(capsys):
    from onnxperf import cli
    import json

    cli.main(["summary", str(CORPUS / "llama_decode_legacy.onnx"), "--dim", f"batch={B}", "--context", str(C),
              "--format", "json", "--no-progress"])
    return json.loads(capsys.readouterr().out)["llm"]["notes"]


@pytest.mark.slow
def test_in_place_reads_the_cache_once_and_appends_the_token(capsys):
    """decode.kv_bytes = kv_per_token·batch·context (read once) + 2·(2·L caches)·(KV·D·4) per sequence
    (the new token in and appended): 2048·batch·context + 4096·batch."""
    exported, kept = _llm(capsys), _llm(capsys, "--kv-runtime", "in-place")
    assert kept["kv_runtime"]["model"] == "in-place"
    assert kept["decode"]["kv_bytes"] == KV_PER_TOKEN * B * C + 2 * (2 * L) * (KV * D * F32) * B
    assert "error" not in kept["formulas"]["decode.kv_bytes"]  # a formula of batch and context
    assert kept["kv_runtime"]["exported_kv_moved_per_cache"] == exported["kv_runtime"]["kv_moved_per_cache"]
    # the same arithmetic, less traffic, less time, the cache held once
    assert kept["decode"]["macs"] == exported["decode"]["macs"]
    assert kept["decode"]["bytes"] < exported["decode"]["bytes"]
    assert kept["decode"]["latency_s"] < exported["decode"]["latency_s"]
    assert KV_PER_TOKEN * B * C <= kept["memory"]["step_activation_peak_bytes"] < exported["memory"]["step_activation_peak_bytes"]


@pytest.mark.slow
def test_every_output_says_which_runtime_model(capsys, tmp_path):
    from onnxperf import cli

    path = str(CORPUS / "llama_decode_legacy.onnx")
    for fmt in ("text", "md"):
        capsys.readouterr()
        assert cli.main(["summary", path, "--kv-runtime", "in-place", "--format", fmt, "--no-progress"]) == 0
        out = capsys.readouterr().out
        assert "KV runtime" in out and "in place (serving runtimes" in out and "as exported)" in out, fmt
    html = tmp_path / "r.html"
    assert cli.main(["report", path, "--kv-runtime", "in-place", "-o", str(html), "--no-progress"]) == 0
    assert 'id="llm-kv-runtime"' in html.read_text() and "the cache read once" in html.read_text()


def test_a_bad_runtime_model_is_one_line_exit_2(capsys, tmp_path):
    from onnxperf import cli

    path = str(CORPUS / "llama_decode_legacy.onnx")
    capsys.readouterr()
    assert cli.main(["summary", path, "--kv-runtime", "paged"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "in-place" in err
    budget = tmp_path / "b.toml"
    budget.write_text('context = 1024\nmax_kv_cache = "1GiB"\nkv_runtime = "paged"\n')
    assert cli.main(["check", path, "--budget", str(budget)]) == 2
    err = capsys.readouterr().err
    assert "kv_runtime" in err and "in-place" in err


@pytest.mark.slow
def test_check_evaluates_the_llm_limits_in_place(capsys, tmp_path):
    from onnxperf import cli
    import json

    path = str(CORPUS / "llama_decode_legacy.onnx")
    out = {}
    for runtime in ("exported", "in-place"):
        budget = tmp_path / f"{runtime}.toml"
        budget.write_text(f'hw = "a100-80gb"\ncontext = {C}\nkv_runtime = "{runtime}"\nmin_decode_tokens_per_s = 1\n')
        capsys.readouterr()
        assert cli.main(["check", path, "--budget", str(budget), "--format", "json", "--no-progress"]) == 0
        r = json.loads(capsys.readouterr().out)
        assert r["budget"]["kv_runtime"] == runtime
        row = next(x for x in r["models"][0]["budgets"] if x["key"] == "min_decode_tokens_per_s")
        assert ("KV cache in place" in row["message"]) == (runtime == "in-place")
        out[runtime] = row["actual"]
    assert out["in-place"] > out["exported"]
