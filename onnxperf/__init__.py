"""onnxperf: static performance analysis of ONNX models."""

__version__ = "0.1.0"

from .analysis import Analysis, analyze  # noqa: E402
from .loader import load  # noqa: E402

__all__ = ["Analysis", "analyze", "load", "__version__"]
