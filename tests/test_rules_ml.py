"""ai.onnx.ml rules: linear models, SVMs, tree ensembles (depth from the node attributes),
preprocessing, lookups and map/sequence ops."""

import pytest
from onnx import TensorProto, helper

from onnxperf.cost.ops import REGISTRY
from onnxperf.cost.ops.ml import POST_TRANSFORM_OPS
from onnxperf.cost.ops.ml_trees import tree_depths

from .util import cost, model, single, vi

ML = "ai.onnx.ml"
I64, STR = TensorProto.INT64, TensorProto.STRING


def ml(op, inputs, outputs=("y",), ml_opset=3, opset=17, **attrs):
    return single(op, inputs, outputs=outputs, domain=ML, extra_opsets={ML: ml_opset}, opset=opset, **attrs)


#: ops per score of each post_transform, written out: LOGISTIC = Sigmoid (neg, exp, add, div);
#: SOFTMAX = Softmax per element (max, sub, exp, sum, div); SOFTMAX_ZERO + a zero test;
#: PROBIT = mul, sub, erfinv, mul
EXPECTED_POST = {"NONE": 0, "LOGISTIC": 4, "SOFTMAX": 5, "SOFTMAX_ZERO": 6, "PROBIT": 4}


def test_post_transform_table_is_as_documented():
    assert POST_TRANSFORM_OPS == EXPECTED_POST


def test_tree_depths():
    # 0 -> (1, leaf); 1 -> (leaf, leaf): deepest path 2, leaves at depths 1 and 2
    assert tree_depths([0], {0: (1, None), 1: (None, None)}) == [(2, False)]
    assert tree_depths([0], {0: (1, 2), 1: (None, None), 2: (None, None)}) == [(2, True)]


@pytest.mark.parametrize("post", ["NONE", "SOFTMAX", "LOGISTIC"])
def test_linear_classifier(post):
    n, f, e = 4, 3, 3
    coef = [0.5] * (e * f)
    r = cost(ml("LinearClassifier", {"x": [n, f]}, outputs=("label", "scores"), coefficients=coef,
                intercepts=[0.0] * e, classlabels_ints=list(range(e)), post_transform=post, ml_opset=1))
    assert r.status == "counted" and r.family == "matmul"
    macs = n * e * f
    assert r.macs == macs
    assert r.flops == 2 * macs + n * e + n * e * EXPECTED_POST[post] + n * (e - 1)
    # the model lives in attributes: coefficients and intercepts (4 bytes), labels (8 bytes)
    assert r.bytes_read == 4 * n * f + 4 * e * f + 4 * e + 8 * e


def test_linear_regressor():
    n, f, t = 5, 4, 2
    r = cost(ml("LinearRegressor", {"x": [n, f]}, coefficients=[1.0] * (t * f), intercepts=[0.0] * t,
                targets=t, ml_opset=1))
    assert r.macs == n * t * f
    assert r.flops == 2 * n * t * f + n * t
    assert r.bytes_read == 4 * n * f + 4 * t * f + 4 * t
    assert r.bytes_written == 4 * n * t
    assert r.exact  # no output shape, but the rule gives bytes_written exactly itself


def test_linear_regressor_with_declared_output_shape_is_exact():
    n, f, t = 5, 4, 2
    r = cost(ml("LinearRegressor", {"x": [n, f]}, coefficients=[1.0] * (t * f), targets=t, ml_opset=1,
                out_shapes={"y": [n, t]}, out_dtype=TensorProto.FLOAT))
    assert r.exact and r.bytes_written == 4 * n * t
    assert r.flops == 2 * n * t * f  # no intercepts


def test_svm_classifier_rbf():
    n, f, v, c = 3, 2, 4, 2
    r = cost(ml("SVMClassifier", {"x": [n, f]}, outputs=("label", "scores"), kernel_type="RBF",
                kernel_params=[0.1, 0.0, 3.0], support_vectors=[0.0] * (v * f), vectors_per_class=[2, 2],
                coefficients=[1.0] * ((c - 1) * v), rho=[0.0], classlabels_ints=[0, 1], ml_opset=1))
    assert r.status == "counted"
    kernel_macs, decision_macs = n * v * f, n * (c - 1) * v
    assert r.macs == kernel_macs + decision_macs
    pairs = c * (c - 1) // 2
    rbf = n * v * 2 + n * v * f  # mul + exp per kernel, F subtracts
    assert r.flops == 2 * r.macs + rbf + n * pairs * 3 + n * (c - 1)
    # ONNX infers no output shapes here: the rule sizes labels (int64 [N]) and scores ([N, C])
    assert r.bytes_written == 8 * n + 4 * n * c
    assert r.exact  # output shapes unknown to ONNX; the rule's bytes_written is exact


def test_svm_classifier_linear_mode():
    n, f, c = 6, 5, 3
    r = cost(ml("SVMClassifier", {"x": [n, f]}, outputs=("label", "scores"), coefficients=[1.0] * (c * f),
                rho=[0.0] * c, classlabels_ints=list(range(c)), ml_opset=1))
    assert r.macs == n * c * f
    assert r.flops == 2 * n * c * f + n * c


def test_svm_regressor():
    n, f, v = 4, 2, 3
    r = cost(ml("SVMRegressor", {"x": [n, f]}, support_vectors=[0.0] * (v * f), coefficients=[1.0] * v,
                n_supports=v, rho=[0.0], kernel_type="LINEAR", ml_opset=1))
    assert r.macs == n * v * f + n * v
    assert r.flops == 2 * r.macs + n


def _classic_tree_attrs(prefix):
    # tree 0: 0 -> (1, 2=leaf); 1 -> (3=leaf, 4=leaf). tree 1: 0 -> (1=leaf, 2=leaf)
    tree = [0] * 5 + [1] * 3
    nodes = [0, 1, 2, 3, 4, 0, 1, 2]
    modes = ["BRANCH_LEQ", "BRANCH_LEQ", "LEAF", "LEAF", "LEAF", "BRANCH_LEQ", "LEAF", "LEAF"]
    leaves = [(0, 2), (0, 3), (0, 4), (1, 1), (1, 2)]
    return dict(nodes_treeids=tree, nodes_nodeids=nodes, nodes_modes=modes,
                nodes_truenodeids=[1, 3, 0, 0, 0, 1, 0, 0], nodes_falsenodeids=[2, 4, 0, 0, 0, 2, 0, 0],
                nodes_featureids=[0, 1, 0, 0, 0, 1, 0, 0], nodes_values=[0.5] * 8,
                **{f"{prefix}_treeids": [t for t, _ in leaves], f"{prefix}_nodeids": [i for _, i in leaves],
                   f"{prefix}_ids": [0] * 5, f"{prefix}_weights": [1.0] * 5})


def test_tree_ensemble_regressor_depth_from_attributes():
    n = 5
    r = cost(ml("TreeEnsembleRegressor", {"x": [n, 2]}, n_targets=1, **_classic_tree_attrs("target")))
    assert r.status == "counted"
    depths = 2 + 1  # deepest path of each tree
    assert r.flops == n * (depths + 2 * 1)  # compares + one weight add per tree
    assert not r.exact  # tree 0 has leaves at depths 1 and 2: upper bound


def test_tree_ensemble_classifier():
    n, classes = 4, 2
    r = cost(ml("TreeEnsembleClassifier", {"x": [n, 2]}, outputs=("label", "probs"), classlabels_int64s=[0, 1],
                post_transform="LOGISTIC", **_classic_tree_attrs("class")))
    assert r.status == "counted"
    assert r.flops == n * (3 + 2 + classes * EXPECTED_POST["LOGISTIC"] + (classes - 1))
    assert r.bytes_written == 8 * n + 4 * n * classes  # int64 labels, float scores


@pytest.mark.parametrize("dtype,size", [(TensorProto.FLOAT, 4), (TensorProto.DOUBLE, 8)])
def test_tree_ensemble_v5(dtype, size):
    n = 3
    split = helper.make_tensor("s", dtype, [3], [0.5, 0.2, 0.1])
    weights = helper.make_tensor("w", dtype, [5], [1.0] * 5)
    modes = helper.make_tensor("m", TensorProto.UINT8, [3], [0, 0, 0])
    r = cost(ml("TreeEnsemble", {"x": ([n, 2], dtype)}, ml_opset=5, opset=21, n_targets=1, tree_roots=[0, 2],
                nodes_featureids=[0, 1, 0], nodes_splits=split, nodes_modes=modes,
                nodes_truenodeids=[1, 1, 3], nodes_trueleafs=[0, 1, 1],
                nodes_falsenodeids=[0, 2, 4], nodes_falseleafs=[1, 1, 1],
                leaf_targetids=[0] * 5, leaf_weights=weights, aggregate_function=1, post_transform=0))
    assert r.status == "counted"
    assert r.flops == n * ((2 + 1) + 2)
    assert not r.exact
    assert r.bytes_written == size * n  # scores of X's type


def test_elementwise_preprocessing():
    n, c = 3, 4
    r = cost(ml("Normalizer", {"x": [n, c]}, norm="L2", ml_opset=1))
    assert r.flops == n * (c + (c - 1) + 1 + c)
    r = cost(ml("Scaler", {"x": [n, c]}, scale=[2.0] * c, offset=[1.0] * c, ml_opset=1))
    assert r.flops == 2 * n * c
    assert r.bytes_read == 4 * n * c + 2 * 4 * c
    r = cost(ml("Binarizer", {"x": [n, c]}, threshold=0.5, ml_opset=1))
    assert r.flops == n * c
    r = cost(ml("Imputer", {"x": [n, c]}, imputed_value_floats=[0.0], replaced_value_float=-1.0, ml_opset=1))
    assert r.flops == 2 * n * c


def test_lookups():
    n = 5
    r = cost(ml("LabelEncoder", {"x": ([n], I64)}, keys_int64s=[1, 2], values_int64s=[3, 4], ml_opset=2))
    assert (r.status, r.int_ops, r.flops) == ("counted", n, 0)
    r = cost(ml("CategoryMapper", {"x": ([n], STR)}, cats_strings=["a", "b"], cats_int64s=[0, 1], ml_opset=1))
    assert r.int_ops == n
    rows, cols, cats = 2, 3, 4
    r = cost(ml("OneHotEncoder", {"x": ([rows, cols], I64)}, cats_int64s=list(range(cats)), ml_opset=1))
    assert r.int_ops == rows * cols
    assert r.bytes_written == 4 * rows * cols * cats


def test_array_feature_extractor_reads_selected_columns():
    n, f, k = 3, 10, 2
    r = cost(ml("ArrayFeatureExtractor", {"x": [n, f], "i": ([k], I64)}, ml_opset=1))
    assert r.status == "counted" and r.flops == 0
    assert r.bytes_read == 8 * k + 4 * n * k


def test_feature_vectorizer():
    n = 2
    r = cost(ml("FeatureVectorizer", {"a": [n, 3], "b": [n, 4]}, inputdimensions=[3, 4], ml_opset=1))
    assert r.status == "counted" and r.flops == 0
    assert r.bytes_read == 4 * n * 7 and r.bytes_written == 4 * n * 7


def test_zipmap_estimates_map_bytes():
    n, c = 3, 4
    m = model([helper.make_node("ZipMap", ["x"], ["z"], domain=ML, classlabels_int64s=list(range(c)))],
              [vi("x", [n, c])],
              [helper.make_value_info("z", helper.make_sequence_type_proto(
                  helper.make_map_type_proto(I64, helper.make_tensor_type_proto(TensorProto.FLOAT, []))))],
              opset=17, extra_opsets={ML: 1})
    r = cost(m)
    assert r.status == "counted" and not r.exact
    assert r.bytes_written == n * c * (8 + 4)


def test_map_inputs_are_unknown_shape():
    m = model([helper.make_node("DictVectorizer", ["d"], ["y"], domain=ML, int64_vocabulary=[1, 2, 3])],
              [helper.make_value_info("d", helper.make_map_type_proto(
                  I64, helper.make_tensor_type_proto(TensorProto.FLOAT, [])))],
              [vi("y", None)], opset=17, extra_opsets={ML: 1})
    r = cost(m)
    assert r.status == "unknown_shape"
    assert REGISTRY.lookup(ML, "CastMap", 1) is not None
