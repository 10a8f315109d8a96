"""The full ``onnxperf hw probe`` run on this machine: measured fp32 compute and memory bandwidth next to the
theoretical figures, written as a markdown table.

    python benchmarks/bench_probe.py [--repeats 7] [--out benchmarks/results/probe.md] [--spec FILE.toml]

Two probes run back to back: the table is the first one's, and a second table says how far the
second probe's figures are from the first's (issue 18: two probes in a row on an idle machine agree
within 10%), with the load average before each, since a busy machine is the usual reason they do not.

Same kernels as ``onnxperf hw probe`` (that command in short mode is what the test suite runs): a numba
FMA-bound kernel across all cores, numpy sgemm 4096x4096, and STREAM-style copy and triad on float64 arrays of
4x the last-level cache each. Best and median of the timed runs are reported.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from onnxperf.hardware import to_toml  # noqa: E402
from onnxperf.hardware.probe import DEFAULT_REPEATS, run_probe  # noqa: E402


def _g(x: float | None) -> str:
    return "n/a" if x is None else f"{x / 1e9:.1f}"


def markdown(result) -> str:
    cpu = result.cpu
    lines = [
        "# Hardware probe: measured vs theoretical",
        "",
        f"Machine: {cpu.model}, {cpu.logical_cpus} logical CPUs, {cpu.physical_cores} cores, {cpu.sockets} "
        f"socket(s), {cpu.isa}; LLC {cpu.llc_source}; {result.threads} numba threads. Run {result.when}.",
        "Re-run: `python benchmarks/bench_probe.py` (or `onnxperf hw probe -o spec.toml`).",
        "",
        "| figure | best | median | theoretical | best / theoretical | work per run |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for m in result.measurements:
        unit = "GFLOP/s" if m.unit == "FLOP/s" else "GB/s"
        ratio = f"{m.best / m.theoretical:.0%}" if m.theoretical else ""
        lines.append(f"| {m.label} | {_g(m.best)} {unit} | {_g(m.median)} {unit} | "
                     f"{_g(m.theoretical) + ' ' + unit if m.theoretical else 'n/a'} | {ratio} | {m.detail} |")
    s = result.spec
    lines += [
        "",
        f"Theoretical fp32 = {cpu.theoretical_text()}. Theoretical bandwidth: not derivable (the DIMM "
        "configuration is not visible without root).",
        *(f"- warning: {w}" for w in result.warnings),
        *(f"- {n}" for n in (*cpu.assumptions, *result.notes)),
        "",
        f"Resulting spec `{s.id}`: fp32 {_g(s.peak_flops_per_s['fp32'])} GFLOP/s, memory bandwidth "
        f"{_g(s.memory_bandwidth_bytes_per_s)} GB/s, ridge point {s.ridge_point():.1f} FLOP/byte.",
        "",
    ]
    return "\n".join(lines)


def agreement(first, second) -> tuple[str, float]:
    """Markdown rows comparing two probes' best figures, and the largest relative difference."""
    lines = ["## Two probes in a row", "",
             "| figure | first | second | difference |", "|---|---:|---:|---:|"]
    worst = 0.0
    for a, b in zip(first.measurements, second.measurements):
        unit = "GFLOP/s" if a.unit == "FLOP/s" else "GB/s"
        d = (b.best - a.best) / a.best
        worst = max(worst, abs(d))
        lines.append(f"| {a.label} | {_g(a.best)} {unit} | {_g(b.best)} {unit} | {d:+.1%} |")
    for name, r in (("first", first), ("second", second)):
        for w in r.warnings:
            lines.append(f"- {name} probe warning: {w}")
    lines += ["", f"Largest difference: {worst:.1%} (target: within 10% on an idle machine).", ""]
    return "\n".join(lines), worst


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=DEFAULT_REPEATS)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "probe.md"))
    ap.add_argument("--spec", default=None, help="also write the probed spec file (TOML) here")
    args = ap.parse_args(argv)
    say = lambda m: print(f"bench_probe: {m}", file=sys.stderr)  # noqa: E731
    result = run_probe(repeats=args.repeats, progress=say)
    second = run_probe(repeats=args.repeats, progress=say)
    rows, _ = agreement(result, second)
    text = markdown(result) + "\n" + rows
    Path(args.out).write_text(text, encoding="utf-8")
    if args.spec:
        Path(args.spec).write_text(to_toml(result.spec), encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
