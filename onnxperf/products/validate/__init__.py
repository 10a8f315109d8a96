"""Measurement layer of ``onnxperf validate``: run a model in onnxruntime and map the measured
kernel times back onto the nodes of the original file.

* :mod:`.inputs`  — deterministic random inputs that respect embedding tables and masks;
* :mod:`.weights` — a runnable copy of a model whose external weight files are missing;
* :mod:`.runner`  — onnxruntime in a child process, with a time limit, latencies and profile;
* :mod:`.profile` — onnxruntime's profiler JSON -> per-node times of the timed runs;
* :mod:`.mapping` — measured (optimized) nodes -> groups of original nodes.
"""

from __future__ import annotations

from onnxperf.products.validate.inputs import make_inputs, memory_needed_bytes
from onnxperf.products.validate.mapping import Group, Mapping, map_groups
from onnxperf.products.validate.profile import NodeTiming, parse_profile
from onnxperf.products.validate.runner import LatencyStats, RunResult, RuntimeRunError, latency_stats, run_session
from onnxperf.products.validate.weights import missing_weights, with_random_weights

__all__ = [
    "Group", "LatencyStats", "Mapping", "NodeTiming", "RunResult", "RuntimeRunError", "latency_stats",
    "make_inputs", "map_groups", "memory_needed_bytes", "missing_weights", "parse_profile", "run_session",
    "with_random_weights",
]
