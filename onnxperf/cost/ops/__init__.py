"""Cost rules, one module per op family. Importing this package fills :data:`REGISTRY`.

Every module in this package other than ``registry`` is a family module and is imported
here, in sorted order, so adding a family is adding a file.
"""

import pkgutil
from importlib import import_module

from onnxperf.cost.ops.registry import REGISTRY, NodeView, OpCost, RuleEntry

for _info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
    if _info.name != "registry" and not _info.name.startswith("_"):
        import_module(f"{__name__}.{_info.name}")

__all__ = ["REGISTRY", "NodeView", "OpCost", "RuleEntry"]
