"""What an index expression says about which invocation touches which element.

Three facts about the `ui32` index of a load, store or atomic, each a function
of the invocation ids in a given workgroup geometry (fusion asks them in the
*fused* geometry):

- `structurally_equal(a, b)`: the two expressions compute the same value in
  every invocation (same pure ops over ids, constants and `buf_len`), even when
  they come from different programs;
- `injective_in_invocation(e)`: no two invocations (of a 1-D arm) get the same
  value: `e` is a bijection of `invocation_id x` on the 32-bit integers
  (adding, subtracting or xor-ing a uniform value, multiplying by an odd
  constant, bit_not, reverse_bits, rotations);
- `in_workgroup_span(e, wg_x)`: every invocation of workgroup `w` gets a value
  in `[w * wg_x, (w + 1) * wg_x)`, e.g. `invocation_id x`, or
  `workgroup_id x * wg_x + r` with `r` provably in `[0, wg_x)` (an interval
  analysis over `local_id`, constants and ui32 arithmetic that cannot wrap).

Anything that reads a named local, a buffer or an atomic result is not an
expression of the invocation ids (`is_id_expression`), and every predicate
answers False.

```python
from vyre_xdsl.analysis import in_workgroup_span, injective_in_invocation

injective_in_invocation(store.index)            # e.g. %i, %i + %c, %i * 3, ...
in_workgroup_span(load.index, (64, 1, 1))       # e.g. workgroup_id x * 64 + local_id x
```
"""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue

from vyre_xdsl.analysis.expressions import is_expression
from vyre_xdsl.analysis.uniformity import is_dispatch_uniform
from vyre_xdsl.dialects.vyre import (
    ConstOp,
    InvocationIdOp,
    LocalIdOp,
    SelectOp,
    WorkgroupIdOp,
    ui32,
)

U32_MAX = 0xFFFFFFFF
FULL = (0, U32_MAX)


def _owner(value: SSAValue) -> Operation | None:
    owner = value.owner
    return owner if isinstance(owner, Operation) else None


def _mnemonic(op: Operation) -> str:
    return op.name.removeprefix("vyre.")


def is_id_expression(value: SSAValue) -> bool:
    """Whether `value` is computed only by expression ops from ids, constants and `buf_len`."""
    op = _owner(value)
    if op is None or not is_expression(op):
        return False
    return all(is_id_expression(operand) for operand in op.operands)


def structurally_equal(a: SSAValue, b: SSAValue) -> bool:
    """Whether `a` and `b` are the same pure expression tree (op names, properties, operands)."""
    if a is b:
        return True
    op_a, op_b = _owner(a), _owner(b)
    if op_a is None or op_b is None or not is_id_expression(a) or not is_id_expression(b):
        return False
    if op_a.name != op_b.name or op_a.properties != op_b.properties or a.type != b.type:
        return False
    if len(op_a.operands) != len(op_b.operands):
        return False
    return all(structurally_equal(x, y) for x, y in zip(op_a.operands, op_b.operands))


def _const(value: SSAValue) -> int | None:
    op = _owner(value)
    if isinstance(op, ConstOp) and value.type == ui32:
        return int(op.literal())
    return None


def is_invocation_x(value: SSAValue) -> bool:
    """Whether `value` is `vyre.invocation_id x` itself."""
    op = _owner(value)
    return isinstance(op, InvocationIdOp) and op.axis_index == 0


def injective_in_invocation(value: SSAValue) -> bool:
    """Whether `value` is a bijection of `invocation_id x` over the 32-bit integers."""
    if value.type != ui32:
        return False
    if is_invocation_x(value):
        return True
    op = _owner(value)
    if op is None or not is_id_expression(value):
        return False
    name = _mnemonic(op)
    operands = list(op.operands)
    if name in ("add", "bit_xor", "sub") and len(operands) == 2:
        a, b = operands
        return (injective_in_invocation(a) and is_dispatch_uniform(b)) or (
            is_dispatch_uniform(a) and injective_in_invocation(b)
        )
    if name == "mul" and len(operands) == 2:
        a, b = operands
        for e, c in ((a, b), (b, a)):
            factor = _const(c)
            if factor is not None and factor % 2 == 1 and injective_in_invocation(e):
                return True
        return False
    if name in ("rotate_left", "rotate_right") and len(operands) == 2:
        return injective_in_invocation(operands[0]) and is_dispatch_uniform(operands[1])
    if name in ("bit_not", "reverse_bits") and len(operands) == 1:
        return injective_in_invocation(operands[0])
    return False


def value_range(value: SSAValue, workgroup: tuple[int, int, int]) -> tuple[int, int]:
    """An interval containing every value `value` takes (FULL when unknown)."""
    op = _owner(value)
    if op is None or value.type != ui32 or not is_id_expression(value):
        return FULL
    if isinstance(op, ConstOp):
        c = int(op.literal())
        return c, c
    if isinstance(op, LocalIdOp):
        return 0, workgroup[op.axis_index] - 1
    if isinstance(op, SelectOp):
        lo1, hi1 = value_range(op.true_value, workgroup)
        lo2, hi2 = value_range(op.false_value, workgroup)
        return min(lo1, lo2), max(hi1, hi2)
    if len(op.operands) != 2:
        return FULL
    return _binary_range(_mnemonic(op), op.operands[0], op.operands[1], workgroup)


def _binary_range(name: str, a: SSAValue, b: SSAValue, workgroup) -> tuple[int, int]:
    (lo1, hi1), (lo2, hi2) = value_range(a, workgroup), value_range(b, workgroup)
    if name == "add" and hi1 + hi2 <= U32_MAX:
        return lo1 + lo2, hi1 + hi2
    if name == "sub" and lo1 >= hi2:
        return lo1 - hi2, hi1 - lo2
    if name == "mul" and hi1 * hi2 <= U32_MAX:
        return lo1 * lo2, hi1 * hi2
    if name == "div" and lo2 > 0:
        return lo1 // hi2, hi1 // lo2
    if name == "mod" and lo2 > 0:
        return (lo1, hi1) if hi1 < lo2 else (0, hi2 - 1)
    if name == "bit_and":
        return 0, min(hi1, hi2)
    if name == "shr" and lo2 == hi2:
        k = lo2 & 31
        return lo1 >> k, hi1 >> k
    if name == "min":
        return min(lo1, lo2), min(hi1, hi2)
    if name == "max":
        return max(lo1, lo2), max(hi1, hi2)
    if name in ("bit_or", "bit_xor"):
        bits = max(hi1, hi2).bit_length()
        return 0, (1 << bits) - 1
    return FULL


def _is_workgroup_base(value: SSAValue, wg_x: int) -> bool:
    """`workgroup_id x * wg_x` (as a mul by the constant, or a shl by its log2)."""
    op = _owner(value)
    if op is None or len(op.operands) != 2:
        return False
    a, b = op.operands
    name = _mnemonic(op)

    def is_wid(v: SSAValue) -> bool:
        owner = _owner(v)
        return isinstance(owner, WorkgroupIdOp) and owner.axis_index == 0

    if name == "mul":
        return (is_wid(a) and _const(b) == wg_x) or (is_wid(b) and _const(a) == wg_x)
    if name == "shl":
        shift = _const(b)
        return is_wid(a) and shift is not None and (1 << (shift & 31)) == wg_x
    return False


def in_workgroup_span(value: SSAValue, workgroup: tuple[int, int, int]) -> bool:
    """Whether every invocation of workgroup w gets a value in [w*wg_x, (w+1)*wg_x)."""
    if value.type != ui32:
        return False
    if is_invocation_x(value):
        return True
    op = _owner(value)
    if op is None or not is_id_expression(value) or len(op.operands) != 2:
        return False
    name = _mnemonic(op)
    wg_x = workgroup[0]
    power_of_two = wg_x & (wg_x - 1) == 0
    if name == "add" or (name == "bit_or" and power_of_two):
        a, b = op.operands
        for base, offset in ((a, b), (b, a)):
            if _is_workgroup_base(base, wg_x) and value_range(offset, workgroup)[1] < wg_x:
                return True
    return False
