"""Memory bombs: models under 1 KB whose shapes or values would need gigabytes to exaggerated
petabytes if anything built them (issue 15, item 1; issue 28, item 1). Shared by tests/test_hostile.py
and benchmarks/bench_hostile.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper

#: the argv of ``onnxperf`` in a child process limited to 1 GiB of address space
BOMB_CHILD = r"""
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
from onnxperf import cli
rc = cli.main(sys.argv[1:])
print(f"maxrss_kib {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}", file=sys.stderr)
sys.exit(rc)
"""

CASES = ("constant_of_shape_25G", "reshape_int64_max", "bert_1e12_by_2e62", "constant_of_shape_1e10_add",
         "expand_int64_max", "tile_1e12", "pad_1e12", "computed_shape_4e9")


def _save(m: onnx.ModelProto, path: Path) -> Path:
    onnx.save(m, str(path))
    return path


def range_bomb(path: Path, limit: int) -> Path:
    i64 = lambda name, v: onnx.numpy_helper.from_array(np.array(v, dtype=np.int64), name)  # noqa: E731
    nodes = [helper.make_node("Range", ["s", "l", "d"], ["r"], name="range"),
             helper.make_node("Cast", ["r"], ["y"], name="cast", to=TensorProto.FLOAT)]
    g = helper.make_graph(nodes, "bomb", [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                          [i64("s", 0), i64("l", limit), i64("d", 1)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 9
    return _save(m, path)


def bomb_cases(tmp_path: Path) -> dict[str, list[str]]:
    i64 = lambda name, v: onnx.numpy_helper.from_array(np.array(v, dtype=np.int64), name)  # noqa: E731
    out = {}
    g = helper.make_graph([helper.make_node("ConstantOfShape", ["shp"], ["y"], name="cos")], "cos", [],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [i64("shp", [50000, 500000])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 9
    out["constant_of_shape_25G"] = [str(_save(m, tmp_path / "cos.onnx"))]
    g = helper.make_graph([helper.make_node("Reshape", ["x", "shp"], ["y"], name="r")], "rs",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [i64("shp", [2**63 - 1])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 9
    out["reshape_int64_max"] = [str(_save(m, tmp_path / "rs.onnx"))]
    bert = Path(__file__).resolve().parent.parent / "models" / "bert_encoder_torch.onnx"
    out["bert_1e12_by_2e62"] = [str(bert), "--dim", "batch=1000000000000", "--dim", f"sequence={2**62}"]
    # issue 28, item 1: amplifiers whose data ONNX's propagation would build, and what is computed from them
    one = i64("one", [1])
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    cases = {
        # ConstantOfShape([10^10]) of int64 -> Add -> ReduceSum -> Reshape: 49 s and 3.4 GiB, then bad_alloc
        "constant_of_shape_1e10_add": ([
            helper.make_node("ConstantOfShape", ["shp"], ["c"], value=helper.make_tensor("v", TensorProto.INT64, [1], [1])),
            helper.make_node("Add", ["c", "c"], ["d"]), helper.make_node("ReduceSum", ["d"], ["s"], keepdims=1),
            helper.make_node("Reshape", ["x", "s"], ["y"])], [i64("shp", [10**10])]),
        "expand_int64_max": ([helper.make_node("Expand", ["one", "shp"], ["c"]), helper.make_node("Add", ["c", "c"], ["d"]),
                              helper.make_node("Cast", ["d"], ["y"], to=TensorProto.FLOAT)], [one, i64("shp", [2**63 - 1])]),
        "tile_1e12": ([helper.make_node("Tile", ["one", "rep"], ["c"]), helper.make_node("Mul", ["c", "c"], ["d"]),
                       helper.make_node("Cast", ["d"], ["y"], to=TensorProto.FLOAT)], [one, i64("rep", [10**12])]),
        "pad_1e12": ([helper.make_node("Pad", ["one", "pads"], ["c"]), helper.make_node("Sub", ["c", "c"], ["d"]),
                      helper.make_node("Cast", ["d"], ["y"], to=TensorProto.FLOAT)], [one, i64("pads", [0, 10**12])]),
        # the size computed from the bound input: Shape(x) * 10^9 -> ConstantOfShape -> Add
        "computed_shape_4e9": ([helper.make_node("Shape", ["x"], ["xs"]), helper.make_node("Mul", ["xs", "k"], ["n"]),
                                helper.make_node("ConstantOfShape", ["n"], ["c"], value=helper.make_tensor(
                                    "v", TensorProto.INT64, [1], [1])),
                                helper.make_node("Add", ["c", "c"], ["d"]),
                                helper.make_node("Cast", ["d"], ["y"], to=TensorProto.FLOAT)], [i64("k", [10**9])]),
    }
    for key, (nodes, inits) in cases.items():
        inputs = [x] if any("x" in n.input for n in nodes) else []
        m = helper.make_model(helper.make_graph(nodes, key, inputs, [y], inits),
                              opset_imports=[helper.make_opsetid("", 17)])
        m.ir_version = 9
        out[key] = [str(_save(m, tmp_path / f"{key}.onnx"))]
    return out
