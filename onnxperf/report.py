"""The report as a Python API: ``onnxperf.report.html(result)`` is the page ``onnxperf report`` writes
for an :func:`onnxperf.analyze` result (:mod:`onnxperf.products.report` builds it)."""

from onnxperf.products.report import html

__all__ = ["html"]
