"""The bundled examples parse, verify, round-trip, and together use every vyre op."""

import io

import pytest
from xdsl.printer import Printer

from vyre_xdsl.context import parse_module
from vyre_xdsl.diagnostics import verify_module
from vyre_xdsl.dialects.vyre import Vyre

from .. import support

EXAMPLES = sorted(support.EXAMPLES.glob("*.mlir"))


def _generic(module) -> str:
    stream = io.StringIO()
    Printer(stream=stream, print_generic_format=True).print_op(module)
    return stream.getvalue()


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_round_trips(path):
    module = parse_module(path.read_text(), path.name)
    verify_module(module)
    text = str(module)
    assert str(parse_module(text)) == text
    assert str(parse_module(_generic(module))) == text


def test_examples_use_every_op():
    used = set()
    for path in EXAMPLES:
        used |= {op.name for op in parse_module(path.read_text()).walk()}
    every = {op.name for op in Vyre.operations}
    assert not every - used, f"ops no example uses: {sorted(every - used)}"


def test_at_least_six_examples():
    assert len(EXAMPLES) >= 6
