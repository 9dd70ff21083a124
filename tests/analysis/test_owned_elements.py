"""`owned_elements` against brute force: on random small launches and random
guarded affine indices, every buffer it calls owned must be one that no two
invocations touch at one element, counted by running every invocation's
guards and indices in 32-bit arithmetic here (an independent evaluation).

The indices are built as the tiled products build them, `n * H + X` under a
guard `X < bound`, with random coefficients, offsets and bounds, so that some
are owned (the bound is `n` and the offsets keep the blocks apart) and many
are not (the bound overhangs, an offset reaches a neighbour, a form wraps).
"""

from __future__ import annotations

import itertools

from hypothesis import given, note, settings
from hypothesis import strategies as st

from vyre_xdsl.analysis.workgroup_memory import owned_elements
from vyre_xdsl.context import parse_module

U32 = 1 << 32
IDS = ("lx", "wx", "ly", "wy")

KERNEL = """
builtin.module {{
  kernel.descriptor @p id "0" entry "main" attributes {{source = "p"}} {{
    kernel.dispatch workgroup_size [{tx}, {ty}, 1] program_workgroup_size [{tx}, {ty}, 1] grid explicit [{gx}, {gy}, 1] count [@y]
    kernel.binding @y slot 0 group 0 global read_write : ui32[64]
    %lx = kernel.local_id x
    %ly = kernel.local_id y
    %wx = kernel.workgroup_id x
    %wy = kernel.workgroup_id y
{body}
    kernel.barrier
  }}
}}
"""


class Text:
    """SSA text for affine forms of the ids."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.count = 0

    def value(self, op: str, a: str, b: str) -> str:
        self.count += 1
        name = f"%v{self.count}"
        self.lines.append(f"    {name} = vyre.{op} {a}, {b} : ui32")
        return name

    def const(self, c: int) -> str:
        self.count += 1
        name = f"%v{self.count}"
        self.lines.append(f"    {name} = vyre.const {c % U32} : ui32")
        return name

    def form(self, coefficients: dict[str, int], constant: int) -> str:
        total = self.const(constant)
        for key, c in coefficients.items():
            if c:
                total = self.value("add", total, self.value("mul", f"%{key}", self.const(c)))
        return total


def evaluate(coefficients: dict[str, int], constant: int, ids: dict[str, int]) -> int:
    return (constant + sum(c * ids[key] for key, c in coefficients.items())) % U32


@st.composite
def launches(draw):
    extents = {
        "lx": draw(st.sampled_from([1, 2, 4])),
        "ly": draw(st.sampled_from([1, 2, 4])),
        "wx": draw(st.integers(1, 3)),
        "wy": draw(st.integers(1, 3)),
    }
    n = draw(st.sampled_from([3, 4, 6, 8, 12, 16]))
    # dense strides, so that offsets and overhangs reach other invocations
    local = st.sampled_from([0, 1, 1, 2, 2, 3, 4, 8])
    group = st.sampled_from([0, 1, 2, 4, 4, 8, 8, 16, 24])
    # X on one axis, H on the other (or, now and then, both on one)
    x_axis = draw(st.sampled_from(["x", "y"]))
    h_axis = draw(st.sampled_from(["y", "x"] if x_axis == "x" else ["x", "y"]))
    x_lin = {"l" + x_axis: draw(local), "w" + x_axis: draw(group)}
    h_lin = {"l" + h_axis: draw(local), "w" + h_axis: draw(group)}
    if draw(st.integers(0, 5)) == 0:  # a wrapping row stride now and then
        h_lin["w" + h_axis] = draw(st.sampled_from([1 << 30, 1 << 31, (1 << 32) - 1]))
    accesses = []
    for _ in range(draw(st.integers(1, 3))):
        x_off, h_off = draw(st.integers(0, 4)), draw(st.integers(0, 1))
        # an offset outside the guarded part now and then
        extra = draw(st.sampled_from([0, 0, 0, 0, 1, 2, 5, n]))
        guard = draw(st.sampled_from(["then", "then", "then", "then", "none", "else"]))
        bound = draw(st.sampled_from([n, n, n, n, n, 1, 2, 5, 9, 13, 17, 20]))
        store = draw(st.booleans())
        accesses.append((x_off, h_off, extra, guard, bound, store))
    return extents, n, x_lin, h_lin, accesses


def kernel_text(extents, n, x_lin, h_lin, accesses) -> str:
    t = Text()
    body: list[str] = []
    for x_off, h_off, extra, guard, bound, store in accesses:
        x = t.form(x_lin, x_off)
        row = t.value("mul", t.form(h_lin, h_off), t.const(n))
        index = t.value("add", t.value("add", row, x), t.const(extra))
        op = (
            f"kernel.store_global slot 0 [{index}] = {index} : ui32"
            if store
            else f"%l{len(body)} = kernel.load_global slot 0 [{index}] : ui32"
        )
        if guard == "none":
            body.append(f"    {op}")
            continue
        t.count += 1
        cond = f"%c{t.count}"
        t.lines.append(f"    {cond} = vyre.lt {x}, {t.const(bound)} : ui32")
        if guard == "else":
            body.append(f"    kernel.if {cond} {{\n    }} else {{\n      {op}\n    }}")
        else:
            body.append(f"    kernel.if {cond} {{\n      {op}\n    }}")
    return KERNEL.format(
        tx=extents["lx"],
        ty=extents["ly"],
        gx=extents["wx"],
        gy=extents["wy"],
        body="\n".join(t.lines + body),
    )


def touched_twice(extents, n, x_lin, h_lin, accesses) -> bool:
    """Whether two invocations touch one element (every invocation, every access)."""
    owner: dict[int, tuple[int, ...]] = {}
    for ids_tuple in itertools.product(*(range(extents[key]) for key in IDS)):
        ids = dict(zip(IDS, ids_tuple, strict=True))
        for x_off, h_off, extra, guard, bound, _ in accesses:
            x = evaluate(x_lin, x_off, ids)
            runs = {"none": True, "else": x >= bound, "then": x < bound}[guard]
            if not runs:
                continue
            index = (evaluate(h_lin, h_off, ids) * n + x + extra) % U32
            if owner.setdefault(index, ids_tuple) != ids_tuple:
                return True
    return False


@settings(max_examples=400, deadline=None)
@given(launch=launches())
def test_owned_only_where_no_two_invocations_meet(launch):
    text = kernel_text(*launch)
    note(text)
    descriptor = parse_module(text).body.block.first_op
    if "y" in owned_elements(descriptor):
        assert not touched_twice(*launch)


def test_the_generator_reaches_both_answers():
    """The property above is not vacuous: a tiled block (owned) and an
    overhanging one (not owned), each checked by brute force too."""
    extents = {"lx": 4, "ly": 2, "wx": 2, "wy": 3}
    x_lin, h_lin = {"lx": 2, "wx": 8}, {"ly": 1, "wy": 2}
    owned = (extents, 12, x_lin, h_lin, [(0, 0, 0, "then", 12, False), (1, 0, 0, "then", 12, True)])
    shared = (extents, 12, x_lin, h_lin, [(0, 0, 0, "then", 16, True)])
    for launch, expected in ((owned, True), (shared, False)):
        descriptor = parse_module(kernel_text(*launch)).body.block.first_op
        assert ("y" in owned_elements(descriptor)) == expected
        assert touched_twice(*launch) != expected
