"""Hardware specs for the roofline: dense peak rates per dtype, memory bandwidth and capacity, each with its
source; built-in presets shipped as TOML files; user spec files; and ``probe`` to measure this machine.

    >>> from onnxperf.hardware import load_spec
    >>> spec = load_spec("rtx3090")            # a preset id, or a path to a .toml spec file
    >>> round(spec.ridge_point("fp32"), 1)
    38.1
"""

from __future__ import annotations

from onnxperf.hardware.files import list_presets, load_preset, load_spec, read_spec_file, spec_from_mapping, to_toml
from onnxperf.hardware.spec import FALLBACKS, KINDS, PEAK_KEYS, HardwareSpec, cpu_from_parts, cpu_peak_fp32, gpu_peak_fp32, peak_key

__all__ = [
    "FALLBACKS", "KINDS", "PEAK_KEYS", "HardwareSpec", "cpu_from_parts", "cpu_peak_fp32", "gpu_peak_fp32",
    "list_presets", "load_preset", "load_spec", "peak_key", "read_spec_file", "spec_from_mapping", "to_toml",
]
