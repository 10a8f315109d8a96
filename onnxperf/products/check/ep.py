"""Which nodes an onnxruntime execution provider cannot run, from onnxruntime's own kernel registry.

The source of truth is the installed onnxruntime: ``get_all_opkernel_def()`` lists every kernel
compiled into it, per provider, with the op's domain, its version range and the types it
accepts. A node is runnable on a provider when

* a kernel of that provider covers the op's resolved version (the schema's ``since_version`` at
  the model's opset: ``onnx.defs`` for ONNX domains, onnxruntime's own schemas for
  ``com.microsoft``) and accepts the node's input and output element types where they are known;
* or, without such a kernel, the ONNX schema defines the op as a function, which onnxruntime
  expands into other ops (e.g. ``Mish``, ``HardSwish``): whether the body's ops have kernels for
  the node's types is asked of onnxruntime itself, by loading the node alone in a session on the
  CPU provider (elsewhere the expansion is assumed to work);
* ``Constant`` nodes become initializers when a session loads the model: always runnable;
* on the CPU provider, a float16 node without a float16 kernel runs on the float kernel between
  Casts that onnxruntime inserts (its ``InsertCastTransformer``): runnable, at the cost of the casts.

What this cannot see: the kernels of a provider that is not compiled into the installed build
(``onnxruntime`` wheels carry CPU only; ``onnxruntime-gpu`` adds CUDA), and providers that pick
nodes at session creation instead of registering kernels (TensorRT, OpenVINO, CoreML, QNN,
NNAPI ...): for those the check refuses with a message rather than guess. Graph optimizations
that fuse nodes at load time are not applied: the model is checked as written. On a provider
other than CPU, an unsupported node does not fail the session: onnxruntime runs it on the CPU,
with copies between devices.
"""

from __future__ import annotations

from functools import lru_cache

import onnx

from onnxperf.base import dtypes
from onnxperf.analysis.result import Analysis
from onnxperf.cost.walker import NodeCost
from onnxperf.predict.ort_kernels import CPU, F16 as _F16, F32 as _F32, accepts as _accepts, kernel_table, \
    param_types as _param_types, providers_with_kernels, schema as _schema


def _one_node_model(node: onnx.NodeProto, n: NodeCost, opsets: dict[str, int]) -> bytes | None:
    """``node`` alone in a model whose inputs and outputs carry its known element types."""
    def value(ref, name):
        et = _elem_types().get(ref.dtype) if ref is not None else None
        return None if et is None else onnx.helper.make_tensor_value_info(name, et, None)

    ins = [value(r, x) for r, x in zip(n.inputs, node.input) if x]
    outs = [value(r, x) for r, x in zip(n.outputs, node.output) if x]
    if any(v is None for v in ins + outs):
        return None
    g = onnx.helper.make_graph([node], "one_node", ins, outs)
    m = onnx.helper.make_model(g, opset_imports=[onnx.helper.make_opsetid(d, v) for d, v in sorted(opsets.items())])
    m.ir_version = 10  # the newest IR that every onnxruntime of the last years loads; opsets say the rest
    return m.SerializeToString()


@lru_cache(maxsize=1024)
def _session_refuses(model_bytes: bytes, provider: str) -> str | None:
    """onnxruntime's own answer for a one-node model: the reason it has no implementation, or
    None when it loads (or fails for a reason that is not a missing kernel)."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 4
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    try:
        ort.InferenceSession(model_bytes, sess_options=so, providers=[provider])
    except Exception as exc:  # onnxruntime's errors carry their status in the text
        text = str(exc)
        if "NOT_IMPLEMENTED" in text:
            found = text.split("Could not find an implementation for", 1)
            return ("no implementation for" + found[1].split(" node", 1)[0]) if len(found) == 2 else "NOT_IMPLEMENTED"
    return None


def _expanded_runs(node: onnx.NodeProto | None, n: NodeCost, opsets: dict[str, int], provider: str) -> str | None:
    """A function op without its own kernel runs as its body: whether every op of the body has a
    kernel for these types is asked of onnxruntime itself, on the node alone."""
    if node is None or provider != CPU:
        return None  # the session probe runs on the CPU provider only; elsewhere: expansion assumed
    blob = _one_node_model(node, n, opsets)
    if blob is None:
        return None  # a type is unknown: expansion assumed to work
    why = _session_refuses(blob, provider)
    return None if why is None else f"{provider} runs {n.op_type} as its function body, which has {why}"


@lru_cache(maxsize=1)
def _elem_types() -> dict[str, int]:
    return {dtypes.name(v): v for v in onnx.TensorProto.DataType.values() if v}


def why_unsupported(n: NodeCost, opsets: dict[str, int], provider: str,
                    node: onnx.NodeProto | None = None) -> str | None:
    """Why ``provider`` cannot run node ``n`` (one line), or None when it can. ``node`` (its
    proto) lets function ops be checked by expansion."""
    domain = n.domain
    if domain == "" and n.op_type == "Constant":
        return None
    table = kernel_table(provider)
    opset = opsets.get(domain, 1)
    sch = _schema(domain, n.op_type, opset)
    kernels = table.get((domain, n.op_type), ())
    label = f"{domain}::{n.op_type}" if domain else n.op_type
    if not kernels:
        if sch is not None and sch[5]:
            return _expanded_runs(node, n, opsets, provider)
        return f"{provider} has no kernel for {label}"
    version = sch[0] if sch is not None else opset
    in_range = [k for k in kernels if k[0] <= version <= k[1]]
    if not in_range:
        if sch is not None and sch[5]:
            return _expanded_runs(node, n, opsets, provider)
        spans = ", ".join(f"{lo}-{hi if hi < 2**31 - 1 else ''}" for lo, hi, _ in sorted(kernels)[:6])
        return f"{provider} has no kernel for {label} version {version} (kernels cover {spans})"
    if sch is None:
        return None
    types = _param_types(n.inputs, sch[1], sch[3]) + _param_types(n.outputs, sch[2], sch[4])
    mismatch = None
    for _lo, _hi, cons in in_range:
        mismatch = _accepts(cons, types)
        if mismatch is None:
            return None
    if provider == CPU and any(t == _F16 for _, t in types):
        # onnxruntime's InsertCastTransformer runs float16 nodes without a float16 CPU kernel on
        # the float kernel, with Casts around them
        as_float = [(p, _F32 if t == _F16 else t) for p, t in types]
        if any(_accepts(cons, as_float) is None for _lo, _hi, cons in in_range):
            return None
    return f"{provider} has no {label} kernel for {mismatch}"


def _protos(a: Analysis) -> dict[str, onnx.NodeProto]:
    """Node key (as in the analysis) -> its NodeProto, subgraph bodies included."""
    out: dict[str, onnx.NodeProto] = {}
    if a.loaded is None:
        return out
    stack = [("", a.loaded.graph)]
    while stack:
        scope, g = stack.pop()
        for i, node in enumerate(g.nodes):
            out[f"{scope}/{i}" if scope else str(i)] = node
        for (idx, attr), sub in g.subgraphs.items():
            stack.append((f"{scope + '/' if scope else ''}{idx}/{attr}", sub))
    return out


def unsupported_nodes(a: Analysis, provider: str) -> list[tuple[NodeCost, str]]:
    """Every node (subgraph bodies included) that ``provider`` cannot run, with the reason."""
    opsets = dict(a.model.opsets)
    protos = _protos(a)
    out = []
    for n in a.nodes:
        why = why_unsupported(n, opsets, provider, protos.get(n.key))
        if why is not None:
            out.append((n, why))
    return out


__all__ = ["kernel_table", "providers_with_kernels", "unsupported_nodes", "why_unsupported"]
