"""Every op of the default and ai.onnx.ml domains is either counted by a rule or declared
zero-cost: nothing is silently unsupported.

For each op, the newest non-deprecated schema version is looked up in the registry. Ops
whose every schema is deprecated (Upsample, Scatter) are skipped unless registered, in which
case they are checked like the others.
"""

from collections import defaultdict

import onnx
import pytest

from onnxperf.cost.ops import REGISTRY

DOMAINS = ("", "ai.onnx.ml")


def _newest_schemas(domain: str) -> dict[str, tuple[int, bool]]:
    """op -> (since_version of its newest non-deprecated schema, or of its newest schema when all
    are deprecated; whether every schema is deprecated)."""
    versions: dict[str, list[onnx.defs.OpSchema]] = defaultdict(list)
    for s in onnx.defs.get_all_schemas_with_history():
        if s.domain == domain:
            versions[s.name].append(s)
    out = {}
    for op, schemas in versions.items():
        live = [s.since_version for s in schemas if not s.deprecated]
        if live:
            out[op] = (max(live), False)
        else:
            out[op] = (max(s.since_version for s in schemas), True)
    return out


@pytest.mark.parametrize("domain", DOMAINS)
def test_every_op_has_a_rule_or_a_zero_declaration(domain):
    missing = []
    for op, (since, all_deprecated) in sorted(_newest_schemas(domain).items()):
        if all_deprecated and not REGISTRY.op_types(domain) & {op}:
            continue
        if REGISTRY.lookup(domain, op, since) is None:
            missing.append(f"{op} (since {since})")
    assert not missing, (f"{len(missing)} op(s) of domain {domain or 'ai.onnx'!r} have no cost rule and no "
                         f"zero-cost declaration:\n  " + "\n  ".join(missing))
