"""Named-local lookup (`find_local_declaration`) while a program verifies: the
per-block index gives the same declaration as the walk back through the block, and
verifying a long block stays linear."""

from __future__ import annotations

import pytest
from xdsl.ir import Operation

from vyre_xdsl.context import parse_module
from vyre_xdsl.diagnostics import VyreDiagnostic, verify_module
from vyre_xdsl.dialects.vyre import AssignOp, LetOp, LoopOp, VarOp, find_local_declaration
from vyre_xdsl.dialects.vyre.common import indexed_lets
from vyre_xdsl.testing.generators import random_module

# Each `vyre.var` (by its result's name, in EXPECTED) resolves to the declaration
# read off the scoping rules by hand: the nearest earlier let of its block, else the
# enclosing loop's variable, else the same search one block out.
SCOPES = """
vyre.program @p workgroup_size [1, 1, 1] {
  vyre.buffer @o binding 0 write_only : ui32[1]
  %z = vyre.const 0 : ui32
  %n = vyre.const 4 : ui32
  vyre.let @a = %z : ui32
  %a0 = vyre.var @a : ui32
  vyre.let @b = %a0 : ui32
  vyre.loop @k = %z to %n {
    %k0 = vyre.var @k : ui32
    %b0 = vyre.var @b : ui32
    vyre.let @c = %k0 : ui32
    %small = vyre.lt %k0, %n : ui32
    vyre.if %small {
      %c0 = vyre.var @c : ui32
      vyre.let @d = %c0 : ui32
      %d0 = vyre.var @d : ui32
      vyre.assign @a = %d0 : ui32
    }
    vyre.loop @j = %z to %k0 {
      %j0 = vyre.var @j : ui32
      %a1 = vyre.var @a : ui32
      vyre.let @d = %j0 : ui32
      %d1 = vyre.var @d : ui32
    }
  }
  vyre.let @d = %z : ui32
  %d2 = vyre.var @d : ui32
  vyre.store @o[%z] = %d2 : ui32
}
"""

EXPECTED = {
    "a0": "let-a",
    "k0": "loop-k",
    "b0": "let-b",
    "c0": "let-c",
    "d0": "let-d-inner",
    "j0": "loop-j",
    "a1": "let-a",
    "d1": "let-d-loop",
    "d2": "let-d-outer",
}

_DECLARATION_TAGS = {
    ("let", "a"): "let-a",
    ("let", "b"): "let-b",
    ("let", "c"): "let-c",
    ("loop", "k"): "loop-k",
    ("loop", "j"): "loop-j",
}


def _tag_of(declaration: Operation | None) -> str | None:
    if declaration is None:
        return None
    kind = "loop" if isinstance(declaration, LoopOp) else "let"
    name = declaration.var_name.data
    if name != "d":
        return _DECLARATION_TAGS[(kind, name)]
    # the three lets of @d: the one in the if's block, the inner loop's, the program's
    block_owner = declaration.parent_op()
    return {"vyre.if": "let-d-inner", "vyre.loop": "let-d-loop"}.get(
        block_owner.name if block_owner else "", "let-d-outer"
    )


def _named_ops(module) -> list[Operation]:
    return [op for op in module.walk() if isinstance(op, VarOp | AssignOp | LetOp | LoopOp)]


def test_hand_resolved_scopes_walking_and_indexed():
    module = parse_module(SCOPES)
    verify_module(module)
    reads = [op for op in module.walk() if isinstance(op, VarOp)]
    assert sorted(read.result.name_hint for read in reads) == sorted(EXPECTED)
    for read in reads:
        expected = EXPECTED[read.result.name_hint]
        walked = find_local_declaration(read, read.var_name.data)
        with indexed_lets():
            indexed = find_local_declaration(read, read.var_name.data)
        assert _tag_of(walked) == expected
        assert indexed is walked


def test_a_let_declared_after_the_use_is_not_found():
    text = """
vyre.program @p workgroup_size [1, 1, 1] {
  %z = vyre.const 0 : ui32
  %a = vyre.var @late : ui32
  vyre.let @late = %z : ui32
}
"""
    with pytest.raises(VyreDiagnostic, match="@late"):
        verify_module(parse_module(text))


@pytest.mark.parametrize("seed", range(12))
def test_index_agrees_with_the_walk_on_generated_modules(seed):
    module = random_module(seed).module
    named = _named_ops(module)
    walked = [find_local_declaration(op, op.var_name.data) for op in named]
    with indexed_lets():
        indexed = [find_local_declaration(op, op.var_name.data) for op in named]
    assert all(a is b for a, b in zip(walked, indexed, strict=True))


def _long_block(lets: int, shadow: bool) -> str:
    body = [f"  vyre.let @v{i} = %z : ui32" for i in range(lets)]
    body += [f"  %r{i} = vyre.var @v{i} : ui32" for i in range(lets)]
    if shadow:
        body.append("  vyre.let @v0 = %z : ui32")
    return (
        "vyre.program @p workgroup_size [1, 1, 1] {\n  %z = vyre.const 0 : ui32\n"
        + "\n".join(body)
        + "\n}\n"
    )


def test_long_block_verifies_in_linear_steps(monkeypatch):
    """Verifying a block of N lets and N reads steps through `prev_op` O(N) times,
    not O(N^2) (the walk took about N^2 / 2 = 2 million steps here)."""
    module = parse_module(_long_block(1000, shadow=False))
    steps = 0
    prev_op = Operation.prev_op

    def counted(self):
        nonlocal steps
        steps += 1
        return prev_op.fget(self)

    monkeypatch.setattr(Operation, "prev_op", property(counted))
    verify_module(module)
    assert steps < 20_000


def test_shadowing_in_a_long_block_is_still_an_error():
    with pytest.raises(VyreDiagnostic, match="@v0 is already declared in a visible scope"):
        verify_module(parse_module(_long_block(300, shadow=True)))


def test_the_index_of_one_thread_is_not_seen_by_another():
    """A thread that edits its own IR while another verifies must not read the
    other's index (which would be stale for the edited block)."""
    import threading

    module = parse_module(SCOPES)
    read = next(op for op in module.walk() if isinstance(op, VarOp) and op.var_name.data == "a")
    found: list[Operation | None] = []

    def edit_and_look_up():
        # erase the declaration: a lookup by walking no longer finds it
        declaration = find_local_declaration(read, "a")
        assert declaration is not None
        declaration.detach()
        found.append(find_local_declaration(read, "a"))

    with indexed_lets():
        assert find_local_declaration(read, "a") is not None  # indexed here
        worker = threading.Thread(target=edit_and_look_up)
        worker.start()
        worker.join()
    assert found == [None]
