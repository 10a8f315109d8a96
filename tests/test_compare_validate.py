"""compare --validate: every model measured under the same conditions."""

import json

import onnx
from onnx import helper

from onnxperf import cli

from .util import const, model, vi


def test_compare_validate_measures_each_model(tmp_path, capsys):
    h = 64
    paths = []
    for name, extra in (("a", False), ("b", True)):
        nodes = [helper.make_node("MatMul", ["x", "w"], ["y" if not extra else "t"])]
        if extra:
            nodes.append(helper.make_node("Relu", ["t"], ["y"]))
        m = model(nodes, [vi("x", ["batch", h])], [vi("y", None)], [const("w", [h, h], values=[0.01] * h * h)])
        p = tmp_path / f"{name}.onnx"
        onnx.save(m, str(p))
        paths.append(str(p))
    assert cli.main(["compare", *paths, "--dim", "batch=4", "--hw", "xeon-silver-4210x2", "--validate",
                     "--runs", "2", "--warmup", "1", "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    measured = [m["totals"]["measured_latency_s"] for m in d["models"]]
    assert len(measured) == 2 and all(x is not None and x > 0 for x in measured)


def test_compare_models_with_unnamed_nodes(tmp_path, capsys):
    paths = []
    for name in ("a", "b"):
        m = model([helper.make_node("MatMul", ["x", "w"], ["y"])], [vi("x", [2, 8])], [vi("y", None)],
                  [const("w", [8, 8])])
        p = tmp_path / f"{name}.onnx"
        onnx.save(m, str(p))
        paths.append(str(p))
    assert cli.main(["compare", *paths, "--format", "json"]) == 0
