"""``onnxperf check``: pre-deployment review of models against a budget and a set of lints.

* :mod:`.budget`: the limits, read from a TOML file or ``[tool.onnxperf]`` in pyproject.toml;
* :mod:`.lints`: the registry of lints (``OP001`` ...), each with a severity and a one-line fix;
* :mod:`.ep`: which nodes an onnxruntime execution provider has no kernel for;
* :mod:`.runner`: one verdict per model, many models in worker processes;
* :mod:`.render`: text, json, junit, sarif and md.
"""

from onnxperf.products.check.budget import Budget, discover_budget, read_budget
from onnxperf.products.check.lints import LINTS, Finding
from onnxperf.products.check.runner import Verdict, check_model, check_models, exit_code

__all__ = ["Budget", "Finding", "LINTS", "Verdict", "check_model", "check_models", "discover_budget",
           "exit_code", "read_budget"]
