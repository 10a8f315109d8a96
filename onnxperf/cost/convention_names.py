"""The names of the counting conventions (:mod:`onnxperf.cost.conventions` defines them): here alone, so that
a command's parser lists them (``--convention``) without loading the cost rules."""

CONVENTIONS = ("default", "torch", "fvcore", "tf")

__all__ = ["CONVENTIONS"]
