"""``onnxperf compare``: two or more exports of one network, aligned node by node and explained.

* :mod:`.align`   — signatures of the compute-heavy nodes and their sequence alignment;
* :mod:`.explain` — the registry of explanation detectors (layout, BatchNorm folding, decomposed
  activations, Pad, constants, opsets, dtypes, quantization, architecture changes...);
* :mod:`.model`   — the JSON-serializable comparison model (schema ``onnxperf.compare/1``);
* :mod:`.render`  — text, Markdown, JSON and HTML renderers of that model.
"""

from __future__ import annotations

from onnxperf.products.compare.align import Alignment, Pair, Signature, align, align_signatures
from onnxperf.products.compare.explain import DETECTORS, Explanation, explain
from onnxperf.products.compare.model import SCHEMA, build, compare, load_sides

__all__ = ["Alignment", "DETECTORS", "Explanation", "Pair", "SCHEMA", "Signature", "align", "align_signatures",
           "build", "compare", "explain", "load_sides"]
