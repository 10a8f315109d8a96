"""onnxruntime's kernel registry: which kernels a provider has, per (domain, op type), their version ranges and
the element types they accept (``get_all_opkernel_def()`` of the installed onnxruntime), and the ops' schemas
at a model's opset. ``onnxperf check --ep`` asks it which nodes a provider cannot run; the roofline of an
onnxruntime CPU spec asks it which float16 nodes run on a float kernel between inserted Casts
(:mod:`onnxperf.predict.float_kernels`)."""

from __future__ import annotations

from functools import lru_cache

import onnx

from onnxperf.base import dtypes
from onnxperf.base.errors import OptionError

ONNX_DOMAINS = ("", "ai.onnx.ml", "ai.onnx.preview.training", "ai.onnx.preview")
CPU = "CPUExecutionProvider"
F16, F32 = "tensor(float16)", "tensor(float)"


@lru_cache(maxsize=1)
def all_kernels() -> tuple:
    try:
        from onnxruntime.capi import _pybind_state as C
    except Exception as exc:  # onnxruntime missing or broken
        raise OptionError(f"execution_provider: onnxruntime cannot be imported ({type(exc).__name__})") from None
    return tuple(C.get_all_opkernel_def())


def providers_with_kernels() -> list[str]:
    """Providers of the installed onnxruntime that register kernels (the checkable ones)."""
    return sorted({k.provider for k in all_kernels()})


@lru_cache(maxsize=8)
def kernel_table(provider: str) -> dict[tuple[str, str], tuple[tuple[int, int, tuple[tuple[str, frozenset[str]], ...]], ...]]:
    """(domain, op type) -> kernels of ``provider``: (first version, last version, type constraints)."""
    table: dict[tuple[str, str], list] = {}
    for k in all_kernels():
        if k.provider != provider:
            continue
        lo, hi = k.version_range
        cons = tuple(sorted((name, frozenset(types)) for name, types in k.type_constraints.items()))
        table.setdefault(("" if k.domain in ("", "ai.onnx") else k.domain, k.op_name), []).append((lo, hi, cons))
    if not table:
        import onnxruntime

        have = ", ".join(providers_with_kernels()) or "none"
        raise OptionError(
            f"execution_provider {provider!r}: the installed onnxruntime {onnxruntime.__version__} has no kernel "
            f"table for it (checkable here: {have}). Providers that choose nodes when a session is created "
            "(TensorRT, OpenVINO, CoreML, QNN, NNAPI ...) cannot be checked statically; for CUDA install "
            "onnxruntime-gpu")
    return {key: tuple(v) for key, v in table.items()}


@lru_cache(maxsize=1)
def ort_schemas() -> dict[tuple[str, str], object]:
    try:
        from onnxruntime.capi import _pybind_state as C

        schemas = C.get_all_operator_schema()
    except Exception:
        return {}
    out: dict[tuple[str, str], object] = {}
    for s in schemas:
        key = ("" if s.domain in ("", "ai.onnx") else s.domain, s.name)
        if key not in out or s.since_version > out[key].since_version:  # type: ignore[attr-defined]
            out[key] = s
    return out


@lru_cache(maxsize=4096)
def schema(domain: str, op_type: str, opset: int):
    """(since_version, input type strs, output type strs, last input variadic, last output
    variadic, defined as a function) of the op at ``opset``, or None when unknown."""
    if domain in ONNX_DOMAINS:
        try:
            s = onnx.defs.get_schema(op_type, opset, domain)
        except Exception:
            return None
        var = onnx.defs.OpSchema.FormalParameterOption.Variadic
        return (int(s.since_version), tuple(p.type_str for p in s.inputs), tuple(p.type_str for p in s.outputs),
                bool(s.inputs) and s.inputs[-1].option == var, bool(s.outputs) and s.outputs[-1].option == var,
                bool(s.has_function or s.has_context_dependent_function))
    s = ort_schemas().get((domain, op_type))
    if s is None:
        return None
    var_name = "Variadic"
    return (int(s.since_version), tuple(p.typeStr for p in s.inputs), tuple(p.typeStr for p in s.outputs),  # type: ignore[attr-defined]
            bool(s.inputs) and s.inputs[-1].option.name == var_name,  # type: ignore[attr-defined]
            bool(s.outputs) and s.outputs[-1].option.name == var_name, False)  # type: ignore[attr-defined]


@lru_cache(maxsize=1)
def type_strs() -> dict[str, str]:
    """dtype name (``float32``) -> ONNX type string (``tensor(float)``)."""
    return {dtypes.name(v): f"tensor({onnx.TensorProto.DataType.Name(v).lower()})"
            for v in onnx.TensorProto.DataType.values() if v}


def param_types(refs, formals: tuple[str, ...], variadic: bool) -> list[tuple[str, str]]:
    """(type parameter, ONNX type string) for every present tensor with a known dtype."""
    out = []
    strs = type_strs()
    for i, ref in enumerate(refs):
        if ref is None or ref.dtype not in strs:
            continue
        if i < len(formals):
            param = formals[i]
        elif variadic and formals:
            param = formals[-1]
        else:
            continue
        out.append((param, strs[ref.dtype]))
    return out


def accepts(cons: tuple[tuple[str, frozenset[str]], ...], types: list[tuple[str, str]]) -> str | None:
    """None when the kernel accepts these types, else the first mismatch."""
    allowed = dict(cons)
    for param, ts in types:
        if param in allowed and ts not in allowed[param]:
            return f"{param}={ts}"
    return None
