"""Does a hardware spec describe the machine that ``validate`` measures on? (issue 18, point 4)

A validation compares a prediction for the spec's machine with a measurement on this one: when
they are not the same machine, the error figures measure the gap between two machines, not the
model's accuracy. Said, never silent:

* a GPU spec (``kind = "gpu"``) measured with a CPU execution provider, or a CPU or SoC spec with a
  GPU provider;
* a spec measured by ``hw probe`` / ``hw calibrate`` on another CPU (its notes begin with the CPU
  model and logical CPU count the probe saw) or on this CPU model with another CPU count;
* a CPU or SoC preset whose name shares no word with this machine's CPU model (the ``epyc-9654``
  preset on an Intel laptop);
* a spec calibrated at another number of onnxruntime threads than the run uses (:func:`threads_mismatch`).
"""

from __future__ import annotations

import re
from onnxperf.hardware.probe import detect_cpu
from onnxperf.predict.ort_threads import THREADS_KEY

#: onnxruntime providers that run on a GPU (or another accelerator); the others run on the CPU
GPU_PROVIDERS = frozenset({"CUDAExecutionProvider", "TensorrtExecutionProvider", "ROCMExecutionProvider",
                           "MIGraphXExecutionProvider", "DmlExecutionProvider", "CoreMLExecutionProvider",
                           "QNNExecutionProvider", "WebGpuExecutionProvider", "CANNExecutionProvider"})

_WORD = re.compile(r"[a-z0-9]+")
#: words of CPU model names that say nothing of which CPU it is
_GENERIC = frozenset({"cpu", "processor", "core", "cores", "with", "radeon", "graphics", "the", "of", "ghz",
                      "r", "tm", "inc", "corporation", "probed", "logical", "socket", "sockets", "x", "gen"})


def _words(text: str) -> set[str]:
    """The words of a CPU name that tell CPUs apart: no generic words, no short plain numbers."""
    return {w for w in _WORD.findall(text.lower()) if w not in _GENERIC and not (w.isdigit() and len(w) < 3)}


def _same_cpu(spec_name: str, cpu_model: str) -> bool:
    """Does the spec's CPU name name this CPU? Its model numbers (words with a digit: ``9654``,
    ``m2``, ``i7-1185g7``) must all be in this CPU's name; without any, one shared word will do."""
    mine, theirs = _words(cpu_model), _words(spec_name.split("(")[0])  # "AMD EPYC 9654 (generic ...)"
    numbers = {w for w in theirs if any(c.isdigit() for c in w)}
    return numbers <= mine if numbers else bool(theirs & mine)


def probed_machine(spec) -> tuple[str, int | None] | None:
    """(CPU model, logical CPUs) a spec from ``hw probe`` was measured on, read from its notes;
    None for a spec that was not probed."""
    sources = " ".join(dict(getattr(spec, "sources", {}) or {}).values())
    if "hw probe" not in sources:
        return None
    notes = getattr(spec, "notes", "") or ""
    model = notes.split(";", 1)[0].strip()
    m = re.search(r"(\d+) logical CPUs", notes)
    return model, int(m.group(1)) if m else None


def mismatch(spec, providers: tuple[str, ...] | list[str], cpu_model: str | None = None,
             logical_cpus: int | None = None) -> list[str]:
    """Why ``spec`` may not describe the machine the providers run on (empty when nothing says so).
    ``cpu_model`` and ``logical_cpus`` default to this machine's (:func:`onnxperf.hardware.probe.detect_cpu`)."""
    if cpu_model is None or logical_cpus is None:

        cpu = detect_cpu()
        cpu_model = cpu_model if cpu_model is not None else cpu.model
        logical_cpus = logical_cpus if logical_cpus is not None else cpu.logical_cpus
    on_gpu = bool(providers) and providers[0] in GPU_PROVIDERS
    kind = getattr(spec, "kind", "cpu")
    label = f"{getattr(spec, 'name', spec.id)} [{spec.id}]"
    out: list[str] = []
    if kind == "gpu" and not on_gpu:
        out.append(f"the spec describes a GPU ({label}) but onnxruntime ran on the CPU ({providers[0] if providers else '?'}): "
                   "the error figures compare two machines; give a spec of this machine (onnxperf hw probe / "
                   "hw calibrate) or a GPU provider")
        return out
    if kind != "gpu" and on_gpu:
        out.append(f"the spec describes a {kind.upper()} ({label}) but onnxruntime ran on {providers[0]}: the error "
                   "figures compare two machines; give the GPU's preset")
        return out
    if on_gpu:
        return out  # which GPU this is cannot be told from here
    probed = probed_machine(spec)
    if probed is not None:
        model, cpus = probed
        if model and _words(model) and not _same_cpu(model, cpu_model):
            out.append(f"the spec was measured on another CPU ({model!r}); this machine is {cpu_model!r}: "
                       "run onnxperf hw calibrate here")
        elif cpus is not None and cpus != logical_cpus:
            out.append(f"the spec was measured with {cpus} logical CPUs; this machine has {logical_cpus}: "
                       "run onnxperf hw calibrate here")
        return out
    name = getattr(spec, "name", "") or ""
    if _words(name) and not _same_cpu(name, cpu_model):
        out.append(f"the spec describes another machine ({label}); this machine is {cpu_model!r}: the error "
                   "figures compare two machines; measure this one with onnxperf hw probe or hw calibrate")
    return out


#: a run whose nodes' host time is at least this share of its latency is host-bound (:func:`gpu_node_times`)
HOST_BOUND_SHARE = 0.7


def gpu_node_times(providers: tuple[str, ...] | list[str], host_s: float, latency_s: float) -> tuple[str, bool | None, list[str]]:
    """What a run's per-node times are, whether the run was bound by the host, and what to say.

    On a GPU provider onnxruntime's profiler times each node's work on the host (its kernels are
    launched and run asynchronously; the published builds have no CUDA profiling), so the per-node
    figures compare launch times with the GPU's predicted kernel times: ``("host", ...)``. When those
    host times add up to :data:`HOST_BOUND_SHARE` of the run's latency or more, the GPU waited on the
    host: the run measured onnxruntime's dispatch, not the GPU, and the end-to-end error says how much
    faster the GPU's work is than its launches (measured on an H200: ResNet-50 at batch 1, 122 nodes,
    2.3 ms of launches against 1.44 ms per run; at batch 32 3.7 ms against 8.3 ms: not host-bound,
    benchmarks/results/ort_cuda.md). On the CPU the nodes' times are their kernels': ``("kernel",
    None, [])``."""
    if not providers or providers[0] not in GPU_PROVIDERS:
        return "kernel", None, []
    p = providers[0]
    out = [f"onnxruntime's profiler times each node's launch on the host on {p} (its kernels run asynchronously): "
           "the per-node figures compare launch times with the GPU's predicted kernel times, not kernels"]
    bound = latency_s > 0 and host_s >= HOST_BOUND_SHARE * latency_s
    if bound:
        out.append(f"host-bound run: the nodes' launches took {host_s * 1e3:.3g} ms per run on the host against "
                   f"{latency_s * 1e3:.3g} ms measured, so the GPU waited on them; the prediction is the GPU's time "
                   "(a runtime that fuses and replays a captured CUDA graph, e.g. TensorRT, approaches it) and the "
                   "end-to-end error measures onnxruntime's dispatch, not the model: a larger batch gives the GPU "
                   "more work per launch")
    return "host", bound, out



def pool_threads(threads: int | None) -> int:
    """The degree of parallelism of onnxruntime's intra-op pool at ``threads`` (None: onnxruntime's default, one
    thread per physical core this process may run on)."""
    return threads if threads else detect_cpu().physical_cores


def threads_mismatch(spec, threads: int | None) -> str | None:
    """Why a calibrated spec may not describe a run at ``threads`` (None: onnxruntime's default): it was
    calibrated at another pool (``runtime.threads``), so its efficiencies, the pool's dispatch and the kernels
    that run on fewer threads describe that pool; None when they agree or the spec does not say."""
    calibrated = float((getattr(spec, "efficiency", None) or {}).get(THREADS_KEY, 0))
    if not calibrated:
        return None
    pool = pool_threads(threads)
    if pool == int(calibrated):
        return None
    return (f"the spec was calibrated at {int(calibrated)} onnxruntime thread{'s' if calibrated != 1 else ''} and this "
            f"run used {pool}: its efficiencies and per-kernel threads describe {int(calibrated)}; calibrate with "
            f"--threads {pool} for this setting")
