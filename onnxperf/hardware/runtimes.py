"""Runtime profiles: the share of a GPU a serving runtime's own kernels attain, applied to a spec.

A GPU preset's kernel-model constants (``[efficiency]``: ``default.memory``, ``matmul.compute``...) are
fitted on TensorRT-class runtimes (TensorRT, TensorRT-LLM, vLLM: ``benchmarks/gpu_realism.py``,
``benchmarks/llm_realism.py``), whose kernels stream near the data sheet's bandwidth. Other runtimes'
kernels attain less, and not by one factor: llama.cpp decodes Llama-3-8B at batch 1 within 5-10% of the
bandwidth bound on an RTX 4090 or an L40S (GDDR) and at about 45% of it on an A100 or an H100 (HBM).

``--hw ID:RUNTIME`` (``--hw a100-80gb:llama.cpp``; a spec file path too: ``my.toml:llama.cpp``) is the
spec with the profile applied (:func:`apply_runtime`): its id carries the runtime, so every output that
names the spec names the runtime, and its ``efficiency_sources`` say how each figure was derived.

A profile holds (``runtimes.toml`` beside this module, fitted by ``python benchmarks/llm_realism.py
--fit-runtime --write`` on the fit half of that runtime's published rows, scored on the other half):

* ``memory.share`` (s): the share of the data-sheet bandwidth its kernels stream at when the GPU's
  memory system is the limit;
* ``memory.sm_bytes_per_s`` (b): the bytes per second one SM of its memory-bound kernels streams (Little's
  law: the bytes a kernel keeps in flight per SM over the memory's latency; a matrix-vector kernel with
  few loads in flight cannot cover HBM's latency with more SMs than it has). The spec's memory share
  becomes ``e_m = min(s, N_SM · b / β)``, N_SM the spec's ``gpu.sms``, β its DRAM bandwidth; every
  kernel's memory time is charged at ``e_m`` (an L2-served byte too: the kernel model scales both levels
  by one share; a decode step streams its weights from DRAM);
* ``band.llm.*``: the error band of the profile's own held-out rows, replacing the class's band (which
  describes TensorRT-class runs).

Other constants (the GEMM share, the launch overhead) stay the preset's: the profile's rows are
memory-bound decode steps, which do not measure them (the page, ``benchmarks/results/llm_realism.md``,
shows its prefill rows stay off).

A profile may instead (or also) **set** kernel-model figures as they are: ``mlperf``, NVIDIA's MLPerf
Inference harness (TensorRT with NVIDIA's own int8 plugins, CUDA graphs, and a batch chosen per GPU so
that activations stay in the L2), sets ``conv.compute`` (the share of the tensor peak its convolutions
attain) and ``gpu.l2_writes`` = 1 (an output that fits the L2 is charged there:
:mod:`onnxperf.predict.reuse`), fitted by ``python benchmarks/gpu_realism.py --fit --write`` on the fit
half of the published MLPerf ResNet-50 rows and scored on the other half. Its band is a CNN one
(``band.*``: the held-out MLPerf rows), and the class's decoder band (``band.llm.*``) is dropped.

A profile's band replaces the class's band of the same kind (``band.llm.*`` for a profile of decode
rows, ``band.*`` for one of CNN / BERT rows); the class's band of the other kind is dropped: no
published row measures those models under the profile, so no figure under it claims a band it does
not have.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

from onnxperf.base.errors import OptionError
from onnxperf.ui.tomlfile import parse_toml

#: the two kinds of band: decoder rows (``band.llm.*``) and CNN / BERT rows (``band.*``)
LLM_BAND = ("band.llm.p10", "band.llm.p90", "band.llm.points")
CNN_BAND = ("band.p10", "band.p90", "band.points")
#: the memory model's keys (the llama.cpp kind of profile)
MEMORY_KEYS = ("memory.share", "memory.sm_bytes_per_s")


@dataclass(frozen=True)
class RuntimeProfile:
    """One runtime's kernels: see the module docstring. ``memory_share`` and ``sm_bytes_per_s``: the
    memory model (None: the preset's memory share stays); ``sets``: kernel-model figures set as they
    are; ``band``: (p10, p90, points) of its held-out rows, of kind ``band_kind`` ("llm" or "cnn");
    ``sources`` holds one line per figure."""

    id: str
    name: str
    memory_share: float | None
    sm_bytes_per_s: float | None
    band: tuple[float, float, int] | None
    sources: Mapping[str, str] = dataclasses.field(hash=False)
    sets: Mapping[str, float] = dataclasses.field(default_factory=dict, hash=False)
    band_kind: str = "llm"
    #: the makers whose GPUs the runtime runs on, as a spec's name starts (empty: any)
    vendors: tuple[str, ...] = ()

    def memory_efficiency(self, spec: Any) -> tuple[float, str]:
        """``min(s, N_SM · b / β)`` on ``spec`` and the sentence saying which side held."""
        if self.memory_share is None or self.sm_bytes_per_s is None:
            raise ValueError(f"the {self.name} runtime profile has no memory model")
        sms = float(spec.efficiency["gpu.sms"])
        beta = float(spec.memory_bandwidth_bytes_per_s)
        cap = sms * self.sm_bytes_per_s / beta
        e = min(self.memory_share, cap)
        held = (f"{sms:g} SMs x {self.sm_bytes_per_s / 1e9:g} GB/s per SM / {beta / 1e9:,.0f} GB/s = {cap:.3f}: its "
                f"kernels cannot keep enough bytes in flight to cover this memory's latency" if cap < self.memory_share
                else f"{sms:g} SMs x {self.sm_bytes_per_s / 1e9:g} GB/s per SM / {beta / 1e9:,.0f} GB/s = {cap:.3f} "
                     f"is above the share: the memory system is the limit")
        return e, (f"{self.name} runtime profile: min({self.memory_share:g} (the share of the data-sheet bandwidth "
                   f"its kernels stream at), {held}) = {e:.3f}; {self.sources.get('memory.sm_bytes_per_s', '')}")

    @property
    def band_keys(self) -> tuple[str, str, str]:
        """The spec keys its band takes (the other kind is dropped)."""
        return LLM_BAND if self.band_kind == "llm" else CNN_BAND


@functools.lru_cache(maxsize=None)
def profiles() -> dict[str, RuntimeProfile]:
    """The shipped profiles by id (``runtimes.toml``)."""
    raw = resources.files("onnxperf.hardware").joinpath("runtimes.toml").read_bytes()
    data = parse_toml(raw, "onnxperf/hardware/runtimes.toml")
    out = {}
    for pid, t in data.get("runtime", {}).items():
        eff = dict(t["efficiency"])
        kind = t.get("band", "llm")
        keys = LLM_BAND if kind == "llm" else CNN_BAND
        band = tuple(float(eff.pop(k)) for k in keys[:2]) + (int(eff.pop(keys[2])),) if set(keys) <= set(eff) else None
        mem = [eff.pop(k, None) for k in MEMORY_KEYS]
        out[pid] = RuntimeProfile(pid, t["name"], None if mem[0] is None else float(mem[0]),
                                  None if mem[1] is None else float(mem[1]), band, dict(t.get("sources", {})),
                                  {k: float(v) for k, v in sorted(eff.items())}, kind, tuple(t.get("vendors", ())))
    return out


def split_runtime(name: str) -> tuple[str, RuntimeProfile | None]:
    """``a100-80gb:llama.cpp`` -> ("a100-80gb", the llama.cpp profile); a name without a known profile
    suffix is returned whole with None."""
    base, sep, tail = name.rpartition(":")
    if sep and base and tail.lower() in profiles():
        return base, profiles()[tail.lower()]
    return name, None


def apply_runtime(spec: Any, profile: RuntimeProfile, asked: str) -> Any:
    """``spec`` under ``profile`` (module docstring), id ``<spec id>:<profile id>``. A spec without the GPU
    kernel model (a CPU, a plain roofline, a file without ``gpu.sms``; a Jetson's GPU has it) is refused:
    the profile describes GPU kernels under that model (:class:`OptionError`, exit 2); so is a GPU of
    another maker than the runtime's (``vendors``: NVIDIA's MLPerf harness on an AMD GPU)."""
    eff = dict(getattr(spec, "efficiency", None) or {})
    if spec.kind not in ("gpu", "soc") or "gpu.sms" not in eff or "fusion.gpu" not in eff:
        raise OptionError(f"--hw {asked}: the {profile.id} runtime profile ({profile.name}) describes GPU kernels under "
                          f"the kernel model; {spec.id} is not such a GPU spec ({spec.kind}, no [efficiency] gpu.sms / "
                          f"fusion.gpu)")
    if profile.vendors and not str(spec.name).startswith(profile.vendors):
        raise OptionError(f"--hw {asked}: the {profile.id} runtime profile ({profile.name}) runs on "
                          f"{' or '.join(profile.vendors)} GPUs only; {spec.id} is {spec.name}")
    src = dict(getattr(spec, "efficiency_sources", None) or {})
    if profile.memory_share is not None:
        e_m, why = profile.memory_efficiency(spec)
        eff["default.memory"], src["default.memory"] = e_m, why
    for k, v in profile.sets.items():
        eff[k], src[k] = v, f"{profile.name} runtime profile: {profile.sources.get(k, '')}"
    for k in LLM_BAND + CNN_BAND:
        eff.pop(k, None)
        src.pop(k, None)
    if profile.band is not None:
        for k, v in zip(profile.band_keys, profile.band):
            eff[k], src[k] = v, profile.sources.get("band", profile.sources.get("band.llm", ""))
    return dataclasses.replace(spec, id=f"{spec.id}:{profile.id}", name=f"{spec.name}, under {profile.name}",
                               efficiency=eff, efficiency_sources=src)


__all__ = ["RuntimeProfile", "apply_runtime", "profiles", "split_runtime"]
