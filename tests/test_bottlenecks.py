"""Bottlenecks grouped by op type, by repeated block and by fusion opportunity (onnxperf.insights.bottlenecks),
in the summary, the report and compare's predicted-latency split (issue 19, point 4).

Expected values come from named dims on tiny models built here, through the roofline formula
t = max(FLOPs / π, bytes / β) of a hand-made spec; then the shipped exports: ResNet-50 on an RTX 3090
with the plain roofline (Relu + Add are a third of the time, and every GPU runtime fuses them) and
with the GPU kernel model (already fused), a BERT encoder, and two ResNet-50 exports compared.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from onnx import helper

from onnxperf import cli
from onnxperf.insights.bottlenecks import bottlenecks as _groups


def bottlenecks(sm):
    """The groups of an analysis, from its costs and its execution plan."""
    return _groups(sm, sm.roofline, sm.spec, sm.precision)
from onnxperf.products.compare import compare
from onnxperf.products.compare.render import RENDERERS as COMPARE
from onnxperf.products.render.report import render_html, render_json, render_md
from onnxperf.products.report import build_report
from onnxperf.analysis.compose import summarize

from .report_util import summary_of
from .util import const, model, vi

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "models"
RESNET = str(MODELS / "resnet50_torch.onnx")
BERT = str(MODELS / "bert_encoder_torch.onnx")

# the residual model: REPEATS blocks of Conv 1x1 (C -> C, no bias) -> Relu -> Add(x), on [1, C, H, W]
C, H, W, REPEATS = 64, 8, 8, 3
N = C * H * W  # elements of every activation
F = 4  # bytes per float32 element


class Spec:
    """A plain roofline with ridge π/β = 1 FLOP/B: the 1x1 conv (10.7 FLOP/B) is compute-bound,
    Relu (1/8 FLOP/B) and Add (1/12 FLOP/B) memory-bound."""

    id = "ridge-1"
    name = "ridge 1 FLOP/B"
    kind = "gpu"
    memory_bandwidth_bytes_per_s = 1e12
    efficiency: dict = {}

    def peak_for(self, dtype: str) -> float:
        return 1e12


class KernelSpec(Spec):
    """The same roofs with the GPU kernel model on (fusion.gpu), nothing else."""

    id = "ridge-1-kernels"
    efficiency = {"fusion.gpu": 1.0}


def residual_model(names: bool = True, unsupported: bool = False):
    nodes, inits = [], []
    x = "x"
    for i in range(REPEATS):
        p = f"/layer1/block.{i}" if names else ""
        inits.append(const(f"w{i}", [C, C, 1, 1]))
        nodes += [helper.make_node("Conv", [x, f"w{i}"], [f"c{i}"], name=f"{p}/conv/Conv" if names else ""),
                  helper.make_node("Relu", [f"c{i}"], [f"r{i}"], name=f"{p}/relu/Relu" if names else ""),
                  helper.make_node("Add", [f"r{i}", x], [f"a{i}"], name=f"{p}/Add" if names else "")]
        x = f"a{i}"
    extra = {}
    if unsupported:
        nodes.append(helper.make_node("Mystery", [x], ["y"], name="/head/Mystery", domain="example.org"))
        x, extra = "y", {"example.org": 1}
    return model(nodes, [vi("x", [1, C, H, W])], [vi(x, None)], inits, extra_opsets=extra)


# time of each node of a block on Spec, from the roofline formula and named dims
T_CONV = 2 * C * C * H * W / 1e12  # FLOPs = 2 MACs, compute-bound
T_RELU = 2 * N * F / 1e12          # reads and writes N floats, memory-bound
T_ADD = 3 * N * F / 1e12           # reads two, writes one
T_BLOCK = T_CONV + T_RELU + T_ADD
BYTES_CONV = (2 * N + C * C) * F
BYTES_BLOCK = BYTES_CONV + 2 * N * F + 3 * N * F


def groups(m, spec=Spec()):
    return bottlenecks(summary_of(m, None, spec))


# ----------------------------------------------------------------------------------- tiny models

def test_op_type_shares_from_the_roofline_formula():
    b = groups(residual_model())
    assert b.prediction == "plain roofline" and not b.lower_bound and not b.uncosted  # an estimate, not a bound
    assert b.node_time_s == pytest.approx(REPEATS * T_BLOCK) and b.run_overhead_s == 0
    ops = {g.op_type: g for g in b.by_op_type}
    assert [g.op_type for g in b.by_op_type] == ["Conv", "Add", "Relu"]  # most time first
    for op, t, nbytes, bound in (("Conv", T_CONV, BYTES_CONV, "compute"), ("Relu", T_RELU, 2 * N * F, "memory"),
                                 ("Add", T_ADD, 3 * N * F, "memory")):
        g = ops[op]
        assert g.nodes == REPEATS and g.time_s == pytest.approx(REPEATS * t) and g.bound == bound
        assert g.share == pytest.approx(t / T_BLOCK) and g.bytes == REPEATS * nbytes
        assert g.bytes_share == pytest.approx(nbytes / BYTES_BLOCK)
    assert sum(g.share for g in b.by_op_type) == pytest.approx(1.0)  # 100% of the node time
    assert sum(g.bytes_share for g in b.by_op_type) == pytest.approx(1.0)
    # one action per op type and bound, never one sentence for every row
    assert "lower precision" in ops["Conv"].action and "fuse into the producer" in ops["Relu"].action
    assert len({g.action for g in b.by_op_type}) >= 2


def test_blocks_from_name_prefixes_find_the_three_repeats():
    b = groups(residual_model())
    assert b.block_method == "names"
    assert [x.name for x in b.blocks] == [f"layer1/block.{i}" for i in range(REPEATS)]
    assert all(x.nodes == 3 and x.time_s == pytest.approx(T_BLOCK) for x in b.blocks)
    [kind] = b.block_kinds
    assert kind.count == REPEATS and kind.label == "layer1/block.*"
    assert dict(kind.ops) == {"Conv": 1, "Relu": 1, "Add": 1}
    assert kind.share == pytest.approx(1.0) and kind.share_each == pytest.approx(1 / REPEATS)
    assert kind.top_op == "Conv" and kind.top_op_share == pytest.approx(T_CONV / T_BLOCK)
    assert f"counts {REPEATS} times" in kind.action
    assert b.outside[:3] == (0, 0.0, 0.0)


def test_blocks_from_residual_merges_when_names_carry_no_hierarchy():
    b = groups(residual_model(names=False))
    assert b.block_method == "structure"
    assert len(b.blocks) == REPEATS and [k.count for k in b.block_kinds] == [REPEATS]
    assert [(x.first_key, x.last_key) for x in b.blocks] == [(str(3 * i), str(3 * i + 2)) for i in range(REPEATS)]


def test_epilogue_charged_by_a_plain_roofline_and_assumed_by_the_kernel_model():
    plain = groups(residual_model())
    [o] = plain.opportunities
    assert (o.id, o.islands, o.nodes, o.assumed) == ("epilogue", REPEATS, 2 * REPEATS, "no")
    assert o.time_s == pytest.approx(REPEATS * (T_RELU + T_ADD)) and o.saving_s == pytest.approx(o.time_s)
    assert o.share == pytest.approx((T_RELU + T_ADD) / T_BLOCK)
    assert "charges them" in o.action and "saves up to" in o.action

    fused = groups(residual_model(), KernelSpec())
    assert fused.prediction == "GPU kernel model"
    [o] = fused.opportunities
    assert (o.assumed, o.assumed_islands, o.saving_s) == ("yes", REPEATS, 0.0)
    assert "already fused" in o.action
    ops = {g.op_type: g for g in fused.by_op_type}
    assert ops["Relu"].fused == ops["Add"].fused == REPEATS and "already fused" in ops["Relu"].action


def test_uncosted_nodes_are_counted_and_named_never_zero():
    b = groups(residual_model(unsupported=True))
    assert [(u.op_type, u.status) for u in b.uncosted] == [("Mystery", "unsupported")]
    assert b.lower_bound and any("lower bound" in n for n in b.notes)
    mystery = next(g for g in b.by_op_type if g.op_type == "Mystery")
    assert mystery.uncosted == 1 and mystery.share is None and mystery.bytes_share is None
    assert sum(g.share for g in b.by_op_type if g.share is not None) == pytest.approx(1.0)
    text = "\n".join(_summary_lines(b))
    assert "Not timed: 1 nodes (#9 Mystery)" in text


def _summary_lines(b):
    from onnxperf.products.render.summary import bottleneck_lines

    return bottleneck_lines(b.to_dict())


# --------------------------------------------------------------------------------------- ResNet-50

@pytest.fixture(scope="module")
def resnet_plain():
    return summarize(RESNET, dims={"batch": 1}, hw="rtx3090:plain")


@pytest.fixture(scope="module")
def resnet_gpu():
    return summarize(RESNET, dims={"batch": 1}, hw="rtx3090")


def test_resnet50_plain_relu_and_add_are_a_third_and_every_gpu_runtime_fuses_them(resnet_plain):
    b = bottlenecks(resnet_plain)
    rl = resnet_plain.roofline
    by = {o.op_type: o for o in rl.by_op_type}
    ops = {g.op_type: g for g in b.by_op_type}
    assert sum(g.nodes for g in b.by_op_type) == 122
    for op in by:
        assert ops[op].time_s == pytest.approx(by[op].time_s) and ops[op].share == pytest.approx(by[op].share)
    [o] = b.opportunities
    assert o.id == "epilogue" and dict(o.ops) == {"Relu": 49, "Add": 16} and o.assumed == "no"
    assert o.time_s == pytest.approx(by["Relu"].time_s + by["Add"].time_s)  # every Relu and Add follows a Conv
    assert 0.34 < o.share < 0.36 and o.saving_s == pytest.approx(o.time_s)  # "35%"
    assert "GPU runtimes" in o.action and "--hw rtx3090 models the fusion" in o.action
    kinds = [(k.count, k.label, dict(k.ops)) for k in b.block_kinds]
    assert kinds == [(12, "layer*/layer*.*", {"Conv": 3, "Relu": 3, "Add": 1}),
                     (4, "layer*/layer*.0", {"Conv": 4, "Relu": 3, "Add": 1})]
    assert b.outside[0] == 6  # stem conv, relu, maxpool; pool, flatten, fc
    assert sum(k.share for k in b.block_kinds) + b.outside[2] == pytest.approx(1.0)


def test_resnet50_on_the_kernel_model_the_epilogues_are_already_fused(resnet_gpu):
    b = bottlenecks(resnet_gpu)
    assert b.prediction == "GPU kernel model"
    [o] = b.opportunities
    assert o.assumed == "yes" and o.saving_s == 0 and "already fused into the Conv kernels" in o.action
    assert o.share < 0.03  # what is left: the fused kernels' output write
    ops = {g.op_type: g for g in b.by_op_type}
    # at batch 1 the Conv kernels are too small to fill the GPU's 82 SMs: fill holds most of their time
    assert ops["Conv"].share > 0.95 and ops["Conv"].bound == "fill" and ops["Conv"].fill_s > ops["Conv"].time_s / 2
    assert "fill the GPU" in ops["Conv"].action
    assert ops["Relu"].fused == 49 and ops["Add"].fused == 16


def test_summary_text_and_md_show_the_groups_and_a_short_node_list(resnet_plain, capsys):
    assert cli.main(["summary", RESNET, "--dim", "batch=1", "--hw", "rtx3090:plain", "--no-progress"]) == 0
    text = capsys.readouterr().out
    block = text[text.index("Bottlenecks on rtx3090:plain"):]
    assert "Elementwise right after a Conv (its epilogue): Relu ×49, Add ×16" in block
    assert "12 × layer*/layer*.*" in block and "5.2% each" in block
    nodes = text[text.index("Top nodes by predicted time"):text.index("Bottlenecks on")]
    assert len([ln for ln in nodes.splitlines() if ln.startswith("  #")]) == 5
    assert cli.main(["summary", RESNET, "--dim", "batch=1", "--no-progress"]) == 0
    assert "Bottlenecks" not in capsys.readouterr().out  # no --hw, no groups
    assert cli.main(["summary", RESNET, "--dim", "batch=1", "--hw", "rtx3090:plain", "--format", "md",
                     "--no-progress"]) == 0
    md = capsys.readouterr().out
    assert "| group | nodes | share of time | share of bytes | what to do |" in md
    assert "| op type Conv (compute) | 53 | 61.5% |" in md


# ----------------------------------------------------------------------------------------- report

def test_report_model_html_and_md_carry_the_groups(resnet_plain):
    m = build_report(resnet_plain, None, {"dims": {"batch": 1}, "hw": "rtx3090:plain"})
    g = m["bottleneck_groups"]
    keys = list(m)
    assert keys.index("bottleneck_groups") == keys.index("bottlenecks") + 1
    assert json.loads(json.dumps(g, allow_nan=False)) == g  # plain JSON types
    assert render_json(m) == render_json(build_report(resnet_plain, None, {"dims": {"batch": 1},
                                                                          "hw": "rtx3090:plain"}))
    assert [o["id"] for o in g["opportunities"]] == ["epilogue"] and len(g["opportunities"][0]["keys"]) == 65
    html = render_html(m)
    for table, n in (("group-op-table", len(g["by_op_type"])), ("group-block-table", len(g["block_kinds"]) + 1),
                     ("group-fusion-table", len(g["opportunities"]))):
        body = re.search(rf'<table[^>]*id="{table}".*?<tbody>(.*?)</tbody>', html, re.S).group(1)
        assert body.count("<tr") == n, table
    assert "Elementwise right after a Conv (its epilogue)" in html and "charged" in html
    md = render_md(m)
    assert "| Elementwise right after a Conv (its epilogue): Relu ×49, Add ×16 | 65 | 35.3% |" in md
    plain = build_report(summarize(RESNET, dims={"batch": 1}))
    assert plain["bottleneck_groups"] is None and "group-op-table" not in render_html(plain)


def test_report_caps_blocks_and_keys_and_says_how_many_it_left_out(resnet_plain):
    d = bottlenecks(resnet_plain).to_dict(max_blocks=5, max_keys=10)
    assert len(d["blocks"]) == 5 and d["blocks_left_out"] == 11
    times = sorted((x["time_s"] for x in bottlenecks(resnet_plain).to_dict()["blocks"]), reverse=True)
    assert sorted((x["time_s"] for x in d["blocks"]), reverse=True) == times[:5]
    o = d["opportunities"][0]
    assert len(o["keys"]) == 10 and o["keys_left_out"] == 55


# ------------------------------------------------------------------------------------------- BERT

def test_bert_encoder_layers_and_attention_written_out():
    b = bottlenecks(summarize(BERT, dims={"batch": 1, "sequence": 128}, hw="rtx3090"))
    k = b.block_kinds[0]
    assert (k.count, k.label) == (4, "bert/encoder/layer.*") and b.block_method == "names"
    assert k.share > 0.9 and k.share_each == pytest.approx(k.share / 4) and k.top_op == "MatMul"
    ops = {o.id: o for o in b.opportunities}
    att = ops["unfused_attention"]
    assert (att.islands, att.nodes, dict(att.ops)) == (4, 28, {"Transpose": 16, "Softmax": 4, "Mul": 4, "Add": 4})
    assert att.assumed == "no" and att.saving_s > 0 and "fused attention" in att.action  # not assumed (docs/hw.md)
    gelu = ops["decomposed_activation"]
    assert gelu.islands == 4 and gelu.assumed == "yes" and "Gelu from opset 20" in gelu.action
    assert sum(g.share for g in b.by_op_type) == pytest.approx(1.0)


def test_bert_on_a_calibrated_cpu_spec_fuses_gelu_not_the_batched_bias_add(tmp_path):
    text = (ROOT / "benchmarks" / "results" / "calibrated-spec.toml").read_text()
    if "\noverhead_run_s = " not in text:  # a calibration that measured no per-run overhead: give it one
        text = text.replace("\noverhead_s = ", "\noverhead_run_s = 2.3e-06\noverhead_s = ", 1)
    spec = tmp_path / "calibrated.toml"
    spec.write_text(text)
    b = bottlenecks(summarize(BERT, dims={"batch": 1, "sequence": 128}, hw=str(spec)))
    assert b.prediction == "calibrated, onnxruntime's CPU fusions" and b.run_overhead_s > 0
    assert b.node_time_s == pytest.approx(b.latency_s - b.run_overhead_s)
    ops = {o.id: o for o in b.opportunities}
    assert ops["decomposed_activation"].assumed == "yes"  # GeluFusion
    epi = ops["epilogue"]
    assert epi.assumed == "partly" and epi.assumed_islands == 1  # the pooler's Gemm + Tanh only
    assert any(g.bound == "dispatch" for g in b.by_op_type)


def test_written_out_layer_norm_is_found_and_its_export_named():
    """x - mean -> ^2 -> mean -> + eps -> sqrt -> divide -> * gamma -> + beta, as opset-16 exports write it."""
    shape = [2, 16, 32]
    nodes = [helper.make_node("ReduceMean", ["x"], ["m"], axes=[-1]), helper.make_node("Sub", ["x", "m"], ["d"]),
             helper.make_node("Pow", ["d", "two"], ["s"]), helper.make_node("ReduceMean", ["s"], ["v"], axes=[-1]),
             helper.make_node("Add", ["v", "eps"], ["ve"]), helper.make_node("Sqrt", ["ve"], ["sd"]),
             helper.make_node("Div", ["d", "sd"], ["n"]), helper.make_node("Mul", ["n", "g"], ["ng"]),
             helper.make_node("Add", ["ng", "beta"], ["y"])]
    m = model(nodes, [vi("x", shape)], [vi("y", None)],
              [const("two", [], values=2.0), const("eps", [], values=1e-5), const("g", [32]), const("beta", [32])],
              opset=16)
    [o] = groups(m).opportunities
    assert (o.id, o.islands, o.nodes, o.assumed) == ("unfused_norm", 1, 9, "no")
    assert "LayerNorm ×1" in o.title and "opset ≥ 17 gives LayerNormalization" in o.action
    assert o.share == pytest.approx(1.0)
    # the costliest member stays as the fused kernel: the saving is the rest
    times = [r.time_s for r in summary_of(m, None, Spec()).roofline.nodes]
    assert o.saving_s == pytest.approx(sum(times) - max(times))
    assert groups(m, KernelSpec()).opportunities[0].assumed == "yes"  # one normalization kernel


def test_layout_transposes_of_a_channels_last_export():
    b = bottlenecks(summarize(str(MODELS / "resnet50_keras.onnx"), dims={"batch": 1}, hw="rtx3090:plain"))
    ops = {o.id: o for o in b.opportunities}
    assert ops["layout_transpose"].nodes == 1 and "channels-first" in ops["layout_transpose"].action
    assert dict(ops["epilogue"].ops) == {"Add": 70, "Mul": 53, "Relu": 49}  # BatchNorm kept as Mul + Add too
    assert [(k.count, k.label) for k in b.block_kinds[:2]] == [(12, "resnet50_1/conv*_block*"),
                                                                 (4, "resnet50_1/conv*_block1")]


# ---------------------------------------------------------------------------------------- compare

@pytest.fixture(scope="module")
def resnet_pair():
    return compare([RESNET, str(MODELS / "resnet50_keras.onnx")], dims={"batch": 1}, hw="rtx3090:plain")


def test_compare_splits_the_predicted_latency_delta_by_explanation(resnet_pair):
    a, b = (x["totals"]["predicted_latency_s"] for x in resnet_pair["models"])
    c = resnet_pair["comparisons"][0]
    lat = c["closing"]["latency"]
    assert lat["delta"] == pytest.approx(b - a)
    assert sum(p["delta"] for p in lat["explained"]) + lat["residual"] == pytest.approx(lat["delta"], abs=1e-15)
    sm_b = summarize(str(MODELS / "resnet50_keras.onnx"), dims={"batch": 1}, hw="rtx3090:plain")
    times_b = {r.key: r.time_s for r in sm_b.roofline.nodes}
    bn = next(e for e in c["explanations"] if e["id"] == "batchnorm")
    assert bn["predicted_s"]["a"] == 0 and bn["predicted_s"]["delta"] == pytest.approx(
        sum(times_b[str(i)] for i in bn["nodes_b"]))
    part = next(p for p in lat["explained"] if p["id"] == "batchnorm")
    assert part["delta"] == pytest.approx(bn["predicted_s"]["delta"]) and part["delta"] > 0.9 * lat["delta"]
    text = COMPARE["text"](resnet_pair)
    assert "Predicted latency: A 433 µs, B 610 µs, Δ +177 µs" in text and "unexplained" in text
    assert ", predicted +181 µs" in text  # the BatchNorm explanation's line
    md = COMPARE["md"](resnet_pair)
    assert "| Δ predicted |" in md and "| unexplained (other nodes" in md
    html = COMPARE["html"](resnet_pair)
    assert 'id="latency-split-0"' in html and 'id="latency-card-0"' in html
    # docs/compare.md shows this closing line as the code prints it
    doc = (ROOT / "docs" / "compare.md").read_text(encoding="utf-8")
    shown = re.search(r"--hw rtx3090:plain\n(.*?)```", doc, re.S).group(1)
    assert shown in text


def test_compare_without_hw_has_no_latency_split():
    m = compare([RESNET, str(MODELS / "resnet50_keras.onnx")], dims={"batch": 1})
    c = m["comparisons"][0]
    assert c["closing"]["latency"] is None and all(e["predicted_s"] is None for e in c["explanations"])
    assert "latency-split" not in COMPARE["html"](m) and "Predicted latency:" not in COMPARE["text"](m)


def test_docs_compare_validate_measures_both_models():
    text = (ROOT / "docs" / "compare.md").read_text(encoding="utf-8")
    assert "stops with a one-line error" not in text and "not wired" not in text
    assert "--validate" in text and "measure" in text


@pytest.mark.parametrize("path, dims", [("resnet50_torch.onnx", {"batch": 1}),
                                        ("bert_encoder_torch.onnx", {"batch": 1, "sequence": 128}),
                                        ("corpus/resnet18_qdq.onnx", {"batch": 1})])
@pytest.mark.parametrize("hw", ["rtx3090", str(ROOT / "benchmarks" / "results" / "calibrated-spec.toml")],
                         ids=["gpu", "calibrated-cpu"])
def test_dispatch_seconds_agree_with_a_roofline_without_overheads(path, dims, hw):
    """The execution plan's dispatch_s is the overhead it added to each node's time: a second roofline
    without the overheads gives each node's overhead as a difference, the same figures; and the bottleneck
    groups' dispatch-bound time is the plan's, node by node."""
    import dataclasses

    from onnxperf.predict.roofline import roofline

    sm = summarize(str(MODELS / path), dims=dims, hw=hw)
    fast = {r.key: r.dispatch_s for r in sm.roofline.nodes if r.time_s is not None}
    # the per-node overheads and a broadcast loop's spans (onnxperf.predict.broadcast: a call per span)
    eff = {k: v for k, v in sm.spec.efficiency.items() if k not in ("overhead_s", "overhead_parallel_s",
                                                                    "broadcast.span_s")}
    sources = {k: v for k, v in sm.spec.efficiency_sources.items() if k in eff}
    bare_spec = dataclasses.replace(sm.spec, efficiency=eff, efficiency_sources=sources)
    bare = {r.key: r.time_s for r in roofline(sm, bare_spec, sm.precision).nodes}
    slow = {r.key: max(0.0, r.time_s - bare[r.key]) for r in sm.roofline.nodes
            if r.time_s is not None and bare.get(r.key) is not None}
    assert fast.keys() == slow.keys() and any(fast.values())
    assert all(fast[k] == pytest.approx(slow[k], rel=1e-9, abs=1e-15) for k in slow)
    by_op: dict[str, float] = {}
    for r in sm.roofline.nodes:
        if r.bound == "dispatch":
            by_op[r.op_type] = by_op.get(r.op_type, 0.0) + r.time_s
    groups = {g.op_type: g.dispatch_s for g in sm.bottlenecks.by_op_type if g.dispatch_s}
    assert groups.keys() == by_op.keys() and all(groups[k] == pytest.approx(by_op[k]) for k in by_op)


def test_names_and_op_types_from_the_model_stay_inert_in_every_output(capsys, tmp_path):
    """Block labels come from node names and actions name op types: a newline, ESC or a bidi override
    in them is escaped in the text, escaped Markdown in md, and text (autoescaped) in the HTML."""
    import unicodedata

    import onnx

    evil = "\n\x1b[31m\u202e<b>x</b>|"
    nodes, inits, x = [], [], "x"
    for i in range(2):
        inits.append(const(f"w{i}", [C, C, 1, 1]))
        nodes += [helper.make_node("Conv", [x, f"w{i}"], [f"c{i}"], name=f"/{evil}/b.{i}/conv/Conv"),
                  helper.make_node("Relu", [f"c{i}"], [f"r{i}"], name=f"/{evil}/b.{i}/relu/Relu"),
                  helper.make_node("Add", [f"r{i}", x], [f"a{i}"], name=f"/{evil}/b.{i}/Add")]
        x = f"a{i}"
    nodes.append(helper.make_node("Mystery" + evil, [x], ["y"], name="/head", domain="example.org"))
    path = tmp_path / "evil.onnx"
    onnx.save(model(nodes, [vi("x", [1, C, H, W])], [vi("y", None)], inits, extra_opsets={"example.org": 1}),
              str(path))
    b = bottlenecks(summarize(str(path), hw="rtx3090:plain"))
    assert b.block_kinds[0].count == 2 and evil in b.block_kinds[0].label and b.uncosted[0].op_type.endswith(evil)
    assert cli.main(["summary", str(path), "--hw", "rtx3090:plain", "--no-progress"]) == 0
    text = capsys.readouterr().out
    block = text[text.index("Bottlenecks on"):]
    assert not [c for c in block if c != "\n" and unicodedata.category(c) in ("Cc", "Cf")]
    assert "\\x1b[31m\\u202e<b>x</b>|" in block
    m = build_report(summarize(str(path), hw="rtx3090:plain"))
    md = render_md(m)
    assert "<b>" not in md and "\x1b" not in md
    html = render_html(m)
    shown = re.sub(r"<script\b[^>]*>.*?</script>", "", html, flags=re.S)
    assert "<b>x</b>" not in shown and "&lt;b&gt;x&lt;/b&gt;" in shown


def test_an_op_type_or_the_rest_that_is_only_uncosted_is_unknown_not_no_work():
    """An op type whose every node lacks a predicted time is 'unknown' with a 'not costed' action
    (it read 'no work in this prediction'), and nodes outside the blocks that are all uncosted have
    an unknown share (it read 0.0%)."""
    sm = summarize(residual_model(unsupported=True), hw="rtx3090:plain")
    b = bottlenecks(sm)
    (mystery,) = [g for g in b.by_op_type if g.op_type == "Mystery"]
    assert mystery.bound == "unknown" and mystery.uncosted == 1 and mystery.share is None
    assert mystery.action.startswith("not costed (1 node without a predicted time)")
    assert b.outside[0] == 1 and b.outside[2] is None
    from onnxperf.products.render.summary import RENDERERS

    assert "1 nodes outside them: ? of the time" in RENDERERS["text"](sm)
