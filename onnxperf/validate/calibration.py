"""Moved to :mod:`onnxperf.calibration.run`; this name stays only for ``benchmarks/accuracy.py``
until it imports from there."""

from ..calibration.run import calibration_table, run_calibration

__all__ = ["calibration_table", "run_calibration"]
