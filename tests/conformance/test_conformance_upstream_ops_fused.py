"""The ops vyre_xdsl took from upstream, fused: every case of
`test_conformance_upstream_ops.py` that runs on every backend, followed by a
second program that copies each of its outputs (`@out` -> `@out_copy`), runs
with `fuse=True` (an output the second program reads becomes an intermediate
and only its copy comes back). The copies must equal the same independent expectations as
the outputs (plain Python and numpy, from upstream's definitions), so a fused
kernel that computed an op differently, or forwarded the wrong value, fails.
Unfused runs are the plain conformance cases.
"""

from __future__ import annotations

import re

import pytest
from conformance_support import Case, check
from test_conformance_upstream_ops import atomic_cases, cases

from vyre_xdsl.abi import signature
from vyre_xdsl.api import fuse_module, parse
from vyre_xdsl.dialects.vyre import programs

DECLARATION = re.compile(r"vyre\.buffer @(\w+) binding (\d+) \w+ : (\w+)\[(\d+)\]")


def follower(text: str, outputs: list[str]) -> str:
    """A program that copies each of `outputs` (as declared in `text`) to `@NAME_copy`."""
    declared = {m[1]: (int(m[2]), m[3], int(m[4])) for m in DECLARATION.finditer(text)}
    slot = max(binding for binding, _, _ in declared.values()) + 1
    lines = ["vyre.program @follow workgroup_size [64, 1, 1] {"]
    body = ["  %i = vyre.invocation_id x"]
    for k, name in enumerate(outputs):
        binding, element, count = declared[name]
        lines.append(f"  vyre.buffer @{name} binding {binding} read_only : {element}[{count}]")
        lines.append(
            f"  vyre.buffer @{name}_copy binding {slot + k} write_only : {element}[{count}]"
        )
        body += [
            f"  %v{k} = vyre.load @{name}[%i] : {element}",
            f"  vyre.store @{name}_copy[%i] = %v{k} : {element}",
        ]
    return "\n".join(lines + body) + "\n}\n"


def fused_case(case: Case) -> Case:
    outputs = sorted(case.expected)
    text = case.text + follower(case.text, outputs)
    returned = set(signature(parse(text)).outputs)  # an output read by @follow is not
    expected = {n: case.expected[n] for n in outputs if n in returned}
    expected |= {f"{n}_copy": case.expected[n] for n in outputs}
    return Case(
        f"{case.name}-fused",
        text,
        case.inputs,
        expected,
        ulp=case.ulp,
        device_ulp=case.device_ulp,
        accuracy=case.accuracy,
        backends=case.backends,
        flushed=case.flushed,
        fuse=True,
    )


CASES = [fused_case(c) for c in cases() + atomic_cases() if c.trap is None and c.backends is None]


@pytest.mark.parametrize("backend", ["reference", "wgpu"])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_upstream_op_fused(case, backend):
    check(case, backend)


def test_the_cases_really_fuse():
    """Each module becomes one program (possibly split at a grid_sync)."""
    for case in CASES:
        assert len(programs(fuse_module(parse(case.text)))) == 1, case.name
