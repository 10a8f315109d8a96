"""The hardware side of the roofline: :class:`HardwareSpec`, dtype fallbacks, and peaks computed from parts.

Every figure is *dense* (no 2:4 structured-sparsity figures) and carries its source. Peaks are per
second: floating-point operations for float dtypes, integer operations for int8/int4 (a multiply-add
counts as 2 either way, as the data sheets count it).

Every figure is bounded (:func:`check_figure`), wherever the spec comes from (a preset, a user's file,
the API, a probe): a rate (a peak, a bandwidth) is a finite number from
:data:`~onnxperf.ui.units.MIN_RATE` (1e-3) to :data:`~onnxperf.ui.units.MAX_FIGURE` (1e30) per second, a
capacity a whole number of bytes up to 1e30, an efficiency-table figure from :data:`MIN_EFFICIENCY`
(1e-12) to 1e30. Within those bounds every time, ratio and total computed from a spec is a finite
float, so no NaN or Infinity reaches an output.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace, dataclass, field
from decimal import Decimal
from types import MappingProxyType

from onnxperf.base.errors import OptionError
from onnxperf.ui.units import MAX_FIGURE, MIN_RATE, shown, within

#: The smallest figure of a spec's ``efficiency`` table. The table holds fractions of a roof (0.4),
#: seconds of overhead (2e-6), counts (108 SMs) and byte thresholds; 1e-12 is below any of them (a
#: picosecond of overhead, a millionth of a millionth of a roof), and a time divided by it stays finite.
MIN_EFFICIENCY = 1e-12
#: The range of a clock in ``[cpu]`` / ``[gpu]`` parts, in GHz: 1 kHz to 1 PHz, far outside any chip.
CLOCK_GHZ_RANGE = (1e-6, 1e6)


def check_figure(what: str, v: object, low: float = MIN_RATE, high: float = MAX_FIGURE,
                 unit: str = " per second") -> float:
    """``v`` as a float when it is a finite number in ``[low, high]``; else an :class:`OptionError` naming
    ``what`` and the range. A huge int (400 digits) is compared exactly, never converted (no OverflowError)."""
    if not isinstance(v, (int, float)) or not within(v, low, high):
        raise OptionError(f"{what} must be a positive finite number from {low:g} to {high:g}{unit}, got {shown(v)}")
    return float(v)


def check_bytes(what: str, v: object) -> int:
    """``v`` when it is a whole number of bytes from 1 to :data:`MAX_FIGURE`; else an :class:`OptionError`."""
    if isinstance(v, bool) or not isinstance(v, int) or not within(v, 1, MAX_FIGURE):
        raise OptionError(f"{what} must be a whole number of bytes from 1 to {MAX_FIGURE:g}, got {shown(v)}")
    return v


#: Keys of ``peak_flops_per_s``, widest first. ``tf32`` is the tensor-core rate for fp32 inputs,
#: used only when asked for by name: ``float32`` maps to ``fp32``.
PEAK_KEYS: tuple[str, ...] = ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "fp4", "int8", "int4")

#: Keys of ``sources`` besides the peak keys.
MEMORY_KEYS: tuple[str, ...] = ("memory_bandwidth", "memory_capacity")

#: The ``sources`` key of :attr:`HardwareSpec.interconnect_bytes_per_s`.
INTERCONNECT_KEY = "interconnect"

#: Every key ``sources`` may hold, in the order files and outputs list them.
SOURCE_KEYS: tuple[str, ...] = PEAK_KEYS + MEMORY_KEYS + (INTERCONNECT_KEY,)

KINDS: tuple[str, ...] = ("cpu", "gpu", "soc")

#: dtype name (ONNX short names from :func:`onnxperf.base.dtypes.name`, and common aliases) -> peak key.
#: Integer types wider than 8 bits, bool and complex types run on the ordinary vector/CUDA-core
#: ALUs: they are taken at the fp32 (complex128: fp64) rate, an approximation.
_DTYPE_KEY: dict[str, str] = {
    **dict.fromkeys(("float64", "double", "fp64", "f64", "complex128"), "fp64"),
    **dict.fromkeys(("float32", "float", "fp32", "f32", "complex64", "bool", "int16", "uint16",
                     "int32", "uint32", "int64", "uint64"), "fp32"),
    "tf32": "tf32",
    **dict.fromkeys(("float16", "half", "fp16", "f16"), "fp16"),
    **dict.fromkeys(("bfloat16", "bf16"), "bf16"),
    **dict.fromkeys(("float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz", "float8e8m0", "fp8"), "fp8"),
    **dict.fromkeys(("float4e2m1", "fp4"), "fp4"),
    **dict.fromkeys(("int8", "uint8", "i8", "u8"), "int8"),
    **dict.fromkeys(("int4", "uint4", "int2", "uint2"), "int4"),
}

#: When a spec has no figure of its own for a key, the next key in its chain is used (fp32 always
#: exists). fp64 with no figure is fp32 / 2 (the ratio on CPUs with full-width double SIMD; GPU
#: presets state fp64 explicitly, since consumer GPUs run it at 1/32 or 1/64).
FALLBACKS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "fp64": ("fp64", "fp32/2"),
    "fp32": ("fp32",),
    "tf32": ("tf32", "fp32"),
    "fp16": ("fp16", "fp32"),
    "bf16": ("bf16", "fp16", "fp32"),
    "fp8": ("fp8", "fp16", "fp32"),
    "fp4": ("fp4", "fp8", "fp16", "fp32"),
    "int8": ("int8", "fp16", "fp32"),
    "int4": ("int4", "int8", "fp16", "fp32"),
})


def peak_key(dtype_name: str) -> str:
    """The ``peak_flops_per_s`` key that ``dtype_name`` (``float16``, ``uint8``, ``bf16`` ...) uses."""
    key = _DTYPE_KEY.get(str(dtype_name).strip().lower())
    if key is None:
        raise OptionError(f"no peak rate for dtype {dtype_name!r}; known: {', '.join(sorted(_DTYPE_KEY))}")
    return key


def _exact_product(clock_ghz: float, *factors: int) -> float:
    """``clock_ghz x 1e9 x factors`` computed in decimal, so 1.7 GHz x 10,496 x 2 is 35.6864e12 exactly."""
    value = Decimal(repr(float(clock_ghz))) * 10 ** 9
    for f in factors:
        value *= f
    return float(value)


def _check_parts(where: str, ints: Mapping[str, object], clock_ghz: object) -> None:
    for name, v in ints.items():
        if isinstance(v, bool) or not isinstance(v, int) or not within(v, 1, MAX_FIGURE):
            raise OptionError(f"{where}: {name} must be a positive integer up to {MAX_FIGURE:g}, got {shown(v)}")
    low, high = CLOCK_GHZ_RANGE
    if not within(clock_ghz, low, high):
        raise OptionError(f"{where}: clock_ghz must be a positive number from {low:g} to {high:g}, "
                          f"got {shown(clock_ghz)}")


def cpu_peak_fp32(cores: int, clock_ghz: float, simd_fp32_lanes: int, fma_units: int, sockets: int = 1) -> float:
    """fp32 FLOP/s of a CPU: sockets x cores (per socket) x clock x SIMD fp32 lanes x FMA units x 2.

    ``simd_fp32_lanes`` is the width of one FMA unit in fp32 lanes (16 for AVX-512, 8 for AVX2,
    4 for NEON); the 2 is the multiply and the add of one FMA. The clock should be the sustained
    all-core clock under that SIMD width (AVX-512 clocks are lower on many Intel parts).
    """
    _check_parts("cpu_from_parts", {"cores": cores, "simd_fp32_lanes": simd_fp32_lanes, "fma_units": fma_units,
                                    "sockets": sockets}, clock_ghz)
    return _exact_product(clock_ghz, sockets, cores, simd_fp32_lanes, fma_units, 2)


def cpu_parts_text(cores: int, clock_ghz: float, simd_fp32_lanes: int, fma_units: int, sockets: int = 1) -> str:
    """How :func:`cpu_peak_fp32` got its figure, in words (used as the figure's source)."""
    peak = cpu_peak_fp32(cores, clock_ghz, simd_fp32_lanes, fma_units, sockets)
    sock = f"{sockets} sockets x " if sockets != 1 else ""
    return (f"computed from parts: {sock}{cores} cores x {clock_ghz:g} GHz x {simd_fp32_lanes} fp32 SIMD lanes x "
            f"{fma_units} FMA units x 2 FLOP/FMA = {peak / 1e9:g} GFLOP/s")


def gpu_peak_fp32(cores: int, clock_ghz: float) -> float:
    """fp32 FLOP/s of a GPU from its CUDA/shader cores: cores x boost clock x 2 (one FMA per core per cycle)."""
    _check_parts("gpu parts", {"cores": cores}, clock_ghz)
    return _exact_product(clock_ghz, cores, 2)


def gpu_parts_text(cores: int, clock_ghz: float) -> str:
    peak = gpu_peak_fp32(cores, clock_ghz)
    return (f"computed from parts: {cores:,} cores x {clock_ghz:g} GHz x 2 FLOP/FMA = "
            f"{peak / 1e12:g} TFLOP/s")


@dataclass(frozen=True)
class MemoryLevel:
    """One level of the memory hierarchy below main memory, for the cache-aware roofline: the bytes it
    holds for the whole run (every instance the threads use together) and the bandwidth all the
    threads get from it."""

    name: str  # L1d, L2, L3 ...
    capacity_bytes: int
    bandwidth_bytes_per_s: float
    source: str = "not stated"

    def to_dict(self) -> dict:
        return {"name": self.name, "capacity_bytes": self.capacity_bytes,
                "bandwidth_bytes_per_s": self.bandwidth_bytes_per_s, "source": self.source}


def _frozen(m: Mapping | None) -> Mapping:
    return MappingProxyType(dict(m or {}))


@dataclass(frozen=True)
class HardwareSpec:
    """One device: dense peak rates per dtype, memory, and where each figure comes from.

    ``peak_flops_per_s`` keys are :data:`PEAK_KEYS` (``fp32`` required); int8/int4 values are integer
    op/s. ``sources`` has one entry per figure (peak keys, ``memory_bandwidth``, ``memory_capacity``,
    ``interconnect``).
    ``efficiency`` holds calibration factors per op family (attainable / peak), empty unless measured.
    ``memory_capacity_bytes`` is None where it depends on the configuration (CPU servers).
    ``interconnect_bytes_per_s`` is the device-to-device bandwidth in one direction (NVLink on SXM and
    NVL parts, Infinity Fabric on an MI300X, PCIe otherwise; a data sheet's "bidirectional" figure is
    halved), source key ``interconnect``; None where the device has no peer to talk to (a CPU socket,
    a Jetson, an Apple SoC) or nobody said.
    """

    id: str
    name: str
    kind: str
    peak_flops_per_s: Mapping[str, float] = field(hash=False)
    memory_bandwidth_bytes_per_s: float
    memory_capacity_bytes: int | None
    sources: Mapping[str, str] = field(hash=False)
    notes: str = ""
    efficiency: Mapping[str, float] = field(default_factory=dict, hash=False)
    #: where each ``efficiency`` figure comes from (a preset's kernel-model constants, a calibration)
    efficiency_sources: Mapping[str, str] = field(default_factory=dict, hash=False)
    #: cache levels, innermost first (a probed spec): the cache-aware roofline charges each byte at the
    #: level that holds it (:mod:`onnxperf.predict.reuse`); empty: every byte at ``memory_bandwidth_bytes_per_s``
    memory_levels: tuple[MemoryLevel, ...] = ()
    #: device-to-device bandwidth per direction (bytes/s), for collectives across devices; None: not given
    interconnect_bytes_per_s: float | None = None

    def __post_init__(self) -> None:
        figures = [*dict(self.peak_flops_per_s or {}), "memory_bandwidth"]
        figures += ["memory_capacity"] if self.memory_capacity_bytes is not None else []
        figures += [INTERCONNECT_KEY] if self.interconnect_bytes_per_s is not None else []
        sources = dict(self.sources or {})
        for k in figures:  # every figure says where it came from, even when nobody said
            sources.setdefault(k, "not stated")
        object.__setattr__(self, "sources", sources)
        order = {k: i for i, k in enumerate(SOURCE_KEYS)}
        for name in ("peak_flops_per_s", "sources", "efficiency", "efficiency_sources"):
            items = sorted(dict(getattr(self, name) or {}).items(),
                           key=lambda kv: (order.get(kv[0], len(order)), kv[0]))
            object.__setattr__(self, name, _frozen(dict(items)))
        if self.kind not in KINDS:
            raise OptionError(f"hardware {self.id!r}: kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
        if "fp32" not in self.peak_flops_per_s:
            raise OptionError(f"hardware {self.id!r}: an fp32 peak is required")
        unknown = sorted(set(self.peak_flops_per_s) - set(PEAK_KEYS))
        if unknown:
            raise OptionError(f"hardware {self.id!r}: unknown peak key(s) {', '.join(unknown)}; "
                              f"known: {', '.join(PEAK_KEYS)}")
        for k, v in self.peak_flops_per_s.items():
            check_figure(f"hardware {self.id!r}: peak {k}", v)
        check_figure(f"hardware {self.id!r}: memory bandwidth", self.memory_bandwidth_bytes_per_s)
        if self.memory_capacity_bytes is not None:
            check_bytes(f"hardware {self.id!r}: memory capacity", self.memory_capacity_bytes)
        if self.interconnect_bytes_per_s is not None:
            object.__setattr__(self, "interconnect_bytes_per_s", check_figure(
                f"hardware {self.id!r}: interconnect bandwidth", self.interconnect_bytes_per_s))
        for k, v in self.efficiency.items():
            check_figure(f"hardware {self.id!r}: efficiency {k}", v, MIN_EFFICIENCY, unit="")
        object.__setattr__(self, "memory_levels", tuple(self.memory_levels or ()))
        last = 0
        for lv in self.memory_levels:
            if not isinstance(lv, MemoryLevel):
                raise OptionError(f"hardware {self.id!r}: memory_levels must be MemoryLevel records")
            cap = check_bytes(f"hardware {self.id!r}: memory level {lv.name!r}: capacity", lv.capacity_bytes)
            if cap <= last:
                raise OptionError(f"hardware {self.id!r}: memory level {lv.name!r}: capacity must be a whole number "
                                  f"of bytes larger than the level before, got {cap!r}")
            check_figure(f"hardware {self.id!r}: memory level {lv.name!r} bandwidth", lv.bandwidth_bytes_per_s)
            last = cap
        stray = sorted(set(self.efficiency_sources) - set(self.efficiency))
        if stray:
            raise OptionError(f"hardware {self.id!r}: source(s) for efficiency figures it does not give: "
                              f"{', '.join(stray)}")

    def __reduce__(self):  # mapping proxies do not pickle; rebuild from plain dicts
        return (_rebuild, (self.id, self.name, self.kind, dict(self.peak_flops_per_s),
                           self.memory_bandwidth_bytes_per_s, self.memory_capacity_bytes, dict(self.sources),
                           self.notes, dict(self.efficiency), dict(self.efficiency_sources), self.memory_levels,
                           self.interconnect_bytes_per_s))

    def resolve_peak(self, dtype_name: str) -> tuple[float, str]:
        """``(peak per second, basis)`` for ``dtype_name``; basis names the figure used (``fp16``,
        or ``fp32/2`` ...), following :data:`FALLBACKS` when the spec has no figure of its own."""
        for cand in FALLBACKS[peak_key(dtype_name)]:
            if cand == "fp32/2":
                return self.peak_flops_per_s["fp32"] / 2, cand
            if cand in self.peak_flops_per_s:
                return self.peak_flops_per_s[cand], cand
        raise AssertionError("unreachable: fp32 is required")  # pragma: no cover

    def peak_for(self, dtype_name: str) -> float:
        """Dense peak per second for arithmetic in ``dtype_name``.

        Fallbacks when the spec has no figure of its own: bf16 -> fp16 -> fp32; fp16 -> fp32;
        float8 -> fp8 -> fp16 -> fp32; float4 -> fp4 -> fp8 -> fp16 -> fp32; int8/uint8 -> int8 -> fp16 -> fp32; int4/uint4 -> int4 -> int8 ->
        fp16 -> fp32; float64 -> fp64 -> fp32 / 2; tf32 -> fp32; wider integers, bool -> fp32.
        """
        return self.resolve_peak(dtype_name)[0]

    def ridge_point(self, dtype: str = "fp32") -> float:
        """Arithmetic intensity (FLOP/byte) where the roofline turns: peak / memory bandwidth."""
        return self.peak_for(dtype) / self.memory_bandwidth_bytes_per_s

    def to_dict(self) -> dict:
        """Plain JSON-serializable form (``schema`` ``onnxperf.hardware/1``)."""
        return {
            "schema": "onnxperf.hardware/1",
            "id": self.id,
            "name": self.name,
            "kind": self.kind,
            "peak_flops_per_s": {k: self.peak_flops_per_s[k] for k in PEAK_KEYS if k in self.peak_flops_per_s},
            "memory_bandwidth_bytes_per_s": self.memory_bandwidth_bytes_per_s,
            "memory_capacity_bytes": self.memory_capacity_bytes,
            "interconnect_bytes_per_s": self.interconnect_bytes_per_s,
            "ridge_point_flop_per_byte": {k: self.ridge_point(k) for k in PEAK_KEYS if k in self.peak_flops_per_s},
            "sources": dict(self.sources),
            "notes": self.notes,
            "efficiency": dict(self.efficiency),
            "efficiency_sources": dict(self.efficiency_sources),
            "memory_levels": [lv.to_dict() for lv in self.memory_levels],
        }


def _rebuild(*args) -> HardwareSpec:
    return HardwareSpec(*args)


def cpu_from_parts(cores: int, clock_ghz: float, simd_fp32_lanes: int, fma_units: int, sockets: int = 1, *,
                   memory_bandwidth_bytes_per_s: float, id: str = "custom-cpu", name: str | None = None,
                   memory_capacity_bytes: int | None = None, source: str = "",
                   memory_bandwidth_source: str = "given", memory_capacity_source: str = "given",
                   notes: str = "") -> HardwareSpec:
    """A CPU spec whose fp32 peak is computed from its parts (see :func:`cpu_peak_fp32`).

    Other dtypes follow :meth:`HardwareSpec.peak_for`'s fallbacks (fp64 = fp32 / 2, fp16 = fp32 ...).
    """
    peak = cpu_peak_fp32(cores, clock_ghz, simd_fp32_lanes, fma_units, sockets)
    text = cpu_parts_text(cores, clock_ghz, simd_fp32_lanes, fma_units, sockets)
    sources = {"fp32": f"{text}; {source}" if source else text, "memory_bandwidth": memory_bandwidth_source}
    if memory_capacity_bytes is not None:
        sources["memory_capacity"] = memory_capacity_source
    return HardwareSpec(id=id, name=name or id, kind="cpu", peak_flops_per_s={"fp32": peak},
                        memory_bandwidth_bytes_per_s=check_figure("memory_bandwidth_bytes_per_s",
                                                                  memory_bandwidth_bytes_per_s),
                        memory_capacity_bytes=memory_capacity_bytes, sources=sources, notes=notes)


def uncalibrated(spec):
    """``spec`` without its efficiency table: the plain roofline that predictions are compared
    against (``spec`` itself when it carries none)."""
    return replace(spec, efficiency={}, efficiency_sources={}) if getattr(spec, "efficiency", None) else spec
