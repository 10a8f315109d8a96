"""Spec files: the TOML format, the built-in presets shipped in ``onnxperf/hardware/presets/``, and writing.

Format (``schema = "onnxperf.hardware/1"``, optional on read)::

    id = "rtx3090"
    name = "NVIDIA GeForce RTX 3090"
    kind = "gpu"                              # cpu | gpu | soc
    memory_bandwidth_bytes_per_s = 936e9
    memory_capacity_gib = 24                  # or memory_capacity_bytes (or _gb, decimal); optional
    interconnect_bytes_per_s = 32e9           # optional: device-to-device, one direction (NVLink, PCIe)
    notes = "..."

    [gpu]                                     # optional: fp32 = cores × clock × 2
    cores = 10496
    clock_ghz = 1.70
    source = "..."

    [cpu]                                     # optional: fp32 = sockets × cores × clock × lanes × FMA units × 2
    sockets = 2
    cores = 10                                # per socket
    clock_ghz = 1.5
    simd_fp32_lanes = 16
    fma_units = 1
    source = "..."

    [peak_flops_per_s]                        # dense; int8/int4 in integer op/s
    fp16 = 71e12                              # fp32 here only without [cpu]/[gpu]

    [sources]                                 # one per figure; memory_bandwidth, memory_capacity, interconnect too
    fp16 = "..."

    [efficiency]                              # optional calibration per op family
    [efficiency_sources]                      # optional: where each efficiency figure comes from

Bounds, checked on reading with one line naming the key and the file (exit 2): a peak or a bandwidth
(memory or interconnect) is a finite number from 1e-3 to 1e30 per second, a capacity at least 1 byte and
at most 1e30 bytes, an efficiency figure from 1e-12 to 1e30 (see :mod:`onnxperf.hardware.spec`); ``inf``,
``nan``, ``5e-324``, an integer of 400 digits and a file nested hundreds of levels deep are refused, never
half-used.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Mapping
from decimal import Decimal
from importlib import resources
from pathlib import Path

from onnxperf.base.errors import OptionError
from onnxperf.hardware.runtimes import apply_runtime, split_runtime, profiles as runtime_profiles
from onnxperf.ui.output import note_input
from onnxperf.ui.tomlfile import parse_toml
from onnxperf.ui.units import MAX_FIGURE, MIN_RATE, shown, within
from onnxperf.hardware.spec import (INTERCONNECT_KEY, KINDS, MIN_EFFICIENCY, PEAK_KEYS, SOURCE_KEYS, HardwareSpec,
                                    MemoryLevel, check_bytes, check_figure, cpu_parts_text, cpu_peak_fp32,
                                    gpu_parts_text, gpu_peak_fp32)

SCHEMA = "onnxperf.hardware/1"
_TOP_KEYS = {"schema", "id", "name", "kind", "notes", "memory_bandwidth_bytes_per_s", "memory_capacity_bytes",
             "memory_capacity_gib", "memory_capacity_gb", "interconnect_bytes_per_s", "cpu", "gpu", "peak_flops_per_s",
             "sources", "efficiency", "efficiency_sources", "memory_levels"}
_CPU_KEYS = {"cores", "clock_ghz", "simd_fp32_lanes", "fma_units", "sockets", "source"}
_GPU_KEYS = {"cores", "clock_ghz", "source"}
_ID_RE = re.compile(r"^[a-z0-9][a-z0-9._-]*$")


# ---------------------------------------------------------------------------------------------- reading

def spec_from_mapping(data: Mapping, origin: str) -> HardwareSpec:
    """Build a spec from parsed TOML; every problem is an :class:`OptionError` naming ``origin``."""
    def bad(msg: str) -> OptionError:
        return OptionError(f"hardware spec {origin}: {msg}")

    unknown = sorted(set(data) - _TOP_KEYS)
    if unknown:
        raise bad(f"unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(_TOP_KEYS))}")
    if data.get("schema", SCHEMA) != SCHEMA:
        raise bad(f"schema {data['schema']!r} is not {SCHEMA!r}")
    for key in ("id", "name", "kind"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise bad(f"{key!r} (a non-empty string) is required")
    spec_id = data["id"]
    if not _ID_RE.match(spec_id):
        raise bad(f"id {spec_id!r} must be lowercase letters, digits, '.', '_' or '-'")
    if data["kind"] not in KINDS:
        raise bad(f"kind must be one of {', '.join(KINDS)}, got {data['kind']!r}")

    peaks = dict(_table(data, "peak_flops_per_s", bad))
    sources = dict(_table(data, "sources", bad))
    efficiency = dict(_table(data, "efficiency", bad))
    for k, v in peaks.items():
        if k not in PEAK_KEYS:
            raise bad(f"unknown peak key {k!r}; known: {', '.join(PEAK_KEYS)}")
        peaks[k] = _number(v, f"peak_flops_per_s.{k}", bad)  # FLOP/s (int8/int4: integer op/s)
    for k, v in sources.items():
        if k not in SOURCE_KEYS:
            raise bad(f"unknown source key {k!r}; known: {', '.join(SOURCE_KEYS)}")
        if not isinstance(v, str) or not v.strip():
            raise bad(f"sources.{k} must be a non-empty string")
    for k, v in efficiency.items():
        efficiency[k] = _number(v, f"efficiency.{k}", bad, MIN_EFFICIENCY, unit="")
    levels = _levels(data.get("memory_levels", []), bad)
    eff_sources = dict(_table(data, "efficiency_sources", bad))
    for k, v in eff_sources.items():
        if k not in efficiency:
            raise bad(f"efficiency_sources.{k}: no efficiency.{k} to be the source of")
        if not isinstance(v, str) or not v.strip():
            raise bad(f"efficiency_sources.{k} must be a non-empty string")

    parts = [t for t in ("cpu", "gpu") if t in data]
    if len(parts) > 1:
        raise bad("give either [cpu] or [gpu] parts, not both")
    if parts:
        table = parts[0]
        if "fp32" in peaks or "fp32" in sources:
            raise bad(f"fp32 is computed from [{table}]: remove peak_flops_per_s.fp32 / sources.fp32 "
                      f"(put the parts' source in [{table}].source)")
        p = dict(_table(data, table, bad))
        allowed = _CPU_KEYS if table == "cpu" else _GPU_KEYS
        required = allowed - {"sockets", "source"}
        if set(p) - allowed or required - set(p):
            raise bad(f"[{table}] takes {', '.join(sorted(required))} (and optional "
                      f"{', '.join(sorted(allowed - required))}); got {', '.join(sorted(p)) or 'nothing'}")
        src = p.pop("source", "")
        try:
            if table == "cpu":
                peaks["fp32"] = cpu_peak_fp32(**p)
                text = cpu_parts_text(**p)
            else:
                peaks["fp32"] = gpu_peak_fp32(**p)
                text = gpu_parts_text(**p)
        except OptionError as exc:
            raise bad(str(exc)) from None
        peaks["fp32"] = _number(peaks["fp32"], f"the fp32 peak that [{table}] gives", bad)
        sources["fp32"] = f"{text}; {src}" if src else text
    elif "fp32" not in peaks:
        raise bad("an fp32 peak is required: peak_flops_per_s.fp32, or [cpu] / [gpu] parts")

    if "memory_bandwidth_bytes_per_s" not in data:
        raise bad("memory_bandwidth_bytes_per_s is required")
    bandwidth = _number(data["memory_bandwidth_bytes_per_s"], "memory_bandwidth_bytes_per_s", bad)
    capacity = _capacity(data, bad)
    link = data.get("interconnect_bytes_per_s")
    if link is not None:  # bytes/s, one direction
        link = _number(link, "interconnect_bytes_per_s", bad)

    # A figure without a stated source says where it came from rather than leaving a gap.
    figures = [*peaks, "memory_bandwidth"] + (["memory_capacity"] if capacity is not None else [])
    figures += [INTERCONNECT_KEY] if link is not None else []
    for k in figures:
        sources.setdefault(k, f"not stated in {origin}")
    extra = sorted(set(sources) - set(figures))
    if extra:
        raise bad(f"source(s) for figures the file does not give: {', '.join(extra)}")
    notes = data.get("notes", "")
    if not isinstance(notes, str):
        raise bad("notes must be a string")
    try:  # the spec checks its own figures too; its message then names the file as well
        return HardwareSpec(id=spec_id, name=data["name"], kind=data["kind"], peak_flops_per_s=peaks,
                            memory_bandwidth_bytes_per_s=bandwidth, memory_capacity_bytes=capacity,
                            sources=sources, notes=notes, efficiency=efficiency, efficiency_sources=eff_sources,
                            memory_levels=levels, interconnect_bytes_per_s=link)
    except OptionError as exc:
        raise bad(str(exc)) from None


def _levels(raw: object, bad) -> tuple[MemoryLevel, ...]:
    """``[[memory_levels]]`` tables: name, capacity_bytes, bandwidth_bytes_per_s, source."""
    if not isinstance(raw, list):
        raise bad("memory_levels must be an array of tables ([[memory_levels]])")
    out = []
    for i, t in enumerate(raw):
        if not isinstance(t, Mapping) or set(t) - {"name", "capacity_bytes", "bandwidth_bytes_per_s", "source"} \
                or not {"name", "capacity_bytes", "bandwidth_bytes_per_s"} <= set(t):
            raise bad(f"memory_levels[{i}] takes name, capacity_bytes, bandwidth_bytes_per_s (and source)")
        try:
            cap = check_bytes(f"memory_levels[{i}].capacity_bytes", t["capacity_bytes"])
        except OptionError as exc:
            raise bad(str(exc)) from None
        src = t.get("source", "not stated")
        if not isinstance(t["name"], str) or not isinstance(src, str):
            raise bad(f"memory_levels[{i}]: name and source must be strings")
        bandwidth = _number(t["bandwidth_bytes_per_s"], f"memory_levels[{i}].bandwidth_bytes_per_s", bad)
        out.append(MemoryLevel(t["name"], cap, bandwidth, src))
    return tuple(out)


def _table(data: Mapping, key: str, bad) -> Mapping:
    t = data.get(key, {})
    if not isinstance(t, Mapping):
        raise bad(f"{key} must be a table ([{key}])")
    return t


def _number(v: object, what: str, bad, low: float = MIN_RATE, unit: str = " per second") -> float:
    """``v`` as a float: a rate from :data:`~onnxperf.ui.units.MIN_RATE` by default, or a figure from
    ``low`` (an efficiency), up to :data:`~onnxperf.ui.units.MAX_FIGURE`; out of range, NaN, infinite or
    past the float range (an int of 400 digits): ``bad``, naming ``what``."""
    try:
        return check_figure(what, v, low, unit=unit)
    except OptionError as exc:
        raise bad(str(exc)) from None


def _capacity(data: Mapping, bad) -> int | None:
    given = [k for k in ("memory_capacity_bytes", "memory_capacity_gib", "memory_capacity_gb") if k in data]
    if not given:
        return None
    if len(given) > 1:
        raise bad(f"give one of {', '.join(given)}")
    key = given[0]
    raw = data[key]
    scale = {"memory_capacity_bytes": 1, "memory_capacity_gib": 2 ** 30, "memory_capacity_gb": 10 ** 9}[key]
    if not within(raw, 0, MAX_FIGURE) or not raw > 0:  # before any conversion: an int of 400 digits, inf, nan
        raise bad(f"{key} must be a positive finite number up to {MAX_FIGURE:g}, got {shown(raw)}")
    exact = (Decimal(raw) if isinstance(raw, int) else Decimal(repr(float(raw)))) * scale
    if exact != exact.to_integral_value():
        raise bad(f"{key} = {shown(raw)} is not a whole number of bytes")
    try:
        return check_bytes(key, int(exact))
    except OptionError as exc:
        raise bad(str(exc)) from None


def read_spec_file(path: str | Path) -> HardwareSpec:
    """Load a user's spec file; unreadable or malformed files raise :class:`OptionError` (one line)."""
    p = Path(path)
    try:
        raw = p.read_bytes()
        note_input(p)
    except FileNotFoundError:
        raise OptionError(f"hardware spec {path}: no such file") from None
    except OSError as exc:
        raise OptionError(f"hardware spec {path}: cannot read: {exc.strerror or exc}") from None
    return _parse(raw, str(path))


def _parse(raw: bytes, origin: str) -> HardwareSpec:
    return spec_from_mapping(parse_toml(raw, f"hardware spec {origin}"), origin)


@functools.lru_cache(maxsize=None)
def _preset_files() -> dict[str, resources.abc.Traversable]:
    folder = resources.files("onnxperf.hardware.presets")
    return {f.name[:-5]: f for f in folder.iterdir() if f.name.endswith(".toml")}


def list_presets() -> list[str]:
    """Ids of the built-in presets, sorted."""
    return sorted(_preset_files())


@functools.lru_cache(maxsize=None)
def load_preset(preset_id: str) -> HardwareSpec:
    """A built-in preset by id; unknown ids raise :class:`OptionError` listing the available ones."""
    files = _preset_files()
    key = preset_id.strip().lower()
    if key not in files:
        profiles = f"; runtime profiles, appended as ID:RUNTIME: {', '.join(sorted(runtime_profiles()))}" if ":" in key else ""
        raise OptionError(f"unknown hardware {preset_id!r}: not a preset id or a .toml file; "
                          f"presets: {', '.join(sorted(files))}{profiles}")
    spec = _parse(files[key].read_bytes(), f"preset {key}")
    if spec.id != key:
        raise OptionError(f"preset file {key}.toml declares id {spec.id!r}")  # pragma: no cover
    return spec


#: ``--hw ID:plain``: the spec without its [efficiency] table, i.e. the plain roofline (an estimate, not a bound)
PLAIN_SUFFIX = ":plain"


def load_spec(name_or_path: str | Path) -> HardwareSpec:
    """A preset id (``rtx3090``) or a path to a spec file (anything with a path separator or ending in ``.toml``);
    either with ``:plain`` appended is that spec without its efficiencies, kernel model and cache levels
    (the plain DRAM roofline: every node at its roof, every tensor through main memory: an estimate, not a
    bound), id suffixed ``:plain``; with ``:RUNTIME`` (``:llama.cpp``) appended, a GPU spec under that
    runtime's profile (:mod:`onnxperf.hardware.runtimes`), id suffixed ``:RUNTIME``."""
    s = str(name_or_path)
    if not isinstance(name_or_path, Path) and s.endswith(PLAIN_SUFFIX) and len(s) > len(PLAIN_SUFFIX):
        base = s[:-len(PLAIN_SUFFIX)]
        if split_runtime(base)[1] is not None:
            raise OptionError(f"--hw {s}: a runtime profile applies to the GPU kernel model, which :plain removes; "
                              f"give one of them")
        spec = load_spec(base)
        return dataclasses.replace(spec, id=spec.id + PLAIN_SUFFIX, efficiency={}, efficiency_sources={},
                                   memory_levels=())
    if not isinstance(name_or_path, Path):
        base, profile = split_runtime(s)
        if profile is not None:
            return apply_runtime(load_spec(base), profile, s)
    if isinstance(name_or_path, Path) or "/" in s or "\\" in s or s.lower().endswith(".toml"):
        return read_spec_file(s)
    return load_preset(s)


# ---------------------------------------------------------------------------------------------- writing

def to_toml(spec: HardwareSpec, header: str = "") -> str:
    """The spec as a TOML spec file (written by hand: no extra dependency). ``load_spec`` reads it back
    equal. ``header`` lines become ``#`` comments at the top."""
    out = [f"# {line}".rstrip() for line in header.splitlines()]
    out += [f"schema = {_str(SCHEMA)}", f"id = {_str(spec.id)}", f"name = {_str(spec.name)}",
            f"kind = {_str(spec.kind)}",
            f"memory_bandwidth_bytes_per_s = {_float(spec.memory_bandwidth_bytes_per_s)}"]
    cap = spec.memory_capacity_bytes
    if cap is not None:
        gib = f"  # {cap / 2 ** 30:g} GiB" if cap % 2 ** 20 == 0 else ""
        out.append(f"memory_capacity_bytes = {cap}{gib}")
    link = spec.interconnect_bytes_per_s
    if link is not None:
        out.append(f"interconnect_bytes_per_s = {_float(link)}")
    if spec.notes:
        out.append(f"notes = {_str(spec.notes)}")
    out += ["", "[peak_flops_per_s]  # dense; int8/int4 in integer op/s"]
    out += [f"{k} = {_float(spec.peak_flops_per_s[k])}" for k in PEAK_KEYS if k in spec.peak_flops_per_s]
    out += ["", "[sources]"]
    order = [k for k in SOURCE_KEYS if k in spec.sources]
    out += [f"{k} = {_str(spec.sources[k])}" for k in order]
    if spec.efficiency:
        out += ["", "[efficiency]"]
        out += [f"{_key(k)} = {_float(v)}" for k, v in sorted(spec.efficiency.items())]
    if spec.efficiency_sources:
        out += ["", "[efficiency_sources]"]
        out += [f"{_key(k)} = {_str(v)}" for k, v in sorted(spec.efficiency_sources.items())]
    for lv in spec.memory_levels:
        out += ["", "[[memory_levels]]", f"name = {_str(lv.name)}", f"capacity_bytes = {lv.capacity_bytes}",
                f"bandwidth_bytes_per_s = {_float(lv.bandwidth_bytes_per_s)}", f"source = {_str(lv.source)}"]
    return "\n".join(out) + "\n"


def _float(x: float) -> str:
    """Shortest exact TOML float, in engineering notation for large values: 35.6864e12, 936e9."""
    x = float(x)
    d = Decimal(repr(x))
    for exp in (15, 12, 9, 6, 3):
        if x >= 10 ** exp:
            mant = format(d.scaleb(-exp).normalize(), "f")
            text = f"{mant}e{exp}"
            return text if float(text) == x else repr(x)
    return repr(x)


_ESC = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r", "\b": "\\b", "\f": "\\f"}


def _str(s: str) -> str:
    """A TOML basic string."""
    return '"' + "".join(_ESC.get(c) or (f"\\u{ord(c):04x}" if ord(c) < 0x20 or ord(c) == 0x7F else c)
                         for c in s) + '"'


def _key(k: str) -> str:
    return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else _str(k)
