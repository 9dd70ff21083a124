"""Float constants print as the shortest decimal that parses back to the same
bits, for f16, bf16, f32 and f64: random bit patterns (subnormals, NaNs,
infinities and -0.0 among them) go through print and parse. The digits are
checked against numpy's shortest round-trip formatting
(`format_float_scientific(unique=True)`) for f16, f32 and f64, and for every
type against the rule itself: no decimal with one digit fewer round-trips."""

from __future__ import annotations

import decimal
import io

import numpy as np
import pytest
from xdsl.printer import Printer

from vyre_xdsl.context import parse_module
from vyre_xdsl.dialects import vyre
from vyre_xdsl.semantics import ELEMENTS

BITS = {"f16": np.uint16, "bf16": np.uint16, "f32": np.uint32, "f64": np.uint64}
SPECIAL = {
    "f16": [0x0000, 0x8000, 0x0001, 0x03FF, 0x7C00, 0xFC00, 0x7E00, 0x7BFF, 0x3C00],
    "bf16": [0x0000, 0x8000, 0x0001, 0x007F, 0x7F80, 0xFF80, 0x7FC0, 0x7F7F, 0x3DCD],
    "f32": [0, 0x80000000, 1, 0x007FFFFF, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7F7FFFFF],
    "f64": [0, 1 << 63, 1, (1 << 52) - 1, 0x7FF0 << 48, 0xFFF0 << 48, 0x7FF8 << 48],
}


def patterns(tname: str, count: int = 1500) -> np.ndarray:
    rng = np.random.default_rng(29)
    dtype = BITS[tname]
    width = np.dtype(dtype).itemsize * 8
    random = rng.integers(0, 2**width, size=count, dtype=np.uint64 if width == 64 else np.int64)
    return np.concatenate([np.array(SPECIAL[tname], dtype=dtype), random.astype(dtype)])


def held_bits(op: vyre.ConstOp, tname: str) -> int:
    info = ELEMENTS[tname]
    return int(np.array(op.literal(), dtype=info.dtype).view(BITS[tname]))


def printed(op: vyre.ConstOp) -> str:
    stream = io.StringIO()
    Printer(stream=stream).print_op(op)
    return stream.getvalue().split("vyre.const ", 1)[1].rsplit(" : ", 1)[0]


def round_trip(tname: str, texts: list[str]) -> list[vyre.ConstOp]:
    body = "\n".join(f"  %c{k} = vyre.const {t} : {tname}" for k, t in enumerate(texts))
    module = parse_module(f"vyre.program @p workgroup_size [1, 1, 1] {{\n{body}\n}}\n")
    program = next(iter(module.ops))
    return [op for op in program.body.block.ops if isinstance(op, vyre.ConstOp)]


def no_shorter_decimal_round_trips(text: str, value: float, tname: str) -> bool:
    """Neither decimal of one significant digit fewer around `value` (the one
    below and the one above) is the same `tname` value."""
    info = ELEMENTS[tname]
    digits = len(decimal.Decimal(text).normalize().as_tuple().digits)
    if digits == 1:
        return True
    exact = decimal.Decimal(value)
    step = decimal.Decimal(1).scaleb(exact.adjusted() - (digits - 2))
    below = (exact / step).to_integral_value(decimal.ROUND_FLOOR) * step
    for candidate in (below, below + step):
        with np.errstate(over="ignore"):
            if np.array(float(candidate), dtype=info.dtype) == np.array(value, dtype=info.dtype):
                return False
    return True


@pytest.mark.parametrize("tname", ["f16", "bf16", "f32", "f64"])
def test_random_bit_patterns_print_shortest_and_parse_back_to_the_same_bits(tname):
    info = ELEMENTS[tname]
    values = patterns(tname).view(info.dtype)
    ops = [vyre.ConstOp(float(v), tname) for v in values]
    texts = [printed(op) for op in ops]
    parsed = round_trip(tname, texts)
    for op, text, again, value in zip(ops, texts, parsed, values):
        assert held_bits(again, tname) == held_bits(op, tname), text
        if not np.isfinite(float(value)):
            assert text.startswith("0x"), text
            continue
        assert np.array(float(text), dtype=info.dtype).view(BITS[tname]) == held_bits(op, tname)
        assert no_shorter_decimal_round_trips(text, float(value), tname), text
        if tname != "bf16":
            assert float(text) == float(np.format_float_scientific(value, unique=True)), text


def test_the_issue_s_example_prints_as_written():
    (op,) = round_trip("f32", ["0.005"])
    assert printed(op) == "0.005"
