"""Read bandwidth per memory level (L1d, L2, L3, DRAM) on this machine, measured twice in a row, written as
markdown: the measurement side of a cache-aware roofline (issue 18 point 5).

    python benchmarks/bench_levels.py [--repeats 5] [--threads N] [--out benchmarks/results/levels.md]

Each run is ``onnxperf.hardware.levels.measure_levels``: a numba read kernel over one private slice per
thread, sized half way between the thread's share of the level below and its share of the level; DRAM on
max(4 x LLC, 256 MiB). A third table gives the second run's best figures over the first's, with the load
average before each run (other work on the machine is the usual reason they differ).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from onnxperf.hardware.levels import DEFAULT_REPEATS, SPREAD_WARNING, measure_levels  # noqa: E402
from onnxperf.hardware.probe import detect_cpu  # noqa: E402


def _size(x: int) -> str:
    return f"{x / 2 ** 20:.4g} MiB" if x >= 2 ** 20 else f"{x / 2 ** 10:.4g} KiB"


def _load() -> str:
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except (OSError, AttributeError):  # pragma: no cover - not on this platform
        return "n/a"


def table(result, title: str, load: str) -> str:
    lines = [f"## {title}", "",
             f"Run {result.when}; {result.threads} threads, {result.repeats} runs per level; 1-minute load "
             f"average before: {load}.", "",
             "| level | working set (all threads) | per thread | best GB/s | median GB/s | spread (max/min - 1) "
             "| passes per run |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for lb in result.levels:
        lines.append(f"| {lb.level} | {_size(lb.working_set_bytes)} | {_size(lb.bytes_per_thread)} | "
                     f"{lb.best_bytes_per_s / 1e9:.1f} | {lb.median_bytes_per_s / 1e9:.1f} | {lb.spread:.1%} | "
                     f"{lb.passes} |")
    lines += ["", *(f"- warning: {w}" for w in result.warnings), *(f"- {n}" for n in result.notes), ""]
    return "\n".join(lines)


def ratios(first, second) -> tuple[str, float]:
    """Markdown rows of second / first (best and median) per level, and the largest |ratio - 1| of the bests."""
    lines = ["## Second run / first run", "", "| level | best | median |", "|---|---:|---:|"]
    worst = 0.0
    for a, b in zip(first.levels, second.levels):
        r = b.best_bytes_per_s / a.best_bytes_per_s
        worst = max(worst, abs(r - 1))
        lines.append(f"| {a.level} | {r:.3f} | {b.median_bytes_per_s / a.median_bytes_per_s:.3f} |")
    lines += ["", f"Largest difference between the runs' best figures: {worst:.1%}.", ""]
    return "\n".join(lines), worst


def markdown(first, second, loads: tuple[str, str]) -> str:
    cpu = detect_cpu()
    caches = ", ".join(f"{c.name} {_size(c.size_bytes)} x {c.instances} (shared by {c.shared_by} CPUs)"
                       for c in first.caches) or "none found in sysfs"
    head = [
        "# Read bandwidth per memory level",
        "",
        f"Machine: {cpu.model}, {cpu.logical_cpus} logical CPUs, {cpu.physical_cores} cores, {cpu.isa}. "
        f"Caches (sysfs): {caches}.",
        "Re-run: `python benchmarks/bench_levels.py`. Kernel: numba `prange`, each thread sums its own slice of "
        "float64 `passes` times (vectorized; bytes counted = 8 B x elements read; no writes). Spread: "
        f"(slowest run / fastest run) - 1, warned above {SPREAD_WARNING:.0%}.",
        "",
    ]
    rows, _ = ratios(first, second)
    return "\n".join(head) + "\n" + table(first, "First run", loads[0]) + "\n" + table(
        second, "Second run", loads[1]) + "\n" + rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=DEFAULT_REPEATS)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "levels.md"))
    args = ap.parse_args(argv)
    say = lambda m: print(f"bench_levels: {m}", file=sys.stderr)  # noqa: E731
    load1 = _load()
    first = measure_levels(repeats=args.repeats, threads=args.threads, progress=say)
    load2 = _load()
    second = measure_levels(repeats=args.repeats, threads=args.threads, progress=say)
    text = markdown(first, second, (load1, load2))
    Path(args.out).write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
