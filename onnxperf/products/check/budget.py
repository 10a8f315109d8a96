"""The budget of ``onnxperf check``: limits a model must stay within, and how lints are tuned.

Read from a TOML file (``--budget FILE``), or from ``[tool.onnxperf.budget]`` (or
``[tool.onnxperf]`` itself) in the nearest ``pyproject.toml`` above the working directory.
Every key is optional; an unknown key is an error that names it, so a typo never silently
disables a limit::

    hw = "t4"                          # spec for the latency / throughput limits
    precision = "fp16"                 # figures for this precision (what-if; default: as stored)
    dims = { batch = 1, sequence = 128 }
    max_params = "25M"                 # counts: 25000000, "25M", "4.1G" (SI, exact)
    max_model_size = "100MiB"          # sizes: bytes, or "100MiB", "1.5GB"
    max_macs = "4.1G"
    max_flops = "8.2G"
    max_activation_peak = "512MiB"
    max_total_memory = "1GiB"          # weights + activation peak
    max_latency = "5ms"                # on `hw`; "250us", "0.2s", or seconds
    min_throughput = 200               # items/s on `hw` (items: the bound batch dim)
    min_opset = 13                     # allowed ai.onnx opset range
    max_opset = 21
    allowed_op_types = ["Conv", "Relu", "com.microsoft::FusedConv"]
    allowed_domains = ["ai.onnx", "com.microsoft"]
    static_shapes = true               # graph inputs and outputs declare fixed shapes
    allowed_dtypes = ["float32", "float16", "int64"]
    execution_provider = "CPUExecutionProvider"   # every node has a kernel there
    allow_partial = false              # a total with uncosted nodes cannot pass a max_* limit
    strict = false                     # true: any partial figure fails the model (as --strict)

    # decoder LLMs (a decode step with a KV cache; other models skip these limits)
    context = 4096                     # tokens in the cache at which they are evaluated (default 2048)
    prompt = 512                       # prompt length for the time to first token (default 512)
    kv_runtime = "in-place"            # how the runtime keeps the KV cache: exported (default) | in-place
    kv_precision = "fp8"               # the KV cache in a precision of its own (default: as the figures')
    devices = 2                        # tensor parallel over this many devices (default 1): per-device figures
    device_memory = "24GiB"            # memory for min_context_fit
    max_kv_cache = "2GiB"              # KV-cache bytes at the bound batch and `context`
    min_decode_tokens_per_s = 30       # on `hw`, at the bound batch and `context`
    max_time_to_first_token = "500ms"  # on `hw`, for `prompt`
    min_context_fit = 8192             # the largest context that fits `device_memory` (batch as bound)

    [lints]
    OP002 = "error"                    # error | warning | info | off
    OP006 = "off"
    min_opset = 13                     # OP008
    large_constant = "1MiB"            # OP010
    fp32_weights_min = "1MiB"          # OP002
    duplicate_min = "1KiB"             # OP007

Every number is bounded, so no limit can be NaN or Infinity (neither is JSON) nor overflow what is
computed from it: counts and sizes are whole numbers up to 10^30 (:data:`~onnxperf.ui.units.MAX_FIGURE`;
a size string at least 1 byte), rates (``min_throughput``, ``min_decode_tokens_per_s``) from 1e-3 to 1e30
per second, durations from :data:`MIN_SECONDS` to :data:`MAX_SECONDS`, dims, ``context``, ``prompt``,
``min_context_fit`` and opsets fit an ONNX int64. ``inf``, ``nan``, ``5e-324``, an integer of 400 digits
and a file nested hundreds of levels deep are refused on reading: one line naming the key and the file,
exit 2.
"""

from __future__ import annotations

import decimal
import math
import re
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import onnx

from onnxperf.base import dtypes
from onnxperf.base.errors import OptionError
from onnxperf.predict.kv_names import EXPORTED, KV_PRECISIONS, KV_RUNTIMES
from onnxperf.predict.precision import PRECISIONS
from onnxperf.ui.output import note_input
from onnxperf.ui.tomlfile import parse_toml
from onnxperf.ui.units import MAX_FIGURE, MIN_RATE, parse_bytes, shown, within
from onnxperf.products.check.lints import LINT_LEVELS, LINTS, LintConfig

#: The shortest duration a budget may give: a picosecond, far below any kernel, and 1 / it is finite.
MIN_SECONDS = 1e-12
#: The longest: 10^12 s (31,700 years); a latency or a time to first token beyond it is no limit.
MAX_SECONDS = 1e12
#: The largest dim, context, prompt or opset: what an ONNX int64 holds.
MAX_INT64 = 2 ** 63 - 1

@dataclass(frozen=True)
class Budget:
    """Limits; ``None`` means "no limit". Units are in the names; sizes are bytes."""

    hw: str | None = None
    precision: str | None = None
    dims: tuple[tuple[str, int], ...] = ()
    max_params: int | None = None
    max_model_size_bytes: int | None = None
    max_macs: int | None = None
    max_flops: int | None = None
    max_activation_peak_bytes: int | None = None
    max_total_memory_bytes: int | None = None
    max_latency_s: float | None = None
    min_throughput_per_s: float | None = None
    min_opset: int | None = None
    max_opset: int | None = None
    allowed_op_types: tuple[str, ...] | None = None
    allowed_domains: tuple[str, ...] | None = None
    static_shapes: bool = False
    allowed_dtypes: tuple[str, ...] | None = None
    execution_provider: str | None = None
    allow_partial: bool = False
    #: any partial figure (an uncosted node, a tensor of unknown size) fails the model
    strict: bool = False
    context: int | None = None
    prompt: int | None = None
    kv_runtime: str = EXPORTED
    kv_precision: str | None = None
    devices: int = 1
    device_memory_bytes: int | None = None
    max_kv_cache_bytes: int | None = None
    min_decode_tokens_per_s: float | None = None
    max_time_to_first_token_s: float | None = None
    min_context_fit: int | None = None
    lints: LintConfig = field(default_factory=LintConfig)
    #: where it was read from (a file, ``pyproject.toml [tool.onnxperf.budget]``), or None
    source: str | None = None

    def with_overrides(self, hw: str | None = None, dims: dict[str, int] | None = None,
                       execution_provider: str | None = None, strict: bool = False,
                       precision: str | None = None, device_memory_bytes: int | None = None) -> Budget:
        """Command-line options win over the file."""
        from dataclasses import replace

        merged = dict(self.dims)
        merged.update(dims or {})
        return replace(self, hw=hw or self.hw, dims=tuple(sorted(merged.items())),
                       execution_provider=execution_provider or self.execution_provider,
                       strict=strict or self.strict, precision=precision or self.precision,
                       device_memory_bytes=device_memory_bytes or self.device_memory_bytes)

    def limits(self) -> dict[str, Any]:
        """The limits that are set, by their TOML key (for reports)."""
        out: dict[str, Any] = {}
        for key, (attr, _kind) in _KEYS.items():
            v = getattr(self, attr)
            if key in ("hw", "precision", "dims", "allow_partial", "strict", "context", "prompt", "device_memory",
                       "kv_runtime", "kv_precision", "devices"):
                continue
            if v is None or v is False:
                continue
            out[key] = list(v) if isinstance(v, tuple) else v
        return out


# ---------------------------------------------------------------- parsing values

_SI = {"": 1, "k": 10**3, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15}


def parse_count(value: object, key: str) -> int:
    """``25000000``, ``"25M"``, ``"4.1G"``, ``"1_000"`` -> an exact integer (decimal SI prefixes)."""
    if isinstance(value, bool):
        raise OptionError(f"budget key {key!r}: expected a count, got {value!r}")
    if isinstance(value, int):
        n: int | Decimal = value
    else:
        m = re.fullmatch(r"\s*([0-9][0-9_]*(?:\.[0-9]+)?|\.[0-9]+)\s*([kKMGTP]?)\s*", str(value))
        if not m:
            raise OptionError(f"budget key {key!r}: {shown(value)} is not a count (e.g. 25000000, \"25M\", \"4.1G\")")
        number = Decimal(m.group(1).replace("_", ""))
        if not within(number, 0, MAX_FIGURE):  # before multiplying: exact, no overflow
            n = number
        else:
            with decimal.localcontext() as ctx:
                ctx.prec = 64  # exact up to 10^30 x 10^15: the default 28 digits would round
                n = number * _SI[m.group(2)]
            if n != n.to_integral_value():
                raise OptionError(f"budget key {key!r}: {shown(value)} is not a whole number")
    if n < 0:
        raise OptionError(f"budget key {key!r}: must not be negative")
    if not within(n, 0, MAX_FIGURE):
        raise OptionError(f"budget key {key!r}: {shown(value)} is more than {MAX_FIGURE:g}: no count is that large")
    return int(n)


def parse_size(value: object, key: str) -> int:
    """``4096`` (bytes), ``"100MiB"``, ``"1.5GB"``: a whole number of bytes up to 10^30."""
    if isinstance(value, bool):
        raise OptionError(f"budget key {key!r}: expected a size, got {value!r}")
    if isinstance(value, int):
        if value < 0:
            raise OptionError(f"budget key {key!r}: must not be negative")
        if not within(value, 0, MAX_FIGURE):
            raise OptionError(f"budget key {key!r}: {shown(value)} bytes is more than {MAX_FIGURE:g}")
        return value
    if isinstance(value, float) and not math.isfinite(value):
        raise OptionError(f"budget key {key!r}: must be a finite number, got {shown(value)}")
    try:
        return parse_bytes(value if isinstance(value, str) else repr(value))
    except OptionError as exc:  # the reason: not a size (with examples), too large, under a byte
        raise OptionError(f"budget key {key!r}: {exc}") from None


_TIME_UNITS = {"s": 1, "ms": Decimal("1e-3"), "us": Decimal("1e-6"), "µs": Decimal("1e-6"), "ns": Decimal("1e-9")}


def parse_seconds(value: object, key: str) -> float:
    """``"5ms"``, ``"250us"``, ``"0.2s"`` or a number of seconds, from :data:`MIN_SECONDS` to
    :data:`MAX_SECONDS`."""
    if isinstance(value, bool):
        raise OptionError(f"budget key {key!r}: expected a duration, got {value!r}")
    if isinstance(value, (int, float)):
        v: object = value
    else:
        m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(s|ms|us|µs|ns)?\s*", str(value))
        if not m:
            raise OptionError(f"budget key {key!r}: {shown(value)} is not a duration (e.g. 5ms, 250us, 0.2s)")
        try:  # 1e999999999: compared, never multiplied past what a Decimal holds
            number = Decimal(m.group(1))
            v = number * _TIME_UNITS[m.group(2) or "s"] if within(number, 0, MAX_FIGURE) else number
        except ArithmeticError:
            v = Decimal("Infinity")
    return _bounded(v, value, key, MIN_SECONDS, MAX_SECONDS, " s")


def parse_rate(value: object, key: str) -> float:
    """``200``, ``"200/s"``, ``"1.5k/s"``: items per second, from 1e-3 to 1e30."""
    if isinstance(value, bool):
        raise OptionError(f"budget key {key!r}: expected a rate, got {value!r}")
    if isinstance(value, (int, float)):
        v: object = value
    else:
        m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([kKMG]?)\s*(?:/\s*s)?\s*", str(value))
        if not m:
            raise OptionError(f"budget key {key!r}: {shown(value)} is not a rate (e.g. 200, \"1.5k/s\")")
        number = Decimal(m.group(1))
        v = number * _SI[m.group(2)] if within(number, 0, MAX_FIGURE) else number
    return _bounded(v, value, key, MIN_RATE, MAX_FIGURE, "/s")


def _bounded(v: object, given: object, key: str, low: float, high: float, unit: str) -> float:
    """``v`` (a number, or the Decimal read from ``given``) as a float when it is finite and within
    ``[low, high]``; NaN, inf, 5e-324 or an int of 400 digits is an :class:`OptionError` naming ``key``."""
    if isinstance(v, float) and not math.isfinite(v):
        raise OptionError(f"budget key {key!r}: must be a finite number, got {shown(given)}")
    if not v > 0:
        raise OptionError(f"budget key {key!r}: must be positive, got {shown(given)}")
    if not within(v, low, high):
        raise OptionError(f"budget key {key!r}: {shown(given)} is outside {low:g} to {high:g}{unit}")
    return float(v)


def _int(value: object, key: str) -> int:
    """An integer an ONNX int64 holds (an opset)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise OptionError(f"budget key {key!r}: expected an integer, got {shown(value)}")
    if not within(value, -MAX_INT64 - 1, MAX_INT64):
        raise OptionError(f"budget key {key!r}: {shown(value)} does not fit an int64")
    return value


def _positive(value: object, key: str) -> int:
    v = _int(value, key)
    if v <= 0:
        raise OptionError(f"budget key {key!r}: must be a positive integer")
    return v


def _precision(value: object, key: str) -> str:
    if value not in PRECISIONS:
        raise OptionError(f"budget key {key!r}: expected one of {', '.join(PRECISIONS)}, got {value!r}")
    return str(value)


def _kv_runtime(value: object, key: str) -> str:
    if value not in KV_RUNTIMES:
        raise OptionError(f"budget key {key!r}: expected one of {', '.join(KV_RUNTIMES)}, got {value!r}")
    return str(value)


def _kv_precision(value: object, key: str) -> str:
    if value not in KV_PRECISIONS:
        raise OptionError(f"budget key {key!r}: expected one of {', '.join(KV_PRECISIONS)}, got {value!r}")
    return str(value)


def _bool(value: object, key: str) -> bool:
    if not isinstance(value, bool):
        raise OptionError(f"budget key {key!r}: expected true or false, got {value!r}")
    return value


def _str(value: object, key: str) -> str:
    if not isinstance(value, str) or not value:
        raise OptionError(f"budget key {key!r}: expected a non-empty string, got {value!r}")
    return value


def _strings(value: object, key: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise OptionError(f"budget key {key!r}: expected a list of strings")
    return tuple(value)


def _dims(value: object, key: str) -> tuple[tuple[str, int], ...]:
    if not isinstance(value, dict):
        raise OptionError(f"budget key {key!r}: expected a table, e.g. dims = {{ batch = 1 }}")
    out = []
    for k, v in value.items():
        if isinstance(v, bool) or not isinstance(v, int) or not within(v, 1, MAX_INT64):
            raise OptionError(f"budget key {key}.{k}: expected a positive integer up to {MAX_INT64} (int64), "
                              f"got {shown(v)}")
        out.append((str(k), v))
    return tuple(sorted(out))


def _dtypes(value: object, key: str) -> tuple[str, ...]:
    names = _strings(value, key)
    known = {dtypes.name(t) for t in _all_types()}
    for n in names:
        if n not in known:
            raise OptionError(f"budget key {key!r}: unknown dtype {n!r} (known: {', '.join(sorted(known))})")
    return names


def _all_types() -> list[int]:
    return [v for v in onnx.TensorProto.DataType.values() if v != 0]


def _domains(value: object, key: str) -> tuple[str, ...]:
    return tuple("ai.onnx" if d in ("", "ai.onnx") else d for d in _strings(value, key))


#: TOML key -> (Budget attribute, parser)
_KEYS: dict[str, tuple[str, Any]] = {
    "hw": ("hw", _str),
    "precision": ("precision", _precision),
    "dims": ("dims", _dims),
    "max_params": ("max_params", parse_count),
    "max_model_size": ("max_model_size_bytes", parse_size),
    "max_macs": ("max_macs", parse_count),
    "max_flops": ("max_flops", parse_count),
    "max_activation_peak": ("max_activation_peak_bytes", parse_size),
    "max_total_memory": ("max_total_memory_bytes", parse_size),
    "max_latency": ("max_latency_s", parse_seconds),
    "min_throughput": ("min_throughput_per_s", parse_rate),
    "min_opset": ("min_opset", _int),
    "max_opset": ("max_opset", _int),
    "allowed_op_types": ("allowed_op_types", _strings),
    "allowed_domains": ("allowed_domains", _domains),
    "static_shapes": ("static_shapes", _bool),
    "allowed_dtypes": ("allowed_dtypes", _dtypes),
    "execution_provider": ("execution_provider", _str),
    "allow_partial": ("allow_partial", _bool),
    "strict": ("strict", _bool),
    "context": ("context", _positive),
    "prompt": ("prompt", _positive),
    "kv_runtime": ("kv_runtime", _kv_runtime),
    "kv_precision": ("kv_precision", _kv_precision),
    "devices": ("devices", _positive),
    "device_memory": ("device_memory_bytes", parse_size),
    "max_kv_cache": ("max_kv_cache_bytes", parse_size),
    "min_decode_tokens_per_s": ("min_decode_tokens_per_s", parse_rate),
    "max_time_to_first_token": ("max_time_to_first_token_s", parse_seconds),
    "min_context_fit": ("min_context_fit", _positive),
}
#: the keys that ask for the decoder-LLM figures
LLM_KEYS = ("max_kv_cache", "min_decode_tokens_per_s", "max_time_to_first_token", "min_context_fit")

_LINT_OPTIONS: dict[str, tuple[str, Any]] = {
    "min_opset": ("min_opset", _int),
    "large_constant": ("large_constant_bytes", parse_size),
    "fp32_weights_min": ("fp32_weights_min_bytes", parse_size),
    "duplicate_min": ("duplicate_min_bytes", parse_size),
}

_LINT_ID = re.compile(r"OP\d{3}")


def _lint_config(table: object, where: str) -> LintConfig:
    if not isinstance(table, dict):
        raise OptionError(f"{where}: 'lints' must be a table")
    levels: dict[str, str] = {}
    opts: dict[str, Any] = {}
    for k, v in table.items():
        if _LINT_ID.fullmatch(k):
            if k not in LINTS:
                raise OptionError(f"{where}: unknown lint id {k!r} in [lints] (known: {', '.join(LINTS)})")
            if v not in LINT_LEVELS:
                raise OptionError(f"{where}: lints.{k} = {v!r}: expected one of {', '.join(LINT_LEVELS)}")
            levels[k] = v
        elif k in _LINT_OPTIONS:
            attr, parse = _LINT_OPTIONS[k]
            try:
                opts[attr] = parse(v, f"lints.{k}")
            except OptionError as exc:
                raise OptionError(f"{where}: {exc}") from None
        else:
            raise OptionError(f"{where}: unknown key {('lints.' + k)!r} (lint ids like OP001, or "
                              f"{', '.join(_LINT_OPTIONS)})")
    return LintConfig(levels=tuple(sorted(levels.items())), **opts)


def budget_from_mapping(data: dict[str, Any], where: str) -> Budget:
    """A :class:`Budget` from parsed TOML; ``where`` names the source in error messages."""
    kwargs: dict[str, Any] = {}
    for k, v in data.items():
        if k == "lints":
            kwargs["lints"] = _lint_config(v, where)
            continue
        if k not in _KEYS:
            raise OptionError(f"{where}: unknown budget key {k!r} (known: {', '.join(list(_KEYS) + ['lints'])})")
        attr, parse = _KEYS[k]
        try:
            kwargs[attr] = parse(v, k)
        except OptionError as exc:
            raise OptionError(f"{where}: {exc}") from None
    b = Budget(**kwargs, source=where)
    if b.min_context_fit is not None and b.device_memory_bytes is None:
        raise OptionError(f"{where}: min_context_fit needs device_memory (the memory the context must fit in)")
    if b.min_opset is not None and b.max_opset is not None and b.min_opset > b.max_opset:
        raise OptionError(f"{where}: min_opset {b.min_opset} is above max_opset {b.max_opset}")
    return b


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        raw = path.read_bytes()
        note_input(path)
    except FileNotFoundError:
        raise OptionError(f"budget {path}: no such file") from None
    except IsADirectoryError:
        raise OptionError(f"budget {path}: is a directory") from None
    except OSError as exc:
        raise OptionError(f"budget {path}: cannot be read ({exc.strerror})") from None
    return parse_toml(raw, f"budget {path}")


def read_budget(path: str | Path) -> Budget:
    """A budget file: the keys at its top level (or under ``[tool.onnxperf.budget]`` when it is a
    ``pyproject.toml``)."""
    p = Path(path)
    data = _read_toml(p)
    if p.name == "pyproject.toml":
        found = _from_pyproject(data, p)
        if found is None:
            raise OptionError(f"budget {p}: has no [tool.onnxperf] table")
        return found
    return budget_from_mapping(data, str(p))


def _from_pyproject(data: dict[str, Any], path: Path) -> Budget | None:
    tool = data.get("tool", {}).get("onnxperf") if isinstance(data.get("tool"), dict) else None
    if tool is None:
        return None
    if not isinstance(tool, dict):
        raise OptionError(f"{path}: [tool.onnxperf] must be a table")
    if "budget" in tool:
        # the rest of [tool.onnxperf] belongs to other commands
        table = dict(tool["budget"]) if isinstance(tool["budget"], dict) else tool["budget"]
        if not isinstance(table, dict):
            raise OptionError(f"{path}: [tool.onnxperf.budget] must be a table")
        if "lints" in tool:
            table.setdefault("lints", tool["lints"])
        return budget_from_mapping(table, f"{path} [tool.onnxperf.budget]")
    return budget_from_mapping(tool, f"{path} [tool.onnxperf]")


def find_pyproject(start: str | Path | None = None) -> Path | None:
    """The nearest ``pyproject.toml`` at or above ``start`` (the working directory), not looking
    above the repository root (a folder holding ``.git``)."""
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
        if (folder / ".git").exists():
            return None
    return None


def discover_budget(start: str | Path | None = None) -> Budget:
    """The budget of the project around ``start``: ``[tool.onnxperf]`` of the nearest
    pyproject.toml, or an empty budget (lints only) when there is none."""
    p = find_pyproject(start)
    if p is None:
        return Budget()
    return _from_pyproject(_read_toml(p), p) or Budget()


def budget_keys() -> list[str]:
    """Every key a budget table accepts (for docs and error messages)."""
    return list(_KEYS) + ["lints"]


__all__ = ["Budget", "budget_from_mapping", "budget_keys", "discover_budget",
           "find_pyproject", "parse_count", "parse_rate", "parse_seconds", "parse_size", "read_budget"]
