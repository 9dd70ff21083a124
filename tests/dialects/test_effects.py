"""The vyre ops' declared effects and traits, and what xDSL's own passes make of them.

Expected effects are written out by hand from SPEC sections 3 and 4 (which buffer
or named local an op reads or writes, which ops may trap), not derived from the
traits under test.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import numpy as np
import pytest
from xdsl.traits import MemoryEffectKind, get_effects, is_speculatable
from xdsl.transforms.canonicalize import CanonicalizePass
from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination
from xdsl.transforms.dead_code_elimination import DeadCodeElimination

import vyre_xdsl
from vyre_xdsl.analysis import may_trap
from vyre_xdsl.context import vyre_context
from vyre_xdsl.dialects import vyre as v
from vyre_xdsl.interpreter.trap import VyreTrap
from vyre_xdsl.semantics import OPS

READ, WRITE, ALLOC = MemoryEffectKind.READ, MemoryEffectKind.WRITE, MemoryEffectKind.ALLOC


# ------------------------------------------------------------ static op classes


def test_every_table_mnemonic_has_exactly_one_declared_class():
    # the dialect is a package, one module per op family
    source = "".join(path.read_text() for path in sorted(Path(v.__file__).parent.glob("*.py")))
    declared = re.findall(r'^    name = "vyre\.(\w+)"$', source, flags=re.MULTILINE)
    table_classes = [op for op in v.Vyre.operations if op.has_trait(v.TableLike)]
    # one class per table entry and one table entry per class
    assert sorted(op.name.removeprefix("vyre.") for op in table_classes) == sorted(OPS)
    # each table mnemonic is declared exactly once in the source
    for name in OPS:
        assert declared.count(name) == 1, name
    assert set(v.TABLE_OPS) == set(OPS)


@pytest.mark.parametrize("mnemonic", sorted(OPS))
def test_table_op_class_is_written_in_the_source(mnemonic):
    cls = v.TABLE_OPS[mnemonic]
    class_name = "".join(part.capitalize() for part in mnemonic.split("_")) + "Op"
    assert cls.__name__ == class_name
    assert getattr(v, class_name) is cls
    source = inspect.getsource(cls)  # fails for a class made at import time by type()
    assert source.startswith(f"@irdl_op_definition\nclass {class_name}(")
    assert f'name = "vyre.{mnemonic}"' in source
    assert "```mlir" in (cls.__doc__ or "") and f"vyre.{mnemonic} " in cls.__doc__
    assert cls.semantics() is OPS[mnemonic]
    assert cls in v.Vyre.operations


def test_table_op_docstring_examples_parse_and_verify():
    zero = {"ui32": "0", "si32": "0", "f32": "0.0", "i1": "false"}
    for mnemonic, cls in v.TABLE_OPS.items():
        line = cls.__doc__.split("```mlir\n")[1].split("\n")[0].split("//")[0].strip()
        ty = line.rsplit(":", 1)[1].strip()
        text = (
            "vyre.program @p workgroup_size [1, 1, 1] {\n"
            f"  %a = vyre.const {zero[ty]} : {ty}\n"
            f"  %b = vyre.const {zero[ty]} : {ty}\n"
            f"  {line}\n"
            "}\n"
        )
        module = vyre_xdsl.parse(text)  # raises if the example is not valid IR
        assert any(isinstance(op, cls) for op in module.walk()), mnemonic


# ------------------------------------------------------------ declared effects

PROGRAM = """
vyre.program @p workgroup_size [4, 1, 1] {
  vyre.buffer @ro binding 0 read_only : si32[4]
  vyre.buffer @un binding 1 uniform : ui32[4]
  vyre.buffer @rw binding 2 read_write : ui32[4]
  vyre.buffer @wo binding 3 write_only : ui32[4]
  vyre.buffer @sh workgroup : ui32[4]
  %i = vyre.invocation_id x
  %a = vyre.load @ro[%i] : si32
  %u = vyre.load @un[%i] : ui32
  %r = vyre.load @rw[%i] : ui32
  %s = vyre.load @sh[%i] : ui32
  %n = vyre.buf_len @rw
  vyre.store @wo[%i] = %r : ui32
  %old = vyre.atomic add @rw[%i], %u : ui32
  vyre.let @acc = %r : ui32
  vyre.assign @acc = %u : ui32
  %acc = vyre.var @acc : ui32
  %qs = vyre.div %a, %a : si32
  %ms = vyre.mod %a, %a : si32
  %qu = vyre.div %r, %u : ui32
  %mu = vyre.mod %r, %u : ui32
  %f = vyre.cast %r : ui32 to f32
  %qf = vyre.div %f, %f : f32
  %add = vyre.add %a, %a : si32
  vyre.block {
    vyre.let @t = %r : ui32
    %t = vyre.var @t : ui32
    vyre.assign @acc = %t : ui32
  }
  vyre.loop @k = %i to %u {
    %k = vyre.var @k : ui32
    vyre.store @rw[%k] = %k : ui32
  }
  vyre.if %c {
    vyre.return
  }
}
"""


def _program_ops():
    text = PROGRAM.replace("  vyre.if %c {", "  %c = vyre.lt %r, %u : ui32\n  vyre.if %c {")
    module = vyre_xdsl.parse(text)
    ops = {}
    for op in module.walk():
        if op.results and op.results[0].name_hint:
            ops[op.results[0].name_hint] = op
    return module, ops


def _effects(op):
    effects = get_effects(op)
    assert effects is not None, f"{op.name} has unknown effects"
    return {(e.kind, e.resource.name()) for e in effects}


def test_loads_read_their_buffer_unless_the_program_cannot_write_it():
    _, ops = _program_ops()
    assert _effects(ops["r"]) == {(READ, "buffer @rw")}
    assert _effects(ops["s"]) == {(READ, "buffer @sh")}
    assert _effects(ops["a"]) == set()  # read_only: nothing in the program writes it
    assert _effects(ops["u"]) == set()  # uniform: likewise
    assert _effects(ops["n"]) == set()  # a buffer's length never changes during a run
    assert all(is_speculatable(ops[n]) for n in ("a", "u", "r", "s"))  # no load traps


def test_effects_carry_the_buffer_symbol():
    _, ops = _program_ops()
    (effect,) = get_effects(ops["r"])
    assert effect.value is not None and effect.value.root_reference.data == "rw"


def test_stores_atomics_and_declarations_name_their_buffer():
    module, ops = _program_ops()
    store = next(op for op in module.walk() if isinstance(op, v.StoreOp))
    assert _effects(store) == {(WRITE, "buffer @wo")}
    assert _effects(ops["old"]) == {(READ, "buffer @rw"), (WRITE, "buffer @rw")}
    for buffer in module.walk():
        if isinstance(buffer, v.BufferOp):
            assert _effects(buffer) == {(ALLOC, f"buffer @{buffer.buffer_name}")}


def test_named_locals_are_their_own_resources():
    module, ops = _program_ops()
    let = next(op for op in module.walk() if isinstance(op, v.LetOp))
    assign = next(op for op in module.walk() if isinstance(op, v.AssignOp))
    assert _effects(let) == {(ALLOC, "local @acc"), (WRITE, "local @acc")}
    assert _effects(assign) == {(WRITE, "local @acc")}
    assert _effects(ops["acc"]) == {(READ, "local @acc")}


def test_scopes_hide_the_locals_declared_inside_them():
    module, _ = _program_ops()
    block = next(op for op in module.walk() if isinstance(op, v.BlockOp))
    loop = next(op for op in module.walk() if isinstance(op, v.LoopOp))
    if_op = next(op for op in module.walk() if isinstance(op, v.IfOp))
    # @t lives in the block; @acc is declared outside and assigned inside
    assert _effects(block) == {(WRITE, "local @acc")}
    # the loop variable @k is the loop's own
    assert _effects(loop) == {(WRITE, "buffer @rw")}
    assert _effects(if_op) == {(WRITE, "<Default>")}


def test_only_si32_div_and_mod_may_trap():
    _, ops = _program_ops()
    for name in ("qs", "ms"):
        assert _effects(ops[name]) == {(WRITE, "trap")}
        assert not is_speculatable(ops[name])
        assert may_trap(ops[name])
    for name in ("qu", "mu", "qf", "add", "f"):
        assert _effects(ops[name]) == set(), name
        assert is_speculatable(ops[name]), name
        assert not may_trap(ops[name])


def test_trap_return_and_barrier_keep_conservative_effects():
    module = vyre_xdsl.parse(
        """
vyre.program @p workgroup_size [4, 1, 1] {
  vyre.buffer @o binding 0 read_write : ui32[4]
  %i = vyre.invocation_id x
  vyre.barrier
  vyre.trap %i "t"
  vyre.return
}
"""
    )
    for op in module.walk():
        if isinstance(op, v.BarrierOp | v.TrapOp | v.ReturnOp):
            assert _effects(op) == {(WRITE, "<Default>")}, op.name


# ------------------------------------------------------------ what the stock passes do


def _apply(text: str, *passes) -> str:
    module = vyre_xdsl.parse(text)
    ctx = vyre_context()
    for p in passes:
        p.apply(ctx, module)
    module.verify()
    return str(module)


def test_dce_keeps_declarations_lets_and_trapping_ops():
    text = """
vyre.program @p workgroup_size [4, 1, 1] {
  vyre.buffer @unused binding 0 read_only : ui32[4]
  vyre.buffer @a binding 1 read_only : si32[4]
  vyre.buffer @o binding 2 read_write : si32[4]
  %i = vyre.invocation_id x
  %a = vyre.load @a[%i] : si32
  %z = vyre.const 0 : si32
  %q = vyre.div %a, %z : si32
  %qu = vyre.bitcast %a : si32 to ui32
  %d = vyre.div %qu, %qu : ui32
  vyre.let @never_read = %a : si32
  %dead = vyre.load @o[%i] : si32
}
"""
    out = _apply(text, DeadCodeElimination())
    assert "vyre.buffer @unused" in out
    assert "vyre.let @never_read" in out
    assert "vyre.div %a, %z : si32" in out
    assert "vyre.load @o" not in out  # a read alone is dead
    assert "vyre.div %qu" not in out  # ui32 division cannot trap: dead
    assert "vyre.bitcast" not in out


def test_cse_does_not_merge_loads_across_a_store_to_the_same_buffer():
    text = """
vyre.program @p workgroup_size [4, 1, 1] {
  vyre.buffer @ro binding 0 read_only : ui32[4]
  vyre.buffer @o binding 1 read_write : ui32[4]
  %i = vyre.invocation_id x
  %x1 = vyre.load @o[%i] : ui32
  %r1 = vyre.load @ro[%i] : ui32
  vyre.store @o[%i] = %r1 : ui32
  %x2 = vyre.load @o[%i] : ui32
  %r2 = vyre.load @ro[%i] : ui32
  %s = vyre.add %x1, %x2 : ui32
  %t = vyre.add %s, %r2 : ui32
  vyre.store @o[%i] = %t : ui32
}
"""
    out = _apply(text, CommonSubexpressionElimination())
    assert out.count("vyre.load @o") == 2  # the store in between may change @o
    assert out.count("vyre.load @ro") == 1  # a read_only buffer cannot change
    rng = np.random.default_rng(0)
    inputs = {
        "ro": rng.integers(0, 100, 4).astype(np.uint32),
        "o": rng.integers(0, 100, 4).astype(np.uint32),
    }
    before = vyre_xdsl.run(text, inputs=inputs, backend="reference")
    after = vyre_xdsl.run(out, inputs=inputs, backend="reference")
    np.testing.assert_array_equal(before["o"], after["o"])
    # and independently: o = o_in + ro + ro
    np.testing.assert_array_equal(after["o"], inputs["o"] + 2 * inputs["ro"])


UNUSED_TRAP = """
vyre.program @p workgroup_size [4, 1, 1] {
  vyre.buffer @a binding 0 read_only : si32[4]
  vyre.buffer @o binding 1 write_only : si32[4]
  %i = vyre.invocation_id x
  %a = vyre.load @a[%i] : si32
  %zero = vyre.const 0 : si32
  %q = vyre.div %a, %zero : si32
  vyre.store @o[%i] = %a : si32
}
"""


@pytest.mark.parametrize(
    "passes",
    [
        [CanonicalizePass()],
        [DeadCodeElimination()],
        [CommonSubexpressionElimination()],
        [CanonicalizePass(), CommonSubexpressionElimination(), DeadCodeElimination()],
    ],
    ids=["canonicalize", "dce", "cse", "canonicalize,cse,dce"],
)
def test_an_unused_si32_division_by_zero_still_traps(passes):
    out = _apply(UNUSED_TRAP, *passes)
    assert "vyre.div" in out
    with pytest.raises(VyreTrap):
        vyre_xdsl.run(out, inputs={"a": np.arange(4, dtype=np.int32)}, backend="reference")
