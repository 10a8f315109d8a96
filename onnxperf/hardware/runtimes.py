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
  describes TensorRT-class runs); the CNN / BERT band (``band.*``) is dropped: no published row measures
  those models under this runtime, so no figure under it claims a band it does not have.

Other constants (the GEMM share, the launch overhead) stay the preset's: the profile's rows are
memory-bound decode steps, which do not measure them (the page, ``benchmarks/results/llm_realism.md``,
shows its prefill rows stay off).
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

#: the profile keys a spec's efficiency takes over whole (the class's LLM band, replaced by the profile's)
BAND_KEYS = ("band.llm.p10", "band.llm.p90", "band.llm.points")
#: the class's CNN / BERT band: dropped under a profile (no published row measures those models under it)
DROPPED = ("band.p10", "band.p90", "band.points")


@dataclass(frozen=True)
class RuntimeProfile:
    """One runtime's kernels: see the module docstring. ``sources`` holds one line per figure."""

    id: str
    name: str
    memory_share: float
    sm_bytes_per_s: float
    band: tuple[float, float, int] | None
    sources: Mapping[str, str] = dataclasses.field(hash=False)

    def memory_efficiency(self, spec: Any) -> tuple[float, str]:
        """``min(s, N_SM · b / β)`` on ``spec`` and the sentence saying which side held."""
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


@functools.lru_cache(maxsize=None)
def profiles() -> dict[str, RuntimeProfile]:
    """The shipped profiles by id (``runtimes.toml``)."""
    raw = resources.files("onnxperf.hardware").joinpath("runtimes.toml").read_bytes()
    data = parse_toml(raw, "onnxperf/hardware/runtimes.toml")
    out = {}
    for pid, t in data.get("runtime", {}).items():
        eff = t["efficiency"]
        band = (tuple(float(eff[k]) for k in BAND_KEYS[:2]) + (int(eff[BAND_KEYS[2]]),)
                if set(BAND_KEYS) <= set(eff) else None)
        out[pid] = RuntimeProfile(pid, t["name"], float(eff["memory.share"]), float(eff["memory.sm_bytes_per_s"]),
                                  band, dict(t.get("sources", {})))
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
    kernel model (a CPU, a plain roofline, a file without ``gpu.sms``) is refused: the profile describes
    GPU kernels under that model (:class:`OptionError`, exit 2)."""
    eff = dict(getattr(spec, "efficiency", None) or {})
    if spec.kind != "gpu" or "gpu.sms" not in eff or "fusion.gpu" not in eff:
        raise OptionError(f"--hw {asked}: the {profile.name} runtime profile describes GPU kernels under the kernel "
                          f"model; {spec.id} is not such a GPU spec ({spec.kind}, no [efficiency] gpu.sms / fusion.gpu)")
    src = dict(getattr(spec, "efficiency_sources", None) or {})
    e_m, why = profile.memory_efficiency(spec)
    eff["default.memory"], src["default.memory"] = e_m, why
    for k in DROPPED + BAND_KEYS:
        eff.pop(k, None)
        src.pop(k, None)
    if profile.band is not None:
        for k, v in zip(BAND_KEYS, profile.band):
            eff[k], src[k] = v, profile.sources.get("band.llm", "")
    return dataclasses.replace(spec, id=f"{spec.id}:{profile.id}", name=f"{spec.name}, under {profile.name}",
                               efficiency=eff, efficiency_sources=src)


__all__ = ["RuntimeProfile", "apply_runtime", "profiles", "split_runtime"]
