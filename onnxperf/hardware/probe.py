"""``onnxperf hw probe``: measure this machine's attainable fp32 compute and memory bandwidth.

* fp32 compute, two ways: an FMA-bound kernel compiled with numba (``prange`` over all threads; each
  element carries 8 independent FMA chains of 16 steps, so the loop is throughput-bound, not
  latency-bound, and works on an L1-resident buffer), and a large sgemm through numpy's BLAS.
* memory bandwidth: STREAM-style copy (``c = a``, 16 B per element) and triad (``a = b + s*c``, 24 B per
  element), numba ``prange`` over float64 arrays of at least 4x the last-level cache each. Bytes are
  counted as STREAM counts them (write-allocate traffic not included).

Each kernel runs once untimed (compile, page faults), then ``repeats`` times; best and median are
reported. The theoretical fp32 figure is cores x clock x SIMD lanes x FMA units x 2 from /proc/cpuinfo
and sysfs, with every assumption stated. The measured fp32 figures are judged against it: one above the
CPU's ceiling is refused (a timer or a kernel that did not do its work), and a best figure under its
floor, 1/20 of the theoretical peak, refuses the whole probe (a busy or throttling machine): no spec is
written from either, exit 2. The measuring (:func:`measure`) is apart from the judging
(:func:`run_probe`), so the judging is tested on figures given, not on how busy the machine is.
``short=True`` uses tiny sizes and 2 repeats: for tests, not for figures (a figure under the floor is a
warning there).

Library code: nothing is printed; pass ``progress`` to hear what is running.
"""

from __future__ import annotations

import dataclasses

import datetime as _dt
import functools
import math
import os
import platform
import re
import socket
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from onnxperf.base.errors import OptionError
from onnxperf.hardware.spec import HardwareSpec, cpu_peak_fp32
from onnxperf.hardware.levels import LevelsResult, measure_levels
from onnxperf.hardware.spec import MemoryLevel

FMA_CHAINS = 8    # independent accumulators per element: 8 vectors in flight cover 2 FMA units x 4 cycles latency
FMA_STEPS = 16    # dependent FMA steps per chain per pass over the buffer
DEFAULT_REPEATS = 7
#: a clock no shipping CPU core exceeds (the fastest boost, 2024-26, is 6.2 GHz): the ceiling of a
#: measured fp32 figure when the CPU's own maximum clock is not visible (VMs)
MAX_PLAUSIBLE_GHZ = 6.2
#: A measured fp32 figure under this share of the theoretical peak (cores x detected clock x SIMD lanes x
#: FMA units x 2) is not this CPU's speed but a busy or throttling machine: the floor, the counterpart of
#: the ceiling. On an idle machine the FMA kernel and sgemm reach 25-90% of it (on the 2-core AVX-512 VM
#: that wrote this, with other work using 50-100% of its CPUs: sgemm 124 and FMA 72 of 320 GFLOP/s, 39%
#: and 22%). 1/20 leaves room for what lowers the share honestly (a clock that boost never holds under
#: AVX-512, one FMA unit where two were assumed, a BLAS that misses the widest SIMD), and still refuses
#: the probe that wrote 0.98 of 156 GFLOP/s (0.6%) on a loaded machine (issue 28, item 13).
MIN_PLAUSIBLE_SHARE = 1 / 20
#: runs whose median is this much slower than the best one disagree: a busy or throttling machine
SPREAD_WARNING = 0.10
_FALLBACK_ARRAY_BYTES = 256 * 2 ** 20

_SYS_CPU = Path("/sys/devices/system/cpu")


# ---------------------------------------------------------------------------------------------- the CPU

@dataclass(frozen=True)
class CpuInfo:
    """What the probe could learn about this CPU, and what it had to assume (``assumptions``)."""

    model: str
    machine: str
    logical_cpus: int
    physical_cores: int
    sockets: int
    isa: str
    simd_fp32_lanes: int | None
    fma_units: int | None
    clock_ghz: float | None
    clock_source: str
    llc_bytes: int | None
    llc_source: str
    assumptions: tuple[str, ...] = ()

    @property
    def theoretical_fp32_flops_per_s(self) -> float | None:
        """physical cores x clock x SIMD fp32 lanes x FMA units x 2, or None when a part is unknown."""
        if not (self.clock_ghz and self.simd_fp32_lanes and self.fma_units):
            return None
        return cpu_peak_fp32(self.physical_cores, round(self.clock_ghz, 6), self.simd_fp32_lanes, self.fma_units)

    @property
    def fp32_ceiling(self) -> tuple[float, str] | None:
        """(FLOP/s, how) above which a measured fp32 figure is impossible on this CPU: the
        theoretical formula at the cpufreq maximum clock + 5% when sysfs gives it, else at
        :data:`MAX_PLAUSIBLE_GHZ` (no shipping core runs faster; a VM's /proc/cpuinfo shows a
        nominal or current clock, which boost exceeds). None when the SIMD width is unknown."""
        if not (self.simd_fp32_lanes and self.fma_units):
            return None
        if self.clock_ghz and self.clock_source.startswith("cpufreq maximum"):
            clock, why = self.clock_ghz * 1.05, f"the cpufreq maximum clock {self.clock_ghz:.3f} GHz + 5%"
        else:
            clock, why = MAX_PLAUSIBLE_GHZ, f"{MAX_PLAUSIBLE_GHZ} GHz, above any shipping core's boost clock"
        value = cpu_peak_fp32(self.physical_cores, clock, self.simd_fp32_lanes, self.fma_units)
        return value, (f"{self.physical_cores} cores x {why} x {self.simd_fp32_lanes} fp32 lanes ({self.isa}) x "
                       f"{self.fma_units} FMA units x 2")

    @property
    def fp32_floor(self) -> tuple[float, str] | None:
        """(FLOP/s, how) below which a measured fp32 figure says the machine was busy or throttling, not
        what this CPU can do: :data:`MIN_PLAUSIBLE_SHARE` of the theoretical peak. None when that peak is
        not derivable (no floor is guessed)."""
        theory = self.theoretical_fp32_flops_per_s
        if theory is None:
            return None
        return theory * MIN_PLAUSIBLE_SHARE, (f"1/{round(1 / MIN_PLAUSIBLE_SHARE)} of the theoretical "
                                              f"{_fmt_rate(theory, 'FLOP/s')} = {self.theoretical_text()}")

    def theoretical_text(self) -> str:
        if self.theoretical_fp32_flops_per_s is None:
            return "not derivable (" + "; ".join(self.assumptions or ("unknown SIMD width or clock",)) + ")"
        return (f"{self.physical_cores} cores x {self.clock_ghz:.3f} GHz ({self.clock_source}) x "
                f"{self.simd_fp32_lanes} fp32 lanes ({self.isa}) x {self.fma_units} FMA units x 2")

    def to_dict(self) -> dict:
        return {
            "model": self.model, "machine": self.machine, "logical_cpus": self.logical_cpus,
            "physical_cores": self.physical_cores, "sockets": self.sockets, "isa": self.isa,
            "simd_fp32_lanes": self.simd_fp32_lanes, "fma_units": self.fma_units, "clock_ghz": self.clock_ghz,
            "clock_source": self.clock_source, "llc_bytes": self.llc_bytes, "llc_source": self.llc_source,
            "theoretical_fp32_flops_per_s": self.theoretical_fp32_flops_per_s,
            "theoretical": self.theoretical_text(), "assumptions": list(self.assumptions),
        }


def _read(path: Path | str) -> str | None:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


def _cpuinfo_fields() -> dict[str, str]:
    """The first processor block of /proc/cpuinfo (plus any machine-wide lines), lower-cased keys."""
    text = _read("/proc/cpuinfo") or ""
    out: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            out.setdefault(key.strip().lower(), value.strip())
    return out


def _size_bytes(text: str) -> int | None:
    m = re.fullmatch(r"(\d+)\s*([KMG]?)i?B?", text.strip(), re.IGNORECASE)
    if not m:
        return None
    return int(m.group(1)) * {"": 1, "K": 2 ** 10, "M": 2 ** 20, "G": 2 ** 30}[m.group(2).upper()]


def _available_cpus() -> list[int]:
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return list(range(os.cpu_count() or 1))


def _topology(cpus: list[int]) -> tuple[int, int]:
    """(physical cores, sockets) among ``cpus``; SMT siblings count once."""
    cores, packages = set(), set()
    for c in cpus:
        pkg = _read(_SYS_CPU / f"cpu{c}/topology/physical_package_id")
        core = _read(_SYS_CPU / f"cpu{c}/topology/core_id")
        if pkg is None or core is None:
            return len(cpus), 1
        cores.add((pkg, core))
        packages.add(pkg)
    return max(1, len(cores)), max(1, len(packages))


def _llc(cpus: list[int]) -> tuple[int | None, str]:
    """Total last-level cache across the caches ``cpus`` use (an L3 per CCX counts once per CCX)."""
    best_level, size, instances = -1, None, set()
    for c in cpus:
        for idx in sorted((_SYS_CPU / f"cpu{c}/cache").glob("index*")):
            if _read(idx / "type") not in ("Unified", "Data"):
                continue
            level = int(_read(idx / "level") or -1)
            s = _size_bytes(_read(idx / "size") or "")
            shared = _read(idx / "shared_cpu_list") or str(c)
            if s is None:
                continue
            if level > best_level:
                best_level, size, instances = level, s, set()
            if level == best_level:
                instances.add(shared)
    if size is None:
        return None, f"not found in sysfs: arrays of {_FALLBACK_ARRAY_BYTES // 2 ** 20} MiB each"
    total = size * max(1, len(instances))
    return total, (f"L{best_level} {size // 2 ** 20 if size >= 2 ** 20 else size // 1024}"
                   f"{' MiB' if size >= 2 ** 20 else ' KiB'} x {max(1, len(instances))} (sysfs)")


def _clock(fields: dict[str, str]) -> tuple[float | None, str]:
    base = _SYS_CPU / "cpu0/cpufreq"
    for name, what in (("cpuinfo_max_freq", "cpufreq maximum (boost) clock"),
                       ("base_frequency", "cpufreq base clock")):
        v = _read(base / name)
        if v and v.isdigit() and int(v) > 0:
            return int(v) / 1e6, what
    m = re.search(r"@\s*([\d.]+)\s*GHz", fields.get("model name", ""))
    if m:
        return float(m.group(1)), "model name"
    mhz = fields.get("cpu mhz")
    if mhz:
        try:
            return float(mhz) / 1e3, "/proc/cpuinfo 'cpu MHz': the current or, in a VM, nominal clock"
        except ValueError:
            pass
    return None, "unknown"


def _simd(fields: dict[str, str], machine: str) -> tuple[str, int | None, int | None, list[str]]:
    flags = set((fields.get("flags") or fields.get("features") or "").split())
    vendor = fields.get("vendor_id", "")
    notes: list[str] = []
    if machine in ("x86_64", "amd64", "i686", "i386", "x86"):
        if "avx512f" in flags:
            if vendor == "AuthenticAMD":
                family = fields.get("cpu family", "")
                if family.isdigit() and int(family) >= 26:
                    notes.append("2 AVX-512 FMA units assumed (Zen 5, cpu family 26: full 512-bit FMA pipes)")
                    return "AVX-512", 16, 2, notes
                notes.append("1 AVX-512 FMA unit assumed (Zen 4 runs 512-bit FMAs on two 256-bit pipes)")
                return "AVX-512", 16, 1, notes
            notes.append("2 AVX-512 FMA units assumed (Xeon Bronze/Silver and some Gold 5xxx have 1)")
            return "AVX-512", 16, 2, notes
        if "avx2" in flags and "fma" in flags:
            notes.append("2 FMA units of 256 bits assumed (Haswell and later, Zen 2 and later)")
            return "AVX2+FMA", 8, 2, notes
        if "avx" in flags:
            notes.append("no FMA: one multiply and one add port counted as 1 FMA unit")
            return "AVX", 8, 1, notes
        notes.append("SSE only: 1 multiply+add pair per cycle assumed")
        return "SSE2", 4, 1, notes
    if machine in ("aarch64", "arm64"):
        notes.append("2 NEON FMA pipes of 128 bits assumed (Cortex-A76/Neoverse-N1 class; A55 has 1, "
                     "Neoverse V/Apple cores have 4)")
        return "NEON", 4, 2, notes
    notes.append(f"SIMD width unknown on {machine or 'this machine'}")
    return "unknown", None, None, notes


def int8_rate(fields: dict[str, str], machine: str) -> tuple[float | None, str]:
    """(int8 ops per fp32 FLOP at the same clock and width, why) from the CPU's instruction set, or
    (None, why) where it has no int8 dot-product instruction (int8 then falls back to the fp32 rate).
    An int8 multiply-add counts 2 ops, as an fp32 FMA counts 2 FLOPs."""
    flags = set((fields.get("flags") or fields.get("features") or "").split())
    if machine in ("x86_64", "amd64", "i686", "i386", "x86"):
        if "avx512_vnni" in flags or "avx_vnni" in flags:
            return 4.0, ("VNNI vpdpbusd: 4 int8 multiply-adds per 32-bit lane per instruction, issued like an "
                         "fp32 FMA (1 multiply-add per lane): 4x the fp32 rate")
        if "avx2" in flags:
            return 2.0, ("no VNNI: vpmaddubsw + vpmaddwd, two instructions for 4 int8 multiply-adds per 32-bit "
                         "lane: 2x the fp32 rate")
    if machine in ("aarch64", "arm64") and "asimddp" in flags:
        return 4.0, "SDOT/UDOT: 4 int8 multiply-adds per 32-bit lane per instruction: 4x the fp32 rate"
    return None, "no int8 dot-product instruction detected: int8 at the fp32 rate"


def detect_cpu() -> CpuInfo:
    """What /proc/cpuinfo and sysfs say about the CPUs this process may run on."""
    fields = _cpuinfo_fields()
    machine = platform.machine().lower()
    cpus = _available_cpus()
    cores, sockets = _topology(cpus)
    isa, lanes, fma, notes = _simd(fields, machine)
    clock, clock_src = _clock(fields)
    if clock is None:
        notes.append("clock unknown")
    llc, llc_src = _llc(cpus)
    model = (fields.get("model name") or fields.get("hardware") or fields.get("cpu model")
             or fields.get("cpu part") or platform.processor() or "unknown CPU")
    return CpuInfo(model=model, machine=machine, logical_cpus=len(cpus), physical_cores=cores, sockets=sockets,
                   isa=isa, simd_fp32_lanes=lanes, fma_units=fma, clock_ghz=clock, clock_source=clock_src,
                   llc_bytes=llc, llc_source=llc_src, assumptions=tuple(notes))


# ---------------------------------------------------------------------------------------------- kernels

@functools.lru_cache(maxsize=None)
def _fma_kernel():
    """The FMA-bound kernel, generated so every chain and step is written out (nothing left to unrolling).

    Only FMA contraction is allowed (``fastmath={'contract'}``): with reassociation LLVM folds the chains
    and the kernel stops doing the work it is credited with.
    """
    import numba
    lines = ["def fma_kernel(buf, reps, a, b, inv):",
             "    for t in prange(buf.shape[0]):",
             "        row = buf[t]",
             "        for r in range(reps):",
             "            for i in range(row.shape[0]):",
             "                x0 = row[i]"]
    lines += [f"                x{c} = x{c - 1} + b" for c in range(1, FMA_CHAINS)]
    for _ in range(FMA_STEPS):
        lines += [f"                x{c} = x{c} * a + b" for c in range(FMA_CHAINS)]
    lines.append("                row[i] = (" + " + ".join(f"x{c}" for c in range(FMA_CHAINS)) + ") * inv")
    ns = {"prange": numba.prange}
    exec(compile("\n".join(lines), "<onnxperf.hardware.probe fma_kernel>", "exec"), ns)  # noqa: S102
    return numba.njit(parallel=True, fastmath={"contract"}, cache=False)(ns["fma_kernel"])


@functools.lru_cache(maxsize=None)
def _stream_kernels():
    import numba
    from numba import prange

    @numba.njit(parallel=True, cache=False)
    def fill(a, b, c):  # first touch from the threads that will use the pages
        for i in prange(a.shape[0]):
            a[i] = 1.0
            b[i] = 2.0
            c[i] = 0.0

    @numba.njit(parallel=True, cache=False)
    def copy(a, c):
        for i in prange(a.shape[0]):
            c[i] = a[i]

    @numba.njit(parallel=True, cache=False)
    def triad(a, b, c, s):
        for i in prange(a.shape[0]):
            a[i] = b[i] + s * c[i]

    return fill, copy, triad


def _times(fn: Callable[[], object], repeats: int) -> list[float]:
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


# ---------------------------------------------------------------------------------------------- results

@dataclass(frozen=True)
class Measurement:
    """One probe figure: ``work`` (FLOP or bytes) per run, rates per second from the run times."""

    key: str                 # fma | sgemm | copy | triad
    label: str
    unit: str                # FLOP/s | B/s
    work: float
    seconds: tuple[float, ...]
    detail: str
    theoretical: float | None = None

    @property
    def best(self) -> float:
        return self.work / min(self.seconds)

    @property
    def median(self) -> float:
        return self.work / statistics.median(self.seconds)

    @property
    def spread(self) -> float:
        """How much slower the median run is than the best: (median time − best time) / best time."""
        best = min(self.seconds)
        return (statistics.median(self.seconds) - best) / best if best > 0 else 0.0

    def to_dict(self) -> dict:
        return {"key": self.key, "label": self.label, "unit": self.unit, "work": self.work,
                "seconds": list(self.seconds), "best": self.best, "median": self.median, "spread": self.spread,
                "theoretical": self.theoretical, "detail": self.detail}


@dataclass(frozen=True)
class ProbeResult:
    cpu: CpuInfo
    measurements: tuple[Measurement, ...]
    spec: HardwareSpec
    short: bool
    when: str
    threads: int
    notes: tuple[str, ...] = field(default=())
    #: what makes the figures doubtful: repeats that disagree, a busy machine, a refused figure
    warnings: tuple[str, ...] = field(default=())

    def get(self, key: str) -> Measurement:
        return next(m for m in self.measurements if m.key == key)

    def to_dict(self) -> dict:
        return {"schema": "onnxperf.probe/1", "when": self.when, "short": self.short, "threads": self.threads,
                "cpu": self.cpu.to_dict(), "measurements": [m.to_dict() for m in self.measurements],
                "warnings": list(self.warnings), "notes": list(self.notes), "spec": self.spec.to_dict()}


def _host_id() -> str:
    host = socket.gethostname().split(".")[0].lower()
    host = re.sub(r"[^a-z0-9-]+", "-", host).strip("-")[:32]
    return f"probed-{host or 'local'}"


def _meminfo_bytes(key: str) -> int | None:
    for line in (_read("/proc/meminfo") or "").splitlines():
        if line.startswith(key + ":"):
            parts = line.split()
            if len(parts) >= 2 and parts[1].isdigit():
                return int(parts[1]) * 1024
    return None


def _total_memory() -> int | None:
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover
        return None


def _sig4(x: float) -> float:
    """A measured figure rounded to 4 significant digits (run-to-run noise is larger than that)."""
    return float(f"{x:.4g}")


def _fmt_rate(x: float, unit: str) -> str:
    """In G (one decimal); under 0.1 G in M, so a tiny ceiling or floor does not read "0.0 G"."""
    return f"{x / 1e9:.1f} G{unit}" if x >= 1e8 else f"{x / 1e6:.1f} M{unit}"


# ---------------------------------------------------------------------------------------------- the probe

def run_probe(*, short: bool = False, repeats: int | None = None,
              progress: Callable[[str], None] | None = None) -> ProbeResult:
    """Measure this machine (:func:`measure`) and judge the figures; see the module docstring.
    ``repeats`` defaults to 7 (2 when ``short``).

    An fp32 figure above the CPU's ceiling is refused (:func:`_accepted_fp32`); when every one is, or
    when the best is under its floor (:func:`_check_floor`: a busy machine), nothing is returned and
    no spec can be written: :class:`ImpossibleMeasurement` / :class:`BusyMeasurement`, exit 2."""
    say = progress or (lambda _msg: None)
    if repeats is None:
        repeats = 2 if short else DEFAULT_REPEATS
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise OptionError(f"--repeats must be a positive integer, got {repeats!r}")

    cpu = detect_cpu()
    when = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    theory = cpu.theoretical_fp32_flops_per_s
    warnings: list[str] = []
    busy = _busy(cpu.logical_cpus)
    if busy:
        warnings.append(busy)
    started = time.perf_counter()
    measured = measure(cpu, short=short, repeats=repeats, say=say)
    threads, notes = measured.threads, list(measured.notes)
    fma, sgemm, copy_m, triad_m = measurements = measured.measurements
    levels = _memory_levels(measured.levels, when, short)
    warnings += [f"memory levels: {w}" for w in measured.levels.warnings]

    accepted = _accepted_fp32(cpu, (fma, sgemm), warnings)
    _check_floor(cpu, accepted, threads, short, warnings)
    if theory and max(m.best for m in accepted) > theory:
        implied = max(m.best for m in accepted) / (cpu.physical_cores * cpu.simd_fp32_lanes * cpu.fma_units * 2)
        notes.append(f"measured exceeds theoretical: implied clock {implied / 1e9:.2f} GHz vs "
                     f"{cpu.clock_ghz:.3f} GHz detected ({cpu.clock_source})")
    for m in measurements:
        if m.spread > SPREAD_WARNING and not short:
            warnings.append(f"{m.label}: the runs disagree (the median run is {m.spread:.0%} slower than the best): "
                            "the machine may be busy or throttling; probe again on an idle machine")
    busy = _busy(cpu.logical_cpus)
    if busy and busy not in warnings:
        warnings.append(busy)
    notes.append(f"probe took {time.perf_counter() - started:.1f} s")
    spec = _spec(cpu, measurements, when, threads, repeats, short, notes + [f"warning: {w}" for w in warnings],
                 accepted)
    spec = dataclasses.replace(spec, memory_levels=levels)
    return ProbeResult(cpu=cpu, measurements=measurements, spec=spec, short=short, when=when, threads=threads,
                       notes=tuple(notes), warnings=tuple(warnings))


@dataclass(frozen=True)
class Measured:
    """What the kernels measured, before any judgement: the four figures (fma, sgemm, copy, triad, in
    that order), the cache levels, the numba threads that ran them, and notes on how. :func:`run_probe`
    judges them; tests replace :func:`measure` with figures of their own, so no test of the judgement
    depends on how busy the machine is."""

    threads: int
    measurements: tuple[Measurement, Measurement, Measurement, Measurement]
    levels: LevelsResult
    notes: tuple[str, ...] = ()


def measure(cpu: CpuInfo, *, short: bool, repeats: int, say: Callable[[str], None]) -> Measured:
    """Run the kernels on this machine (the module docstring says which and how); no judgement here."""
    import numba

    threads = numba.get_num_threads()
    theory = cpu.theoretical_fp32_flops_per_s
    notes: list[str] = []
    # fp32: FMA-bound kernel -------------------------------------------------------------------------
    say("compiling and calibrating the numba FMA kernel")
    kern = _fma_kernel()
    width = 256 if short else 2048  # float32 elements per thread: 1 or 8 KiB, L1-resident
    buf = np.ones((threads, width), dtype=np.float32)
    a, b, inv = np.float32(0.5), np.float32(0.5), np.float32(1.0 / FMA_CHAINS)
    kern(buf, 1, a, b, inv)  # compile
    kern(buf, 1, a, b, inv)  # the thread pool's first parallel run is slow: keep it out of the calibration
    target = 0.01 if short else 0.5
    reps, dt = 1, 0.0
    while True:
        t0 = time.perf_counter()
        kern(buf, reps, a, b, inv)
        dt = time.perf_counter() - t0
        if dt >= target / 8 or reps >= 1 << 30:
            break
        reps *= 8
    reps = max(1, math.ceil(reps * target / max(dt, 1e-9)))
    flops = float(threads * width * reps * FMA_CHAINS * FMA_STEPS * 2)
    # estimates of what is left, from the kernel's calibration run (said with every stage)
    rate = flops / target
    n = 256 if short else 4096
    est = {"fma": repeats * target, "sgemm": (repeats + 1) * 2.0 * n ** 3 / rate * 1.2}
    array_bytes = _array_bytes(cpu, short, notes)
    est["stream"] = (2 * repeats + 2) * 3 * array_bytes / 10e9  # at 10 GB/s, a low bandwidth for a server
    est["levels"] = 0.1 if short else 4 * (repeats + 4) * 0.06  # up to 4 levels of runs of ~50 ms
    say(f"FMA kernel: {repeats} runs, about {_eta(est['fma'])} ({_eta(sum(est.values()))} left in all)")
    secs = _times(lambda: kern(buf, reps, a, b, inv), repeats)
    if not np.isfinite(buf).all():  # pragma: no cover - the chains converge to 1
        raise RuntimeError("FMA kernel produced non-finite values")
    fma = Measurement("fma", "fp32 FMA kernel (numba)", "FLOP/s", flops, tuple(secs),
                      f"{threads} threads x {width} elements x {reps} passes x {FMA_CHAINS} chains x "
                      f"{FMA_STEPS} FMA steps x 2 FLOP", theory)

    # fp32: sgemm ------------------------------------------------------------------------------------
    say(f"sgemm {n}x{n}: {repeats} runs, about {_eta(est['sgemm'])} ({_eta(est['sgemm'] + est['stream'] + est['levels'])} left)")
    rng = np.random.default_rng(0)
    ma = rng.random((n, n), dtype=np.float32)
    mb = rng.random((n, n), dtype=np.float32)
    mc = np.empty((n, n), dtype=np.float32)
    np.matmul(ma, mb, out=mc)  # warm-up: BLAS threads, page faults
    secs = _times(lambda: np.matmul(ma, mb, out=mc), repeats)
    sgemm = Measurement("sgemm", f"fp32 sgemm {n}x{n} (numpy BLAS)", "FLOP/s", 2.0 * n ** 3, tuple(secs),
                        f"2 x {n}^3 FLOP, numpy {np.__version__} ({_blas_name()})", theory)
    del ma, mb, mc

    # memory bandwidth: STREAM copy and triad --------------------------------------------------------
    count = array_bytes // 8
    say(f"STREAM copy and triad on 3 x {count * 8 / 2 ** 20:.0f} MiB float64 arrays (in memory, no file): "
        f"{repeats} runs each, about {_eta(est['stream'] + est['levels'])} left")
    fill, copy, triad = _stream_kernels()
    xa, xb, xc = np.empty(count), np.empty(count), np.empty(count)
    fill(xa, xb, xc)
    copy(xa, xc)
    triad(xa, xb, xc, 3.0)
    secs = _times(lambda: copy(xa, xc), repeats)
    size_text = f"{count * 8 / 2 ** 20:.0f} MiB float64 arrays (LLC: {cpu.llc_source})"
    copy_m = Measurement("copy", "copy bandwidth (numba, STREAM)", "B/s", 16.0 * count, tuple(secs),
                         f"c = a, 16 B per element, 2 x {size_text}")
    secs = _times(lambda: triad(xa, xb, xc, 3.0), repeats)
    triad_m = Measurement("triad", "triad bandwidth (numba, STREAM)", "B/s", 24.0 * count, tuple(secs),
                          f"a = b + s*c, 24 B per element, 3 x {size_text}")
    del xa, xb, xc

    del fill, copy, triad

    # bandwidth of each cache level (the cache-aware roofline) ------------------------------------------
    say("read bandwidth of each cache level (L1d, L2, L3 ...) and DRAM")

    lv = measure_levels(repeats=repeats, threads=threads, short=short, progress=say)
    return Measured(threads, (fma, sgemm, copy_m, triad_m), lv, tuple(notes))


def _memory_levels(lv, when: str, short: bool) -> tuple:
    """The spec's cache levels from :func:`onnxperf.hardware.levels.measure_levels`: each measured cache
    level's capacity over the caches the threads use, and its best read bandwidth; levels whose
    capacity does not grow outward (or were not measured) are left out."""

    caches = {c.name: c for c in lv.caches}
    out, last = [], 0
    for m in lv.levels:
        c = caches.get(m.level)
        if c is None or c.total_bytes <= last:
            continue
        out.append(MemoryLevel(m.level, c.total_bytes, _sig4(m.best_bytes_per_s),
                               f"measured by onnxperf hw probe on {when}{' (short mode)' if short else ''}: "
                               f"read kernel, {m.threads} threads, best of {len(m.seconds)} runs on a "
                               f"{m.working_set_bytes // 1024} KiB working set"))
        last = c.total_bytes
    return tuple(out)


class ImpossibleMeasurement(OptionError):
    """Every fp32 figure of the probe is above what this CPU can do (exit 2: no spec is written)."""


def _accepted_fp32(cpu: CpuInfo, ms: tuple[Measurement, ...], warnings: list[str]) -> tuple[Measurement, ...]:
    """The fp32 measurements at or below the CPU's ceiling (:attr:`CpuInfo.fp32_ceiling`); a figure
    above it is refused with the reason (a timer or a kernel that did not do its work)."""
    ceiling = cpu.fp32_ceiling
    if ceiling is None:
        return ms
    limit, how = ceiling
    ok = tuple(m for m in ms if m.best <= limit)
    for m in ms:
        if m.best > limit:
            warnings.append(f"{m.label}: {_fmt_rate(m.best, 'FLOP/s')} refused: above the most this CPU can do, "
                            f"{_fmt_rate(limit, 'FLOP/s')} = {how}")
    if not ok:
        raise ImpossibleMeasurement(
            f"hw probe: every fp32 figure is above the most this CPU can do ({_fmt_rate(limit, 'FLOP/s')} = {how}): "
            + "; ".join(f"{m.label} {_fmt_rate(m.best, 'FLOP/s')}" for m in ms) + "; no spec written")
    return ok


class BusyMeasurement(OptionError):
    """The best fp32 figure of the probe is far below what this CPU can do (:attr:`CpuInfo.fp32_floor`):
    the machine was busy or throttling (exit 2: no spec is written; probe again on an idle machine)."""


def _check_floor(cpu: CpuInfo, accepted: tuple[Measurement, ...], threads: int, short: bool,
                 warnings: list[str]) -> None:
    """Refuse (:class:`BusyMeasurement`) a probe whose best accepted fp32 figure is under the CPU's floor:
    every later prediction with its spec would be that many times too slow. In short mode (1 KiB per
    thread, 10 ms runs: start-up dominates, and its spec says "short mode" in every source) it is a
    warning instead: short-mode figures are a smoke test, not figures."""
    floor = cpu.fp32_floor
    if floor is None or not accepted:
        return
    limit, how = floor
    best = max(accepted, key=lambda m: m.best)
    if best.best >= limit:
        return
    text = (f"the best fp32 figure, {_fmt_rate(best.best, 'FLOP/s')} ({best.label}), is under "
            f"{_fmt_rate(limit, 'FLOP/s')}, {how}")
    if short:
        warnings.append(f"{text}: a short-mode figure, or a busy machine")
        return
    fewer = (f" (or numba ran {threads} thread{'' if threads == 1 else 's'} on {cpu.physical_cores} cores: "
             "NUMBA_NUM_THREADS)" if threads < cpu.physical_cores else "")
    raise BusyMeasurement(f"hw probe: {text}: the machine was busy or throttling while it measured{fewer}; "
                          "re-run `onnxperf hw probe` on an idle machine; no spec written")


def _array_bytes(cpu: CpuInfo, short: bool, notes: list[str]) -> int:
    """Bytes of each STREAM array: 4 x the last-level cache, within half the available memory (in
    memory: the probe writes no file)."""
    if short:
        notes.append("short mode: 2 MiB arrays fit in cache, so the bandwidth is a cache figure")
        return 2 * 2 ** 20
    array_bytes = 4 * cpu.llc_bytes if cpu.llc_bytes else _FALLBACK_ARRAY_BYTES
    avail = _meminfo_bytes("MemAvailable")
    if avail and 3 * array_bytes > avail // 2:
        array_bytes = max(2 ** 20, avail // 6)
        notes.append(f"arrays capped at {array_bytes // 2 ** 20} MiB each by available memory")
    return array_bytes


def _cpu_jiffies() -> tuple[int, int] | None:
    """(busy, total) jiffies of the whole machine from /proc/stat; None elsewhere."""
    line = (_read("/proc/stat") or "").split("\n", 1)[0].split()
    if not line or line[0] != "cpu":
        return None
    vals = [int(x) for x in line[1:] if x.isdigit()]
    if len(vals) < 4:
        return None
    idle = vals[3] + (vals[4] if len(vals) > 4 else 0)  # idle + iowait
    return sum(vals) - idle, sum(vals)


def _own_cpu_s() -> float:
    """CPU seconds this process has used (its own work is not "other processes")."""
    return time.process_time()


def _busy(cpus: int, window_s: float = 0.5) -> str | None:
    """A warning when other work competes for the CPUs: the share of the machine busy while this
    process sleeps for ``window_s`` (from /proc/stat; elsewhere the 1-minute load average, which
    also counts this process's own recent work)."""
    before = _cpu_jiffies()
    if before is not None:
        own0 = _own_cpu_s()
        time.sleep(window_s)
        after = _cpu_jiffies()
        own = _own_cpu_s() - own0
        if after is not None and after[1] > before[1]:
            tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
            others = max(after[0] - before[0] - own * tick, 0) / (after[1] - before[1])
            if others > 0.25:
                return (f"the machine is busy: other processes used {others:.0%} of its {cpus} CPUs while the probe "
                        "waited; its figures may be low")
            return None
    try:
        load = os.getloadavg()[0]
    except (OSError, AttributeError):  # pragma: no cover - not on this platform
        return None
    if load > max(0.5 * cpus, 0.75):
        return (f"the machine is busy (1-minute load average {load:.2f} on {cpus} CPUs): other work competes with "
                "the probe, its figures may be low")
    return None


def _eta(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds >= 1.5 else "1 s"


def _blas_name() -> str:
    try:
        cfg = np.show_config(mode="dicts")
        blas = cfg.get("Build Dependencies", {}).get("blas", {})
        return f"{blas.get('name', 'BLAS')} {blas.get('version', '')}".strip()
    except Exception:  # pragma: no cover - older numpy
        return "BLAS"


def _spec(cpu: CpuInfo, ms: tuple[Measurement, ...], when: str, threads: int, repeats: int, short: bool,
          notes: list[str], accepted: tuple[Measurement, ...] | None = None) -> HardwareSpec:
    fma, sgemm, copy_m, triad_m = ms
    accepted = accepted if accepted is not None else (fma, sgemm)
    by = f"measured by onnxperf hw probe on {when}"
    mode = " (short mode)" if short else ""
    sources = {
        "fp32": (f"{by}{mode}: best of {repeats} runs, the larger of the numba FMA kernel "
                 f"({_fmt_rate(fma.best, 'FLOP/s')}, {threads} threads"
                 f"{'' if fma in accepted else ', refused: above the CPU ceiling'}) and numpy sgemm "
                 f"({_fmt_rate(sgemm.best, 'FLOP/s')}, {sgemm.label.split()[2]}"
                 f"{'' if sgemm in accepted else ', refused: above the CPU ceiling'})"),
        "memory_bandwidth": (f"{by}{mode}: STREAM-style triad, best of {repeats} runs on {triad_m.detail}; "
                             f"copy {_fmt_rate(copy_m.best, 'B/s')}"),
    }
    capacity = _total_memory()
    if capacity:
        sources["memory_capacity"] = f"total physical memory (sysconf) on {when}"
    theory = cpu.theoretical_fp32_flops_per_s
    parts = [f"{cpu.model}; {cpu.logical_cpus} logical CPUs, {cpu.physical_cores} cores, {cpu.sockets} socket(s)",
             f"theoretical fp32 {theory / 1e9:.1f} GFLOP/s = {cpu.theoretical_text()}" if theory
             else f"theoretical fp32 {cpu.theoretical_text()}"]
    parts += list(cpu.assumptions) + notes
    fp32 = _sig4(max(m.best for m in accepted))
    peaks = {"fp32": fp32}
    factor, why = int8_rate(_cpuinfo_fields(), cpu.machine)
    if factor:
        peaks["int8"] = _sig4(fp32 * factor)
        sources["int8"] = f"derived: the measured fp32 peak x {factor:g} ({why})"
    return HardwareSpec(id=_host_id(), name=f"{cpu.model} ({cpu.physical_cores} cores, probed)", kind="cpu",
                        peak_flops_per_s=peaks,
                        memory_bandwidth_bytes_per_s=_sig4(triad_m.best), memory_capacity_bytes=capacity,
                        sources=sources, notes=". ".join(parts))
