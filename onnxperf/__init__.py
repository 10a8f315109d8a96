"""onnxperf: static performance analysis of ONNX models."""

__version__ = "0.1.0"

__all__ = ["Analysis", "analyze", "load", "__version__"]

#: the public names, imported on first use (PEP 562): ``import onnxperf.cli`` and the commands that
#: do not analyze a model (``hw list``, ``--help``) do not pay for onnx, numpy and the cost rules
_LAZY = {"Analysis": "analysis.result", "analyze": "api", "load": "graph.loader"}


def __getattr__(name: str):
    if name in _LAZY:
        from importlib import import_module

        value = getattr(import_module(f"{__name__}.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
