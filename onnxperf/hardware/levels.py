"""Bandwidth per memory level (L1d, L2, L3, DRAM): the measurement side of a cache-aware roofline.

The cache-aware roofline (Ilic, Pratas and Sousa, "Cache-aware Roofline model", IEEE CAL 2014; Intel
Advisor's CARM) draws one bandwidth roof per level of the hierarchy, measured as the core sees it. This
module measures those roofs on this machine; nothing here draws or uses them.

* :func:`cache_levels` reads the data and unified caches from sysfs
  (``/sys/devices/system/cpu/cpu*/cache/index*/{level,type,size,shared_cpu_list}``), skipping instruction
  caches; an empty tuple where sysfs is missing.
* :func:`working_sets` (pure) sizes each thread's private slice for a level: half way between the thread's
  share of the level below and its share of this level (for L1d: half of it). Half of the share alone can
  fall inside the level below where two levels are close in size (a 1 MiB L2 under 1.375 MiB of L3 per
  core); the midpoint cannot. DRAM: 4 x the total last-level cache or 256 MiB, whichever is larger, within
  half of MemAvailable.
* :func:`measure_levels` times a read-only kernel (numba ``prange``, one private slice per thread, a
  vectorized sum, so the loop is bound by loads, not by add latency) over enough passes that one timing
  takes about 50 ms. Bytes counted:
  8 B per float64 element read x elements x passes, over all threads together (no write traffic: the
  kernel writes one float per thread per run).

A bandwidth figure is ``bytes / time`` of one run; best and median over ``repeats`` runs, all kept. Here
``spread`` is (slowest - fastest) / fastest: max/min - 1 of the per-run rates (``probe.Measurement`` uses
the median instead). Warnings, never exceptions, for a level faster than the one above it or runs that
spread by more than :data:`SPREAD_WARNING`.

Library code: nothing is printed; pass ``progress`` to hear what is running.
"""

from __future__ import annotations

import datetime as _dt
import functools
import math
import os
import re
import statistics
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from onnxperf.base.errors import OptionError

#: where the CPUs' cache descriptions are read (tests point it at a fake tree)
SYS_CPU = Path("/sys/devices/system/cpu")
#: where MemAvailable is read
PROC_MEMINFO = Path("/proc/meminfo")

DEFAULT_REPEATS = 5
#: seconds one timed run should last (``short``: :data:`SHORT_TARGET_S`)
TARGET_S = 0.05
SHORT_TARGET_S = 0.002
#: runs of one level whose rates differ by more than this (max/min - 1) are reported as doubtful
SPREAD_WARNING = 0.10
#: slices are whole multiples of this many bytes (128 float64)
SLICE_GRANULE_BYTES = 1024
DRAM_MIN_BYTES = 256 * 2 ** 20
DRAM_LLC_FACTOR = 4
#: the DRAM working set in short mode: not DRAM, a cache figure (for tests only)
SHORT_DRAM_BYTES = 8 * 2 ** 20
ITEM_BYTES = 8  # float64


# ---------------------------------------------------------------------------------------------- caches

@dataclass(frozen=True)
class CacheLevel:
    """One level of data cache as the usable CPUs see it.

    ``size_bytes`` is one instance's size, ``instances`` how many distinct caches of this level the
    usable CPUs use, ``shared_by`` how many CPUs (usable or not) share one instance. Where instances
    differ (hybrid cores), the smallest size and the widest sharing are kept: a working set sized from
    them fits every instance.
    """

    name: str          # L1d | L1 (unified) | L2 | L3 | L4
    size_bytes: int
    instances: int
    shared_by: int

    @property
    def total_bytes(self) -> int:
        return self.size_bytes * self.instances

    def to_dict(self) -> dict:
        return {"name": self.name, "size_bytes": self.size_bytes, "instances": self.instances,
                "shared_by": self.shared_by, "total_bytes": self.total_bytes}


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


def parse_size(text: str) -> int | None:
    """sysfs cache sizes: ``32K``, ``1024K``, ``32768K``, ``2M``, ``512`` (bytes); None when unreadable."""
    m = re.fullmatch(r"(\d+)\s*([KMG]?)(?:i?B)?", text.strip(), re.IGNORECASE)
    if not m:
        return None
    return int(m.group(1)) * {"": 1, "K": 2 ** 10, "M": 2 ** 20, "G": 2 ** 30}[m.group(2).upper()]


def parse_cpu_list(text: str) -> frozenset[int] | None:
    """``0-3,8,10-11`` -> {0, 1, 2, 3, 8, 10, 11}; None when unreadable."""
    cpus: set[int] = set()
    for part in text.strip().split(","):
        lo, sep, hi = part.strip().partition("-")
        if not lo.isdigit() or (sep and not hi.isdigit()):
            return None
        cpus.update(range(int(lo), int(hi if sep else lo) + 1))
    return frozenset(cpus) or None


def usable_cpus() -> list[int]:
    """The CPUs this process may run on (its affinity mask where the OS has one)."""
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return list(range(os.cpu_count() or 1))


def cache_levels(cpus: Iterable[int] | None = None) -> tuple[CacheLevel, ...]:
    """The data and unified cache levels used by ``cpus`` (default: :func:`usable_cpus`), innermost first,
    read from sysfs under :data:`SYS_CPU`; entries that cannot be read are skipped, so a machine without
    sysfs gives ``()``."""
    cpus = usable_cpus() if cpus is None else list(cpus)
    # level name -> {instance key (its CPU set): size}
    found: dict[tuple[int, str], dict[frozenset[int], int]] = {}
    for c in cpus:
        base = SYS_CPU / f"cpu{c}" / "cache"
        try:
            entries = sorted(p for p in base.iterdir() if p.name.startswith("index"))
        except OSError:
            continue
        for idx in entries:
            kind = _read(idx / "type")
            level = _read(idx / "level")
            size = parse_size(_read(idx / "size") or "")
            if kind not in ("Data", "Unified") or not (level and level.isdigit()) or not size:
                continue
            shared = parse_cpu_list(_read(idx / "shared_cpu_list") or "") or frozenset({c})
            name = f"L{level}d" if (level == "1" and kind == "Data") else f"L{level}"
            found.setdefault((int(level), name), {})[shared] = size
    out = []
    for (_, name), inst in sorted(found.items()):
        out.append(CacheLevel(name=name, size_bytes=min(inst.values()), instances=len(inst),
                              shared_by=max(len(s) for s in inst)))
    return tuple(out)


# ---------------------------------------------------------------------------------------------- sizing

@dataclass(frozen=True)
class WorkingSet:
    """How much one level's kernel reads: ``threads`` private slices of ``bytes_per_thread`` each."""

    level: str                 # L1d | L2 | L3 | DRAM ...
    bytes_per_thread: int
    threads: int
    how: str

    @property
    def total_bytes(self) -> int:
        return self.bytes_per_thread * self.threads


def _granule(x: float) -> int:
    return max(SLICE_GRANULE_BYTES, int(x) // SLICE_GRANULE_BYTES * SLICE_GRANULE_BYTES)


def _kib(x: float) -> str:
    return f"{x / 2 ** 20:g} MiB" if x >= 2 ** 20 else f"{x / 2 ** 10:g} KiB"


def thread_share(cache: CacheLevel, threads: int) -> float:
    """Bytes of ``cache`` one of ``threads`` threads may use: all instances split between the threads,
    never more than one instance (threads spread over the usable CPUs)."""
    return min(cache.size_bytes, cache.total_bytes / threads)


def working_sets(caches: tuple[CacheLevel, ...], threads: int, *, mem_available_bytes: int | None = None,
                 short: bool = False) -> tuple[WorkingSet, ...]:
    """Each cache level's per-thread slice, half way between the thread's share of the level below and
    its share of this one (the level below of L1d being nothing: half of L1d); then DRAM:
    max(4 x total last-level cache, 256 MiB), within half of ``mem_available_bytes``, split between
    the threads. Slices are whole KiB. ``short``: DRAM is :data:`SHORT_DRAM_BYTES` (a cache figure)."""
    if threads < 1:
        raise OptionError(f"threads must be a positive integer, got {threads!r}")
    out = []
    below = 0.0
    for cache in caches:
        share = thread_share(cache, threads)
        if share <= below:  # a level no larger per thread than the one below it: nothing of its own to measure
            continue
        out.append(WorkingSet(cache.name, _granule((below + share) / 2), threads,
                              f"half way between {_kib(below)} and {_kib(share)} per thread "
                              f"({cache.name} {_kib(cache.size_bytes)} x {cache.instances}, {threads} threads)"))
        below = share
    llc = caches[-1].total_bytes if caches else 0
    if short:
        total, how = SHORT_DRAM_BYTES, f"short mode: {_kib(SHORT_DRAM_BYTES)}, fits in cache (not a DRAM figure)"
    else:
        total = max(DRAM_LLC_FACTOR * llc, DRAM_MIN_BYTES)
        how = (f"max({DRAM_LLC_FACTOR} x LLC {_kib(llc)}, {_kib(DRAM_MIN_BYTES)})" if llc
               else f"{_kib(DRAM_MIN_BYTES)} (no cache sizes in sysfs)")
        if mem_available_bytes and total > mem_available_bytes // 2:
            total = mem_available_bytes // 2
            how += f", capped at half of MemAvailable ({_kib(mem_available_bytes)})"
    out.append(WorkingSet("DRAM", _granule(total / threads), threads, how))
    return tuple(out)


def mem_available_bytes() -> int | None:
    for line in (_read(PROC_MEMINFO) or "").splitlines():
        if line.startswith("MemAvailable:"):
            parts = line.split()
            if len(parts) >= 2 and parts[1].isdigit():
                return int(parts[1]) * 1024
    return None


# ---------------------------------------------------------------------------------------------- results

@dataclass(frozen=True)
class LevelBandwidth:
    """The read bandwidth of one level: ``bytes_per_run`` over each run's ``seconds``."""

    level: str
    working_set_bytes: int      # all threads together
    bytes_per_thread: int
    threads: int
    passes: int
    bytes_per_run: float        # bytes read per timed run: working set x passes
    seconds: tuple[float, ...]
    detail: str

    @property
    def rates_bytes_per_s(self) -> tuple[float, ...]:
        return tuple(self.bytes_per_run / s for s in self.seconds)

    @property
    def best_bytes_per_s(self) -> float:
        return self.bytes_per_run / min(self.seconds)

    @property
    def median_bytes_per_s(self) -> float:
        return self.bytes_per_run / statistics.median(self.seconds)

    @property
    def spread(self) -> float:
        """max/min - 1 of the runs' rates (0 for one run)."""
        return max(self.seconds) / min(self.seconds) - 1.0

    def to_dict(self) -> dict:
        return {"level": self.level, "working_set_bytes": self.working_set_bytes,
                "bytes_per_thread": self.bytes_per_thread, "threads": self.threads, "passes": self.passes,
                "bytes_per_run": self.bytes_per_run, "seconds": list(self.seconds),
                "best_bytes_per_s": self.best_bytes_per_s, "median_bytes_per_s": self.median_bytes_per_s,
                "spread": self.spread, "detail": self.detail}


@dataclass(frozen=True)
class LevelsResult:
    levels: tuple[LevelBandwidth, ...]     # innermost first, DRAM last
    caches: tuple[CacheLevel, ...]
    threads: int
    repeats: int
    short: bool
    when: str
    notes: tuple[str, ...] = field(default=())
    #: what makes the figures doubtful: levels out of order, runs that disagree
    warnings: tuple[str, ...] = field(default=())

    def get(self, level: str) -> LevelBandwidth:
        for lb in self.levels:
            if lb.level == level:
                return lb
        raise KeyError(f"no level {level!r}; measured: {', '.join(lb.level for lb in self.levels)}")

    def to_dict(self) -> dict:
        return {"schema": "onnxperf.levels/1", "when": self.when, "short": self.short, "threads": self.threads,
                "repeats": self.repeats, "caches": [c.to_dict() for c in self.caches],
                "levels": [lb.to_dict() for lb in self.levels], "warnings": list(self.warnings),
                "notes": list(self.notes)}


def check_levels(levels: Iterable[LevelBandwidth], *, spread_warning: float | None = SPREAD_WARNING) -> list[str]:
    """Warnings for a level whose best rate is above the one above it (L1d >= L2 >= L3 >= DRAM on a
    normal machine), and for runs of one level that spread by more than ``spread_warning`` (None: no
    spread check)."""
    levels = list(levels)
    out = []
    for outer, inner in zip(levels[1:], levels):
        if outer.best_bytes_per_s > inner.best_bytes_per_s:
            out.append(f"{outer.level} ({outer.best_bytes_per_s / 1e9:.1f} GB/s) is faster than {inner.level} "
                       f"({inner.best_bytes_per_s / 1e9:.1f} GB/s): noise, or a working set that is not where "
                       "it was meant to be")
    if spread_warning is not None:
        for lb in levels:
            if lb.spread > spread_warning:
                out.append(f"{lb.level}: the runs disagree by {lb.spread:.0%} (fastest to slowest): the machine "
                           "may be busy or throttling")
    return out


# ---------------------------------------------------------------------------------------------- kernels

@functools.lru_cache(maxsize=None)
def _kernels():
    """(fill, read): ``fill`` first-touches each row from the thread that will read it; ``read`` sums each
    row ``passes`` times into one accumulator per thread, written out so the whole loop is needed.

    The sum may be reassociated (``fastmath={'reassoc', 'nsz'}``) so LLVM vectorizes it with several
    vector accumulators: without it the adds stay scalar and the kernel is bound by add latency, not by
    loads (on this VM 117 GB/s from L1 instead of 420; 32 hand-written accumulators stay scalar too).
    Reassociation cannot skip reads here: the accumulator carries from pass to pass, and a rate above
    2 loads x 64 B per cycle per core would show it.
    """
    import numba

    @numba.njit(parallel=True, cache=False)
    def fill(buf):
        for t in numba.prange(buf.shape[0]):
            row = buf[t]
            for i in range(row.shape[0]):
                row[i] = 1.0 / (1 + (i & 7))

    @numba.njit(parallel=True, fastmath={"reassoc", "nsz"}, cache=False)
    def read(buf, passes, out):
        for t in numba.prange(buf.shape[0]):
            row = buf[t]
            s = 0.0
            for _ in range(passes):
                for i in range(row.shape[0]):
                    s += row[i]
            out[t] = s

    return fill, read


def _aligned(shape: tuple[int, int], align: int = 4096) -> np.ndarray:
    """An uninitialized float64 array starting on an ``align``-byte boundary. numpy promises only 16 bytes:
    a buffer off a 64-byte line makes every wide load of the L1 kernel split across two lines (on this VM
    270 GB/s from L1 instead of 410, depending on where the allocation fell)."""
    count = shape[0] * shape[1]
    raw = np.empty(count + align // ITEM_BYTES)
    start = (-raw.ctypes.data % align) // ITEM_BYTES
    return raw[start:start + count].reshape(shape)


def _time_level(ws: WorkingSet, repeats: int, target_s: float) -> LevelBandwidth:
    fill, read = _kernels()
    buf = _aligned((ws.threads, ws.bytes_per_thread // ITEM_BYTES))
    out = np.zeros(ws.threads)
    fill(buf)
    read(buf, 1, out)  # compiles once; warms the pages, the caches and the thread pool
    passes = 1
    while True:
        t0 = time.perf_counter()
        read(buf, passes, out)
        dt = time.perf_counter() - t0
        if dt >= target_s / 8 or passes >= 1 << 30:
            break
        passes *= 8
    passes = max(1, math.ceil(passes * target_s / max(dt, 1e-9)))
    read(buf, passes, out)  # one untimed run at the final size
    secs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        read(buf, passes, out)
        secs.append(time.perf_counter() - t0)
    if not np.isfinite(out).all():  # pragma: no cover - a sum of positive finite values
        raise RuntimeError(f"{ws.level} read kernel produced non-finite sums")
    total = ws.total_bytes
    return LevelBandwidth(ws.level, total, ws.bytes_per_thread, ws.threads, passes,
                          float(total * passes), tuple(secs),
                          f"{ws.threads} threads x {_kib(ws.bytes_per_thread)} read x {passes} passes; {ws.how}")


# ---------------------------------------------------------------------------------------------- measure

def measure_levels(*, repeats: int = DEFAULT_REPEATS, threads: int | None = None, short: bool = False,
                   caches: tuple[CacheLevel, ...] | None = None,
                   progress: Callable[[str], None] | None = None) -> LevelsResult:
    """Read bandwidth of each cache level this machine has (:func:`cache_levels`, or ``caches``) and of
    DRAM, over ``threads`` numba threads (default: numba's current count). ``short``: runs of about
    2 ms and a DRAM working set that fits in cache: for tests, not for figures."""
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise OptionError(f"repeats must be a positive integer, got {repeats!r}")
    import numba
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int)
                                or not 1 <= threads <= numba.config.NUMBA_NUM_THREADS):
        raise OptionError(f"threads must be an integer from 1 to {numba.config.NUMBA_NUM_THREADS}, got {threads!r}")
    say = progress or (lambda _msg: None)
    caches = cache_levels() if caches is None else tuple(caches)
    before = numba.get_num_threads()
    threads = before if threads is None else threads
    when = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    notes = [] if caches else ["no cache sizes in sysfs: DRAM only"]
    sets = working_sets(caches, threads, mem_available_bytes=mem_available_bytes(), short=short)
    skipped = [c.name for c in caches if c.name not in {ws.level for ws in sets}]
    if skipped:
        notes.append(f"not measured, no larger per thread than the level below: {', '.join(skipped)}")
    target = SHORT_TARGET_S if short else TARGET_S
    started = time.perf_counter()
    numba.set_num_threads(threads)
    try:
        say("compiling the numba read kernel")
        _kernels()
        results = []
        for ws in sets:
            say(f"{ws.level}: {threads} threads x {_kib(ws.bytes_per_thread)}, {repeats} runs of about "
                f"{target * 1e3:.0f} ms")
            results.append(_time_level(ws, repeats, target))
    finally:
        numba.set_num_threads(before)
    warnings = check_levels(results, spread_warning=None if short else SPREAD_WARNING)
    notes.append(f"took {time.perf_counter() - started:.1f} s")
    return LevelsResult(levels=tuple(results), caches=caches, threads=threads, repeats=repeats, short=short,
                        when=when, notes=tuple(notes), warnings=tuple(warnings))
