"""The WGSL printer: one `kernel.descriptor` -> one WGSL compute module.

Pure `vyre` ops are printed from the semantics table (`vyre_xdsl.semantics`):
the same entry the reference interpreter evaluates gives the WGSL expression,
the trap condition of si32 `div`/`mod` and any helper function, so the two
never disagree by construction. The rest is one method per kernel op, keyed by
op class in `_STATEMENTS` (the singledispatch idea of xDSL's own WGSL printer).

Semantics made explicit rather than left to the driver (SPEC section 3.4):
- loads clamp the index into the buffer and select the typed zero when it is
  out of bounds; stores and atomics are skipped when it is; the bound is the
  declared element count, or `arrayLength` for a runtime-sized buffer;
- Bool buffers hold one u32 word per element (load `!= 0u`, store 0u/1u);
- atomically targeted buffers are `array<atomic<u32>>` (plain loads and stores on
  them use atomicLoad/atomicStore); `compare_exchange` loops over
  `atomicCompareExchangeWeak` until it succeeds or sees another value (strong);
- traps (`kernel.trap`, si32 div/mod by 0 or INT_MIN / -1) record (address,
  tag code, linear invocation) of the lowest trapping invocation in the trap
  sidecar (lock-free with u64 atomics where the device has them, else under a
  bounded lock; see `for_device`) and end the invocation; in kernels with barriers they record and continue (WGSL
  uniformity forbids the `return`; the run raises anyway);
- ids are the program's: logical workgroup = wid.x + wid.y * num_workgroups.x
  (`vyre_xdsl.dispatch`); a kernel widened from a `[1, 1, 1]` program derives
  them from its linear invocation index and skips invocations past the
  program's declared launch.

The printer is a pure emitter: every choice it prints by is recorded in the
kernel IR by a pass (docs/kernel-dialect.md, "What a backend reads"): the
vector form and coarsening with their launch grid (`kernel-vectorize`,
`kernel-coarsen`), and from `vyre-lower` the loops to unroll (`unroll`), the
workgroup bindings that need no clear (`written_first`), the barriers that need
not order storage (`workgroup_only`) and the declared invocations of a widened
kernel. It imports no analysis, lowering or fusion code.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from xdsl.ir import Operation, SSAValue

from vyre_xdsl import semantics
from vyre_xdsl.backends.wgsl import floats, int64, packed
from vyre_xdsl.diagnostics import VyreDiagnostic, VyreError
from vyre_xdsl.dialects import kernel as k
from vyre_xdsl.dialects import vyre as v
from vyre_xdsl.traps import (
    INT64_ATOMIC_FEATURES,
    SIDECAR_CLAIM,
    SIDECAR_FLAGS,
    SIDECAR_GAVE_UP,
    SIDECAR_LOCK,
    SIDECAR_LOOP_LEFT_EARLY,
    SIDECAR_RECORD,
    TRAP_LOCK_ATTEMPTS,
    tag_code,
)

#: A WGSL module larger than this is refused (seed 001: adapters' shader size
#: limits are finite; Metal on iOS is the strictest).
MAX_WGSL_BYTES = 32 * 1024 * 1024

SIDECAR_VAR = "vyre_trap_sidecar"

#: The trap sidecar's layout and tag codes are `vyre_xdsl.traps` (read back by the runtime).

#: The sidecar as the printer declares it (the locked form; `for_device` swaps it).
SIDECAR_TYPE = "array<atomic<u32>>"

#: Locked form (any adapter). The claim is an atomicMax, so it always names the
#: lowest trapping invocation (a larger key is a lower invocation); the record is
#: written under a lock, only by the invocation that still holds the best claim.
#: The lock is bounded: WGSL promises no forward progress between invocations, so
#: a waiter gives up after TRAP_LOCK_ATTEMPTS attempts and sets bit 2; the run then
#: fails clearly when the record is not the claim's. A loop ended by the driver
#: (not by a `return`) sets the loop flag.
TRAP_HELPER = f"""fn vyre_record_trap(address: u32, code: u32, invocation: u32) {{
  let key = ~invocation;
  if (atomicMax(&{SIDECAR_VAR}[{SIDECAR_CLAIM}], key) >= key) {{
    return;
  }}
  var attempt = 0u;
  loop {{
    if (attempt == {TRAP_LOCK_ATTEMPTS}u) {{
      atomicOr(&{SIDECAR_VAR}[{SIDECAR_FLAGS}], {SIDECAR_GAVE_UP}u);
      return;
    }}
    attempt += 1u;
    if (atomicLoad(&{SIDECAR_VAR}[{SIDECAR_CLAIM}]) != key) {{
      return;
    }}
    let held = atomicOr(&{SIDECAR_VAR}[{SIDECAR_FLAGS}], {SIDECAR_LOCK}u);
    if ((held & {SIDECAR_LOCK}u) == 0u) {{
      if (atomicLoad(&{SIDECAR_VAR}[{SIDECAR_CLAIM}]) == key) {{
        atomicStore(&{SIDECAR_VAR}[{SIDECAR_RECORD}], address);
        atomicStore(&{SIDECAR_VAR}[{SIDECAR_RECORD + 1}], key);
        atomicStore(&{SIDECAR_VAR}[{SIDECAR_RECORD + 2}], code);
        atomicStore(&{SIDECAR_VAR}[{SIDECAR_RECORD + 3}], key);
      }}
      atomicAnd(&{SIDECAR_VAR}[{SIDECAR_FLAGS}], {0xFFFFFFFF ^ SIDECAR_LOCK:#x}u);
      return;
    }}
  }}
  vyre_loop_left_early();
}}"""

#: Called where a loop ended before its exit condition held: the driver left it.
LOOP_LIMIT_HELPER = f"""fn vyre_loop_left_early() {{
  atomicOr(&{SIDECAR_VAR}[{SIDECAR_FLAGS}], {SIDECAR_LOOP_LEFT_EARLY}u);
}}"""

#: Lock-free form (adapters with INT64_ATOMIC_FEATURES): two u64 atomicMax with the
#: key in the high half, so each word ends with the lowest trapping invocation's
#: value; an invocation records only its first trap (kernels with barriers go on).
INT64_SIDECAR_TYPE = "vyre_trap_sidecar_t"
INT64_TRAP_HELPER = f"""struct {INT64_SIDECAR_TYPE} {{
  words: array<atomic<u32>, {SIDECAR_RECORD}>,
  records: array<atomic<u64>, 2>,
}}

var<private> vyre_trapped: bool;

fn vyre_record_trap(address: u32, code: u32, invocation: u32) {{
  if (vyre_trapped) {{
    return;
  }}
  vyre_trapped = true;
  let key = u64(~invocation) << 32u;
  atomicMax(&{SIDECAR_VAR}.records[0], key | u64(address));
  atomicMax(&{SIDECAR_VAR}.records[1], key | u64(code));
}}"""
INT64_LOOP_LIMIT_HELPER = LOOP_LIMIT_HELPER.replace(
    f"{SIDECAR_VAR}[{SIDECAR_FLAGS}]", f"{SIDECAR_VAR}.words[{SIDECAR_FLAGS}]"
)


def for_device(wgsl: str, features: frozenset[str] | set[str]) -> str:
    """The WGSL to compile on a device with `features`: a kernel that records traps
    gets the lock-free form when the device has INT64_ATOMIC_FEATURES; otherwise
    `wgsl` as printed (the bounded locked form)."""
    if TRAP_HELPER not in wgsl or not set(INT64_ATOMIC_FEATURES) <= set(features):
        return wgsl
    declared = f"{SIDECAR_VAR}: {SIDECAR_TYPE};"
    return (
        wgsl.replace(declared, f"{SIDECAR_VAR}: {INT64_SIDECAR_TYPE};")
        .replace(LOOP_LIMIT_HELPER, INT64_LOOP_LIMIT_HELPER)
        .replace(TRAP_HELPER, INT64_TRAP_HELPER)
    )


#: atomics printed as one builtin call (the others loop over a compare-exchange)
UNGUARDED_ATOMICS = ("add", "or", "and", "xor", "min", "max", "exchange")


U32_MAX = 0xFFFFFFFF


def largest_value(value: SSAValue, dispatch: k.DispatchOp) -> int | None:
    """An upper bound on the `ui32` `value` in every invocation, when one follows
    from constants, local ids and the ops that bound their result (`bit_and`,
    `mod`, `min`, `shr` by a constant, `add`/`mul` without wrap-around), else None.
    The printer leaves out the bounds check of an index below a static length."""
    op = value.owner
    if value.type != v.ui32 or not isinstance(op, Operation):
        return None
    if isinstance(op, v.ConstOp):
        return int(op.literal())
    if isinstance(op, k.LocalIdOp):
        return 0 if dispatch.is_widened else dispatch.kernel_workgroup[op.axis_index] - 1
    if isinstance(op, v.Unpack8LowOp):
        return 0xFF
    if not isinstance(op, v.AddOp | v.MulOp | v.BitAndOp | v.ModOp | v.MinOp | v.ShrOp):
        return None
    a, b = (largest_value(x, dispatch) for x in op.operands)
    if isinstance(op, v.BitAndOp | v.MinOp):
        known = [x for x in (a, b) if x is not None]
        return min(known) if known else None
    if isinstance(op, v.ModOp):
        divisor = op.operands[1].owner
        if not isinstance(divisor, v.ConstOp):
            return None
        d = int(divisor.literal())
        return 0 if d == 0 else (d - 1 if a is None else min(a, d - 1))
    if isinstance(op, v.ShrOp):
        shift = op.operands[1].owner
        if not isinstance(shift, v.ConstOp):
            return None
        return (U32_MAX if a is None else a) >> (int(shift.literal()) & 31)
    if a is None or b is None:
        return None
    most = a + b if isinstance(op, v.AddOp) else a * b
    return most if most <= U32_MAX else None


class WgslModuleTooLarge(VyreError):
    """The printed module exceeds the 32 MiB cap."""


@dataclass
class PrintedKernel:
    """The WGSL of one descriptor and what the runtime needs to bind it."""

    wgsl: str
    used_slots: tuple[int, ...]
    trap_tags: tuple[str, ...]
    # the dispatch's `elements_per_invocation` (`kernel-vectorize`): W > 1 when
    # the kernel was printed in a vector form (each invocation runs W consecutive
    # logical invocations; the dispatch's grid covers n / W invocations)
    elements_per_invocation: int = 1
    # the dispatch's `groups_per_workgroup` (`kernel-coarsen`): C > 1 when each
    # launched workgroup runs C consecutive logical workgroups
    groups_per_workgroup: int = 1


def wgsl_literal(value: int | float | bool, tname: str) -> str:
    """A WGSL literal of IR type `tname` with exactly `value`'s bits."""
    if tname == "i1":
        return "true" if value else "false"
    if packed.is_packed(tname):
        return packed.literal(int(value), tname)
    if int64.is_wide(tname):
        return int64.literal(int(value), tname)
    if tname in floats.REGISTER_TYPES:
        return floats.literal(value, tname)
    if semantics.ELEMENTS[tname].family == "vector":  # only zeros: there are no vector literals
        return f"{semantics.WGSL_TYPES[tname]}()"
    if tname == "ui32":
        return f"{int(value)}u"
    if tname == "si32":
        if int(value) == -(2**31):
            return "i32(-2147483648)"
        return f"{int(value)}i"
    as_f32 = np.float32(value)
    bits = int(as_f32.view(np.uint32))
    if (
        not np.isfinite(as_f32)
        or (as_f32 == 0 and bits != 0)
        or (as_f32 != 0 and abs(as_f32) < np.finfo(np.float32).tiny)
    ):
        return f"bitcast<f32>({bits:#010x}u)"
    return f"{float(as_f32)!r}f"


def zero_literal(tname: str) -> str:
    return wgsl_literal(False if tname == "i1" else 0, tname)


_IDENT = re.compile(r"[^A-Za-z0-9_]")


def _sanitize(name: str) -> str:
    clean = _IDENT.sub("_", name)
    return clean or "x"


@dataclass
class _Names:
    """Unique WGSL identifiers for SSA values, locals and bindings."""

    used: set[str] = field(default_factory=set)
    values: dict[tuple[SSAValue, int], str] = field(default_factory=dict)
    locals: dict[tuple[str, int], str] = field(default_factory=dict)
    counter: int = 0

    def fresh(self, base: str) -> str:
        name = base
        while name in self.used:
            self.counter += 1
            name = f"{base}_{self.counter}"
        self.used.add(name)
        return name

    def value(self, value: SSAValue, copy: int = 0) -> str:
        key = (value, copy)
        if key not in self.values:
            hint = value.name_hint
            self.values[key] = self.fresh("v_" + _sanitize(hint) if hint else "v")
        return self.values[key]

    def local(self, name: str, copy: int = 0) -> str:
        key = (name, copy)
        if key not in self.locals:
            self.locals[key] = self.fresh("l_" + _sanitize(name))
        return self.locals[key]


class _Printer:
    def __init__(self, descriptor: k.DescriptorOp):
        self.descriptor = descriptor
        dispatch = descriptor.dispatch()
        if dispatch is None:
            raise VyreDiagnostic([(descriptor, "descriptor has no 'kernel.dispatch'")])
        self.dispatch = dispatch
        # the entry point is a module-scope name too: no generated name may take it
        self.names = _Names(used={descriptor.entry})
        self.lines: list[str] = []
        self.depth = 1
        self.used_slots: set[int] = set()
        self.trap_tags: list[str] = []
        self.helpers: list[str] = []
        self.has_barrier = any(isinstance(op, k.BarrierOp) for op in descriptor.walk())
        # recorded by kernel-vectorize and kernel-coarsen (1: not recorded)
        self.width = dispatch.vector_width
        self.groups = dispatch.coarsening
        self.copy = 0
        # vec4 form: the vectors already loaded, by (slot, offset in vectors), of
        # the buffers the kernel never stores to (`stored_slots`)
        self.wide_vectors: dict[tuple[int, int], str] = {}
        self.stored_slots = descriptor.stored_slots()
        # vec4 form: the buffers read or written element-wise, declared as arrays
        # of vectors; any other (only its length taken, or not used) keeps its
        # scalar declaration, so that `arrayLength` counts its elements
        self.vector_slots = {
            op.slot_number for op in descriptor.walk() if op.has_trait(k.ElementAccess)
        }
        self.binding_names: dict[int, str] = {}
        for binding in descriptor.bindings():
            if binding.is_trap_sidecar:
                self.binding_names[binding.slot_number] = SIDECAR_VAR
            else:
                prefix = "b_" if binding.is_host else "w_"
                self.binding_names[binding.slot_number] = self.names.fresh(
                    prefix + _sanitize(binding.buffer_name)
                )

    # ------------------------------------------------------------------ output

    def emit(self, line: str) -> None:
        self.lines.append("  " * self.depth + line)

    def print(self) -> PrintedKernel:
        for op in self.descriptor.statements():
            if self.width > 1:
                self._vector_statement(op)
            elif self.groups > 1 and k.COARSENED in op.attributes:
                self._coarsened_body(op)
            else:
                self.statement(op)
        statements, self.lines = self.lines, []
        self._prologue()
        self._zero_workgroup_memory()
        body = self.lines + statements
        header = self._header()
        wgsl = "\n".join(header + body + ["}", ""])
        if floats.mentions_f16(wgsl):
            wgsl = f"{floats.F16_ENABLE}\n{wgsl}"
        return PrintedKernel(
            wgsl, tuple(sorted(self.used_slots)), tuple(self.trap_tags), self.width, self.groups
        )

    def _header(self) -> list[str]:
        d = self.dispatch
        logical = d.logical_static_grid
        grid = "runtime" if logical is None else list(logical)
        out = [
            _comment(f"// vyre kernel @{self.descriptor.sym_name.data} id {self.descriptor.id}"),
            _comment(
                f"// program workgroup {list(d.program_workgroup)}, kernel workgroup "
                f"{list(d.kernel_workgroup)}, grid {grid}, count [{', '.join('@' + n for n in d.count_names)}]"
            ),
        ]
        if self.width > 1:
            out.append(
                f"// vec4 form: invocation i runs logical invocations "
                f"{self.width}i .. {self.width}i+{self.width - 1}; launch grid {list(d.static_grid or ())}"
            )
        if self.groups > 1:
            out.append(
                f"// each workgroup runs {self.groups} logical workgroups; launch grid "
                f"{list(d.static_grid or ())}"
            )
        for binding in self.descriptor.bindings():
            if binding.slot_number in self.used_slots:
                out.append(self._declaration(binding))
        for helper in self.helpers:
            out += ["", helper]
        wx, wy, wz = d.kernel_workgroup
        out += [
            "",
            f"@compute @workgroup_size({wx}, {wy}, {wz})",
            f"fn {self.descriptor.entry}(@builtin(workgroup_id) vyre_wid: vec3<u32>, "
            "@builtin(local_invocation_id) vyre_lid: vec3<u32>, "
            f"@builtin(num_workgroups) vyre_nwg: vec3<u32>{self._subgroup_builtins()}) {{",
        ]
        return out

    def _declaration(self, binding: k.BindingOp) -> str:
        name = self.binding_names[binding.slot_number]
        element = (
            "atomic<u32>" if binding.is_atomic else semantics.WGSL_STORAGE_TYPES[binding.element]
        )
        if _packed_atomic(binding):
            element = "atomic<u32>"
        if _packed_bf16(binding):
            # two halves per word; a written buffer stores halves with atomics
            element = "u32" if binding.access == "read_only" else "atomic<u32>"
        if not binding.is_host:
            length = binding.static_count
            if packed.is_packed(binding.element):
                length = packed.words(binding.element, binding.static_count)
            if binding.element == "bf16":  # workgroup memory: one f32 per element
                element = "f32"
            return f"var<workgroup> {name}: array<{element}, {length}>;"
        access = "read" if binding.access == "read_only" else "read_write"
        if (
            self.width > 1
            and binding.slot_number in self.vector_slots
            and not binding.is_trap_sidecar
            and not binding.is_repetition
        ):
            element = vector_storage(binding.element, self.width)
        return (
            f"@group({binding.group_number}) @binding({binding.slot_number}) "
            f"var<storage, {access}> {name}: array<{element}>;"
        )

    # ------------------------------------------------------------------ subgroups

    def _subgroup_builtins(self) -> str:
        """The subgroup builtins of the entry point, when the kernel uses subgroup ops
        (they need the device's "subgroup" feature; see `uses_subgroups`)."""
        if not uses_subgroups(self.descriptor):
            return ""
        # the verifier keeps subgroup ops to one-dimensional workgroups, the only
        # ones naga offers subgroup_invocation_id for
        return f", {SUBGROUP_SIZE_BUILTIN}, @builtin(subgroup_invocation_id) vyre_sg_id: u32"

    def _subgroup_size(self, op: v.SubgroupSizeOp) -> None:
        self.let(op.result, "vyre_sg_size")

    def _subgroup_local_id(self, op: v.SubgroupLocalIdOp) -> None:
        self.let(op.result, "vyre_sg_id")

    def _subgroup_reduce(self, op: v.SubgroupReduceOp) -> None:
        builtin = semantics.SUBGROUP_REDUCE[op.kind.data][2]
        self.let(op.result, f"{builtin}({self.name(op.value)})")

    def _subgroup_shuffle(self, op: v.SubgroupShuffleOp | v.SubgroupBroadcastOp) -> None:
        # a broadcast is a shuffle whose lane is the same everywhere (WGSL's own
        # subgroupBroadcast wants a constant lane); a lane past the subgroup gives 0
        zero = wgsl_literal(0, v.type_name(op.result.type))
        lane = self.name(op.lane)
        shuffled = f"subgroupShuffle({self.name(op.value)}, {lane})"
        self.let(op.result, f"select({zero}, {shuffled}, {lane} < vyre_sg_size)")

    def _subgroup_ballot(self, op: v.SubgroupBallotOp) -> None:
        self.let(op.result, f"subgroupBallot({self.name(op.cond)}).x")

    # ------------------------------------------------------------------ ids

    def _prologue(self) -> None:
        d = self.dispatch
        wx, wy, wz = d.kernel_workgroup
        self.emit(
            "let vyre_group = vyre_wid.x + (vyre_wid.y + vyre_wid.z * vyre_nwg.y) * vyre_nwg.x;"
        )
        if not d.is_widened:
            self.emit(
                f"let vyre_local = vyre_lid.x + vyre_lid.y * {wx}u + vyre_lid.z * {wx * wy}u;"
            )
            self.emit(f"let vyre_invocation = vyre_group * {wx * wy * wz}u + vyre_local;")
            return
        self.emit(f"let vyre_invocation = vyre_group * {wx}u + vyre_lid.x;")
        self.emit(f"if (vyre_invocation >= {self._declared_total()}) {{")
        self.emit("  return;")
        self.emit("}")

    def _zero_workgroup_memory(self) -> None:
        """Workgroup memory starts zeroed (as in the interpreter). WGSL promises it,
        but not every driver does (lavapipe through wgpu keeps the previous
        workgroup's values), so the kernel clears it itself: each invocation a
        strided share, then a barrier. The prologue is uniform control flow."""
        shared = [
            b
            for b in self.descriptor.bindings()
            if not b.is_host
            and b.slot_number in self.used_slots
            and k.WRITTEN_FIRST not in b.attributes  # recorded by vyre-lower
        ]
        if not shared:
            return
        threads = math.prod(self.dispatch.kernel_workgroup)
        for binding in shared:
            name = self.binding_names[binding.slot_number]
            zero = zero_literal(binding.element if binding.element != "i1" else "ui32")
            if binding.element == "bf16":
                zero = "0.0f"
            count = binding.static_count
            store = f"{name}[vyre_z] = {zero};"
            if binding.is_atomic:
                store = f"atomicStore(&{name}[vyre_z], {zero});"
            if packed.is_packed(binding.element):
                count = packed.words(binding.element, count)
                store = f"atomicStore(&{name}[vyre_z], 0u);"
            self.emit(
                f"for (var vyre_z: u32 = vyre_local; vyre_z < {count}u; "
                f"vyre_z = vyre_z + {threads}u) {{"
            )
            self.emit(f"  {store}")
            self.emit("}")
        self.emit("workgroupBarrier();")

    def _declared_total(self) -> str:
        """WGSL for how many invocations the program's declared launch has."""
        d = self.dispatch
        if d.declared_total is not None:  # recorded by vyre-lower when the counts are static
            return f"{d.declared_total}u"
        counts = [self.descriptor.binding_named(n) for n in d.count_names]
        lengths = [self._length(b) for b in counts if b is not None]
        n = "1u"
        for length in lengths:
            n = f"max({n}, {length})"
        self.emit(f"let vyre_n = {n};")
        self.emit("let vyre_gy = (vyre_n + 65534u) / 65535u;")
        self.emit("let vyre_declared = ((vyre_n + vyre_gy - 1u) / vyre_gy) * vyre_gy;")
        return "vyre_declared"

    def _id(self, op: Operation) -> str:
        axis = op.axis_index
        component = "xyz"[axis]
        if self.width > 1:  # kernel-vectorize: only invocation_id x occurs
            return f"(vyre_invocation * {self.width}u + {self.copy}u)"
        if isinstance(op, k.NumWorkgroupsOp):
            # lowering keeps the grid of a kernel that reads it exactly as the
            # program's dispatch launches it (`fixes_launch`)
            return f"vyre_nwg.{component}"
        if self.dispatch.is_widened:
            if isinstance(op, k.LocalIdOp) or axis != 0:
                return "0u"
            return "vyre_invocation"
        if self.dispatch.is_explicit:
            # an explicit grid: workgroup ids span every axis
            if isinstance(op, k.LocalIdOp):
                return f"vyre_lid.{component}"
            if isinstance(op, k.WorkgroupIdOp):
                return f"vyre_wid.{component}"
            size = self.dispatch.kernel_workgroup[axis]
            return f"(vyre_wid.{component} * {size}u + vyre_lid.{component})"
        if isinstance(op, k.LocalIdOp):
            return f"vyre_lid.{component}"
        if isinstance(op, k.WorkgroupIdOp):
            return "vyre_group" if axis == 0 else "0u"
        wx = self.dispatch.kernel_workgroup[0]
        return f"(vyre_group * {wx}u + vyre_lid.x)" if axis == 0 else f"vyre_lid.{component}"

    # ------------------------------------------------------------------ helpers

    def name(self, value: SSAValue) -> str:
        return self.names.value(value, self.copy)

    def let(self, result: SSAValue, expression: str) -> None:
        self.emit(f"let {self.name(result)} = {expression};")

    def binding(self, op: Operation) -> k.BindingOp:
        binding = self.descriptor.binding_at(op.slot_number)
        if binding is None:
            raise VyreDiagnostic([(op, f"slot {op.slot_number} is not bound")])
        self.used_slots.add(binding.slot_number)
        return binding

    def _length(self, binding: k.BindingOp) -> str:
        if binding.static_count is not None and not binding.is_scratch:
            return f"{binding.static_count}u"
        self.used_slots.add(binding.slot_number)
        words = f"arrayLength(&{self.binding_names[binding.slot_number]})"
        if _packed_bf16(binding):
            return f"({words} * 2u)"
        if packed.is_packed(binding.element):
            return f"({words} * {packed.per_word(binding.element)}u)"
        return words

    def _helper(self, text: str) -> None:
        if text not in self.helpers:
            self.helpers.append(text)

    def _sidecar(self, what: str) -> None:
        """Bind the trap sidecar and print the loop-limit helper."""
        sidecar = next((b for b in self.descriptor.bindings() if b.is_trap_sidecar), None)
        if sidecar is None:
            raise VyreDiagnostic([(self.descriptor, f"{what} needs the trap sidecar binding")])
        self.used_slots.add(sidecar.slot_number)
        self._helper(LOOP_LIMIT_HELPER)

    def loop_exit_check(self, left_early: str, what: str) -> None:
        """After a loop: flag the run when `left_early` holds (the driver left it)."""
        self._sidecar(what)
        self.emit(f"if ({left_early}) {{")
        self.emit("  vyre_loop_left_early();")
        self.emit("}")

    def trap(self, address: str, tag: str) -> None:
        self._sidecar("a trap")
        self._helper(TRAP_HELPER)
        code = tag_code(self.trap_tags, tag)
        self.emit(f"vyre_record_trap({address}, {code}u, vyre_invocation);")
        if not self.has_barrier:
            self.emit("return;")

    def block(self, ops) -> None:
        self.depth += 1
        for op in ops:
            self.statement(op)
        self.depth -= 1

    # ------------------------------------------------------------------ vec4 form

    def _vector_statement(self, op: Operation) -> None:
        """A top-level op in vec4 form: one wide load or store for the four
        logical invocations, every other op once per copy."""
        if op.has_trait(k.LoadLike):
            self._vector_load(op)
        elif op.has_trait(k.StoreLike):
            self._vector_store(op)
        else:
            for copy in range(self.width):
                self.copy = copy
                self.statement(op)
            self.copy = 0

    def _vector_load(self, op: Operation) -> None:
        """Logical invocation 4g+k loads element 4g+k+c (`c`: the index's constant
        offset, mod 2^32). With c = 4q + r, those elements lie in the vectors
        g+q (lanes r..3) and g+q+1 (lanes 0..r-1), counted mod 2^30 as the u32
        element index wraps; a vector is in bounds exactly when its elements
        are (the count is a multiple of 4). A buffer the kernel never writes
        keeps its vectors, so each is loaded once however many loads use it."""
        binding = self.binding(op)
        tname = v.type_name(op.result.type)
        offset = k.invocation_offset(op.index)
        assert offset is not None, "kernel-vectorize accepts only constant offsets"
        quotient, remainder = divmod(offset, self.width)
        vectors = [self._wide_vector(binding, quotient, op)]
        if remainder:
            vectors.append(self._wide_vector(binding, quotient + 1, op))
        for copy in range(self.width):
            self.copy = copy
            lane = remainder + copy
            element = _vector_lane(
                tname, self.width, vectors[lane // self.width], lane % self.width
            )
            self.let(op.result, f"({element} != 0u)" if tname == "i1" else element)
        self.copy = 0

    def _wide_vector(self, binding: k.BindingOp, quotient: int, op: Operation) -> str:
        """The name of vector `vyre_invocation + quotient` (mod 2^30) of `binding`,
        or the zero vector when it is out of bounds; loaded here unless cached."""
        quotient %= (1 << 32) // self.width
        key = (binding.slot_number, quotient)
        cacheable = binding.slot_number not in self.stored_slots
        if cacheable and key in self.wide_vectors:
            return self.wide_vectors[key]
        vector = vector_storage(v.type_name(op.result.type), self.width)
        lanes = binding.static_count // self.width
        block = "vyre_invocation"
        if quotient:
            block = self.names.fresh("vyre_vector")
            wrap = (1 << 32) // self.width - 1
            self.emit(f"let {block} = (vyre_invocation + {quotient}u) & {wrap:#x}u;")
        wide = self.names.fresh("w_" + _sanitize(op.result.name_hint or "load"))
        ref = self._element_ref(binding, f"min({block}, {lanes - 1}u)")
        self.emit(f"let {wide} = select({vector}(), {ref}, {block} < {lanes}u);")
        if cacheable:
            self.wide_vectors[key] = wide
        return wide

    def _vector_store(self, op: Operation) -> None:
        binding = self.binding(op)
        tname = v.type_name(op.value.type)
        parts = []
        for copy in range(self.width):
            self.copy = copy
            value = self.name(op.value)
            parts.append(f"select(0u, 1u, {value})" if tname == "i1" else value)
        self.copy = 0
        vector = vector_storage(tname, self.width)
        if tname == "f16" and vector == "vec4<u32>":
            self._helper(F16_BITS_HELPER)
            self._helper(F16_PAIR_HELPER)
        wide = _vector_value(tname, vector, parts)
        lanes = binding.static_count // self.width
        ref = self._element_ref(binding, "vyre_invocation")
        self.emit(f"if (vyre_invocation < {lanes}u) {{")
        self.emit(f"  {ref} = {wide};")
        self.emit("}")

    # ------------------------------------------------------------------ statements

    def statement(self, op: Operation) -> None:
        handler = _STATEMENTS.get(type(op))
        if handler is not None:
            handler(self, op)
            return
        if op.has_trait(v.TableLike):
            self._table_op(op)
            return
        raise VyreDiagnostic([(op, f"the WGSL printer cannot print '{op.name}'")])

    def _table_op(self, op: Operation) -> None:
        sem = op.semantics()
        operand_type = v.type_name(op.operands[0].type)
        wgsl_type = semantics.WGSL_TYPES[operand_type]
        args = [self.name(x) for x in op.operands]
        if packed.is_packed(operand_type):
            condition = packed.trap_condition(sem, operand_type, args)
            expression = packed.expression(sem, operand_type, args)
        elif int64.is_wide(operand_type):
            wide = self._wide()
            condition = wide.trap_condition(sem, operand_type, args)
            expression = wide.expression(sem, operand_type, args)
        else:
            for helper in sem.helpers:
                self._helper(helper)
            condition = sem.wgsl_trap(wgsl_type, *args) if sem.wgsl_trap is not None else None
            expression = sem.wgsl(wgsl_type, *args)
        if condition:
            self.emit(f"if {condition} {{")
            self.depth += 1
            self.trap("0u", sem.trap_tag_for(operand_type))
            self.depth -= 1
            self.emit("}")
        info = semantics.ELEMENTS[operand_type]
        if info.family == "vector":
            self.let(op.results[0], _lane_by_lane(sem, info, args))
            return
        if operand_type in floats.REGISTER_TYPES:
            expression = floats.op_expression(sem.wgsl, sem.name, sem.kind, operand_type, args)
            self._float_helpers(expression)
        self.let(op.results[0], expression)

    def _float_helpers(self, expression: str) -> None:
        """The helper functions of the float types that `expression` calls."""
        for name, helper in floats.HELPERS.items():
            if f"{name}(" in expression:
                self._helper(helper)

    def _const(self, op: v.ConstOp) -> None:
        self.let(op.result, wgsl_literal(op.literal(), v.type_name(op.result.type)))

    def _select(self, op: v.SelectOp) -> None:
        ty = semantics.WGSL_TYPES[v.type_name(op.result.type)]
        self.let(
            op.result,
            semantics.wgsl_select(
                ty, self.name(op.cond), self.name(op.true_value), self.name(op.false_value)
            ),
        )

    def _fma(self, op: v.FmaOp) -> None:
        tname = v.type_name(op.result.type)
        args = (self.name(op.a), self.name(op.b), self.name(op.c))
        if tname in floats.REGISTER_TYPES:
            expression = floats.fma(tname, *args)
            self._float_helpers(expression)
            self.let(op.result, expression)
            return
        self.let(op.result, semantics.wgsl_fma("f32", *args))

    def _from_elements(self, op: v.FromElementsOp) -> None:
        ty = semantics.WGSL_TYPES[v.type_name(op.result.type)]
        self.let(op.result, f"{ty}({', '.join(self.name(e) for e in op.elements)})")

    def _extract(self, op: v.ExtractOp) -> None:
        self.let(op.result, f"{self.name(op.vector)}.{semantics.LANE_NAMES[op.lane_index]}")

    def _wide(self) -> int64.Emitter:
        """The 64-bit emitter, printing the helpers it calls (once each)."""

        def use(helper: str) -> None:
            for text in int64.helper_texts([helper]):
                self._helper(text)

        return int64.Emitter(use)

    def _cast(self, op: v.CastOp) -> None:
        source, target = op.source_name, op.target_name
        integers = (*semantics.PACKED_TYPES, *semantics.WIDE_INT_TYPES)
        if {source, target} & floats.REGISTER_TYPES.keys() and {source, target} & set(integers):
            raise VyreDiagnostic(
                [
                    (
                        op,
                        f"a cast from {source} to {target} is not supported by the wgpu backend "
                        "yet; cast through f32, si32 or ui32",
                    )
                ]
            )
        if int64.is_wide(source) or int64.is_wide(target):
            cast = self._wide().cast(self.name(op.input), source, target, _wrap_packed)
            self.let(op.result, cast)
            return
        if packed.is_packed(source) or packed.is_packed(target):
            self.let(op.result, packed.cast(self.name(op.input), source, target))
            return
        if {source, target} & floats.REGISTER_TYPES.keys():
            expression = floats.cast(
                self.name(op.input), source, target, semantics.wgsl_saturating_cast
            )
            self._float_helpers(expression)
            self.let(op.result, expression)
            return
        self.let(op.result, semantics.wgsl_cast(self.name(op.input), source, target))

    def _bitcast(self, op: v.BitcastOp) -> None:
        source, target = op.source_name, op.target_name
        if {source, target} & floats.REGISTER_TYPES.keys():
            self.let(op.result, floats.bitcast(self.name(op.input), source, target))
            return
        if int64.is_wide(source) and int64.is_wide(target):  # ui64/si64: the same words
            self.let(op.result, self.name(op.input))
            return
        if packed.is_packed(source) and packed.is_packed(target):  # ui8/si8, ui16/si16
            self.let(op.result, packed.cast(self.name(op.input), source, target))
            return
        self.let(op.result, semantics.wgsl_bitcast(self.name(op.input), source, target))

    def _id_statement(self, op: Operation) -> None:
        self.let(op.result, self._id(op))

    def _repetition(self, op: k.RepetitionOp) -> None:
        # one word, bound per repetition at an offset of the run's repetition buffer
        binding = self.binding(op)
        self.let(op.result, f"{self.binding_names[binding.slot_number]}[0]")

    def _buffer_length(self, op: k.BufferLengthOp) -> None:
        binding = self.binding(op)
        self.let(op.result, self._length(binding))

    def _element_ref(self, binding: k.BindingOp, index: str) -> str:
        return f"{self.binding_names[binding.slot_number]}[{index}]"

    def _in_bounds(self, binding: k.BindingOp, index: SSAValue) -> bool:
        """Whether `index` is provably below `binding`'s static element count, so
        its bounds check and clamp can be left out."""
        if binding.static_count is None or binding.is_scratch:
            return False
        most = largest_value(index, self.dispatch)
        return most is not None and most < binding.static_count

    def _load(self, op: Operation) -> None:
        binding = self.binding(op)
        tname = v.type_name(op.result.type)
        zero = zero_literal(tname)
        if binding.static_count == 0:
            self.let(op.result, zero)
            return
        index = self.name(op.index)
        if packed.is_packed(tname):
            length = self._length(binding)
            position = f"min({index}, {length} - 1u)"
            ref = self._element_ref(binding, packed.word_index(tname, position))
            word = f"atomicLoad(&{ref})" if _packed_atomic(binding) else ref
            element = packed.load(tname, word, position)
            self.let(op.result, f"select({zero}, {element}, {index} < {length})")
            return
        if _packed_bf16(binding):
            self.let(op.result, self._bf16_load(binding, index, self._length(binding), zero))
            return
        if self._in_bounds(binding, op.index):
            ref = self._element_ref(binding, index)
            element = f"atomicLoad(&{ref})" if binding.is_atomic else ref
            self.let(op.result, f"({element} != 0u)" if tname == "i1" else element)
            return
        length = self._length(binding)
        ref = self._element_ref(binding, f"min({index}, {length} - 1u)")
        element = f"atomicLoad(&{ref})" if binding.is_atomic else ref
        if tname == "i1":
            element = f"({element} != 0u)"
        self.let(op.result, f"select({zero}, {element}, {index} < {length})")

    def _bf16_load(self, binding: k.BindingOp, index: str, length: str, zero: str) -> str:
        clamped = f"min({index}, {length} - 1u)"
        word = self._element_ref(binding, floats.bf16_word_index(clamped))
        if binding.access != "read_only":
            word = f"atomicLoad(&{word})"
        return f"select({zero}, {floats.bf16_from_word(word, clamped)}, {index} < {length})"

    def _store(self, op: Operation) -> None:
        binding = self.binding(op)
        if binding.static_count == 0:
            self.emit("// store to an empty buffer: always out of bounds")
            return
        index = self.name(op.index)
        value = self.name(op.value)
        if v.type_name(op.value.type) == "i1":
            value = f"select(0u, 1u, {value})"
        tname = v.type_name(op.value.type)
        if _packed_bf16(binding):
            self._bf16_store(binding, index, value)
            return
        if packed.is_packed(tname):
            length = self._length(binding)
            position = self._guarded_position(binding, index, length)
            self._packed_store(binding, tname, index, position, value, length)
            return
        if self._in_bounds(binding, op.index):
            ref = self._element_ref(binding, index)
            self.emit(
                f"atomicStore(&{ref}, {value});" if binding.is_atomic else f"{ref} = {value};"
            )
            return
        length = self._length(binding)
        ref = self._element_ref(binding, self._guarded_position(binding, index, length))
        store = f"atomicStore(&{ref}, {value});" if binding.is_atomic else f"{ref} = {value};"
        self.emit(f"if ({index} < {length}) {{")
        self.emit(f"  {store}")
        self.emit("}")

    @staticmethod
    def _guarded_position(binding: k.BindingOp, index: str, length: str) -> str:
        """The index to write under an `if (index < length)` guard. Workgroup
        arrays have a fixed size: naga rejects a constant index past it even under
        the guard, so it is clamped there too (a no-op at run time)."""
        return index if binding.is_host else f"min({index}, {length} - 1u)"

    def _bf16_store(self, binding: k.BindingOp, index: str, value: str) -> None:
        """A store into a bf16 buffer (two elements per word), rounded to nearest even."""
        length = self._length(binding)
        word = self._element_ref(binding, floats.bf16_word_index(index))
        self.emit(f"if ({index} < {length}) {{")
        for line in floats.bf16_store(word, index, value):
            self.emit(f"  {line}")
        self.emit("}")

    def _packed_store(
        self, binding: k.BindingOp, tname: str, index: str, position: str, value: str, length: str
    ) -> None:
        """A store into a packed buffer: only this element's bits of its word change,
        by compare-exchange on the word (checked like every loop)."""
        ref = self._element_ref(binding, packed.word_index(tname, position))
        done = self.names.fresh("store_done")
        self.emit(f"if ({index} < {length}) {{")
        for line in packed.store(tname, ref, position, value, done):
            self.emit(f"  {line}")
        self.depth += 1
        self.loop_exit_check(f"!{done}", "a packed store")
        self.depth -= 1
        self.emit("}")

    def _atomic(self, op: k.AtomicOp) -> None:
        binding = self.binding(op)
        old = self.names.fresh(
            "a_" + (_sanitize(op.result.name_hint) if op.result.name_hint else "old")
        )
        if op.kind.data in UNGUARDED_ATOMICS and binding.static_count != 0:
            if self._in_bounds(binding, op.index):
                self._unguarded_atomic(op, binding)
                return
            if not op.result.uses:
                self._guarded_atomic_statement(op, binding)
                return
        self.emit(f"var {old}: u32 = 0u;")
        if binding.static_count != 0:
            index = self.name(op.index)
            length = self._length(binding)
            ref = f"&{self._element_ref(binding, self._guarded_position(binding, index, length))}"
            value = self.name(op.value)
            self.emit(f"if ({index} < {length}) {{")
            if op.kind.data == "compare_exchange_weak":
                # one weak attempt: it may fail spuriously, as the op allows
                expected = self.name(op.expected)
                self.emit(
                    f"  {old} = atomicCompareExchangeWeak({ref}, {expected}, {value}).old_value;"
                )
            elif op.kind.data == "fetch_nand":
                self._fetch_nand(ref, value, old)
            elif op.kind.data == "compare_exchange":
                expected = self.name(op.expected)
                done = self.names.fresh("cas_done")
                self.emit(f"  var {done} = false;")
                self.emit("  loop {")
                self.emit(f"    let r = atomicCompareExchangeWeak({ref}, {expected}, {value});")
                self.emit(f"    if (r.exchanged || r.old_value != {expected}) {{")
                self.emit(f"      {old} = r.old_value;")
                self.emit(f"      {done} = true;")
                self.emit("      break;")
                self.emit("    }")
                self.emit("  }")
                self.depth += 1
                self.loop_exit_check(f"!{done}", "a compare_exchange loop")
                self.depth -= 1
            else:
                builtin = semantics.ATOMIC_COMBINE[op.kind.data][1]
                self.emit(f"  {old} = {builtin}({ref}, {value});")
            self.emit("}")
        self.let(op.result, old)

    def _unguarded_atomic(self, op: k.AtomicOp, binding: k.BindingOp) -> None:
        """An atomic read-modify-write builtin whose index is provably in bounds:
        one call, without the guard."""
        builtin = semantics.ATOMIC_COMBINE[op.kind.data][1]
        call = (
            f"{builtin}(&{self._element_ref(binding, self.name(op.index))}, {self.name(op.value)})"
        )
        if op.result.uses:
            self.let(op.result, call)
        else:
            self.emit(f"{call};")

    def _guarded_atomic_statement(self, op: k.AtomicOp, binding: k.BindingOp) -> None:
        """An atomic builtin whose old value is unused, under its bounds check."""
        builtin = semantics.ATOMIC_COMBINE[op.kind.data][1]
        index = self.name(op.index)
        length = self._length(binding)
        ref = self._element_ref(binding, self._guarded_position(binding, index, length))
        self.emit(f"if ({index} < {length}) {{")
        self.emit(f"  {builtin}(&{ref}, {self.name(op.value)});")
        self.emit("}")

    def _fetch_nand(self, ref: str, value: str, old: str) -> None:
        """`~(old & v)`: WGSL has no atomicNand, so a compare-exchange loop from the
        current value until the exchange succeeds; checked like every loop."""
        done = self.names.fresh("nand_done")
        self.emit(f"  var {done} = false;")
        self.emit(f"  var {old}_seen = atomicLoad({ref});")
        self.emit("  loop {")
        self.emit(
            f"    let r = atomicCompareExchangeWeak({ref}, {old}_seen, ~({old}_seen & {value}));"
        )
        self.emit("    if (r.exchanged) {")
        self.emit(f"      {old} = r.old_value;")
        self.emit(f"      {done} = true;")
        self.emit("      break;")
        self.emit("    }")
        self.emit(f"    {old}_seen = r.old_value;")
        self.emit("  }")
        self.depth += 1
        self.loop_exit_check(f"!{done}", "a fetch_nand loop")
        self.depth -= 1

    def _local(self, op: k.LocalOp) -> None:
        ty = semantics.WGSL_TYPES[v.type_name(op.value.type)]
        self.emit(
            f"var {self.names.local(op.local_name, self.copy)}: {ty} = {self.name(op.value)};"
        )

    def _local_store(self, op: k.LocalStoreOp) -> None:
        self.emit(f"{self.names.local(op.local_name, self.copy)} = {self.name(op.value)};")

    def _local_load(self, op: k.LocalLoadOp) -> None:
        self.let(op.result, self.names.local(op.local_name, self.copy))

    def _if(self, op: k.IfOp) -> None:
        self.emit(f"if ({self.name(op.cond)}) {{")
        self.block(op.then_region.block.ops)
        if op.has_else:
            self.emit("} else {")
            self.block(op.else_region.block.ops)
        self.emit("}")

    def unrolled_trips(self, op: k.ForOp) -> range | None:
        """The induction values of a loop marked `unroll` (by vyre-lower; its
        bounds are constants, `kernel-verify` checks), else None."""
        if k.UNROLL not in op.attributes:
            return None
        bounds = [x.owner for x in (op.lower, op.upper)]
        if not all(isinstance(b, v.ConstOp) for b in bounds):
            raise VyreDiagnostic([(op, "an 'unroll' loop needs constant ui32 bounds")])
        lower, upper = (int(b.literal()) for b in bounds)  # type: ignore[union-attr]
        return range(lower, upper)

    def _for(self, op: k.ForOp) -> None:
        trips = self.unrolled_trips(op)
        if trips is not None:
            self._unrolled_for(op, trips)
            return
        counter = self.names.fresh("i_" + (_sanitize(op.induction.name_hint or "k")))
        lo, hi = self.name(op.lower), self.name(op.upper)
        # the counter outlives the loop: a loop only ends (without `return`)
        # when counter >= hi, so counter < hi after it means the driver left it
        self.emit(f"var {counter}: u32 = {lo};")
        self.emit(f"for (; {counter} < {hi}; {counter} = {counter} + 1u) {{")
        self.depth += 1
        self.let(op.induction, counter)
        self.depth -= 1
        self.block(op.body.block.ops)
        self.emit("}")
        self.loop_exit_check(f"{counter} < {hi}", "a loop")

    def _unrolled_for(self, op: k.ForOp, trips: range) -> None:
        """The loop as `len(trips)` scopes in a row, each binding the induction
        value to its constant: every iteration's loads can be in flight at once,
        and no counter is left for a driver to stop early."""
        self.emit(f"// for {trips.start} to {trips.stop}, unrolled")
        for value in trips:
            self.emit("{")
            self.depth += 1
            self.let(op.induction, f"{value}u")
            self.depth -= 1
            self.block(op.body.block.ops)
            self.emit("}")

    def _coarsened_body(self, op: k.RegionOp) -> None:
        """The program's own statements (between the zeroing and the flush of its
        workgroup copies), once for each of this workgroup's logical workgroups;
        the ids inside see the logical workgroup."""
        logical_grid = self.dispatch.logical_static_grid
        assert logical_grid is not None
        groups = math.prod(logical_grid)
        threads = math.prod(self.dispatch.kernel_workgroup)
        self.emit(
            f'// region "{_comment(op.generator.data)}", for {self.groups} logical workgroups'
        )
        self.emit(f"let vyre_first_group = vyre_group * {self.groups}u;")
        self.emit(f"for (var vyre_c: u32 = 0u; vyre_c < {self.groups}u; vyre_c = vyre_c + 1u) {{")
        self.depth += 1
        self.emit("let vyre_group = vyre_first_group + vyre_c;")
        self.emit(f"if (vyre_group >= {groups}u) {{")
        self.emit("  break;")
        self.emit("}")
        self.emit(f"let vyre_invocation = vyre_group * {threads}u + vyre_local;")
        self.depth -= 1
        self.block(op.body.block.ops)
        self.emit("}")

    def _scope(self, op: k.BlockOp | k.RegionOp) -> None:
        if isinstance(op, k.RegionOp):
            self.emit(f'// region "{_comment(op.generator.data)}"')
        self.emit("{")
        self.block(op.body.block.ops)
        self.emit("}")

    def _barrier(self, op: k.BarrierOp) -> None:
        # vyre-lower records `workgroup_only` where no storage element is shared
        # across the barrier; an unmarked barrier orders storage memory too
        if k.WORKGROUP_ONLY not in op.attributes:
            self.emit("storageBarrier();")
        self.emit("workgroupBarrier();")

    def _return(self, op: k.ReturnOp) -> None:
        self.emit("return;")

    def _trap(self, op: k.TrapOp) -> None:
        self.trap(self.name(op.address), op.tag.data)


def _comment(text: str) -> str:
    r"""`text` safe inside a WGSL `//` comment: every character that is not
    printable ASCII (line breaks such as U+2028 and U+0085 among them, which end
    a WGSL comment) is written as `\u{XXXX}`."""
    return "".join(ch if " " <= ch <= "~" else f"\\u{{{ord(ch):04x}}}" for ch in text)


_STATEMENTS: dict[type[Operation], Callable[[_Printer, Operation], None]] = {
    v.ConstOp: _Printer._const,
    v.SelectOp: _Printer._select,
    v.FmaOp: _Printer._fma,
    v.FromElementsOp: _Printer._from_elements,
    v.ExtractOp: _Printer._extract,
    v.CastOp: _Printer._cast,
    v.BitcastOp: _Printer._bitcast,
    v.SubgroupSizeOp: _Printer._subgroup_size,
    v.SubgroupLocalIdOp: _Printer._subgroup_local_id,
    v.SubgroupReduceOp: _Printer._subgroup_reduce,
    v.SubgroupShuffleOp: _Printer._subgroup_shuffle,
    v.SubgroupBroadcastOp: _Printer._subgroup_shuffle,
    v.SubgroupBallotOp: _Printer._subgroup_ballot,
    k.InvocationIdOp: _Printer._id_statement,
    k.WorkgroupIdOp: _Printer._id_statement,
    k.LocalIdOp: _Printer._id_statement,
    k.NumWorkgroupsOp: _Printer._id_statement,
    k.BufferLengthOp: _Printer._buffer_length,
    k.RepetitionOp: _Printer._repetition,
    k.LoadGlobalOp: _Printer._load,
    k.LoadConstantOp: _Printer._load,
    k.LoadUniformOp: _Printer._load,
    k.LoadSharedOp: _Printer._load,
    k.StoreGlobalOp: _Printer._store,
    k.StoreSharedOp: _Printer._store,
    k.AtomicOp: _Printer._atomic,
    k.LocalOp: _Printer._local,
    k.LocalStoreOp: _Printer._local_store,
    k.LocalLoadOp: _Printer._local_load,
    k.IfOp: _Printer._if,
    k.ForOp: _Printer._for,
    k.BlockOp: _Printer._scope,
    k.RegionOp: _Printer._scope,
    k.BarrierOp: _Printer._barrier,
    k.ReturnOp: _Printer._return,
    k.TrapOp: _Printer._trap,
}


#: lanes of WGSL's widest vector (`vec4`)
VECTOR_WIDTH = 4

#: the entry-point parameter a kernel that uses subgroup ops has (and no other
#: kernel): how the runtime tells that a WGSL module needs the "subgroup" feature.
#: WGSL's `enable subgroups;` is not printed: the WGSL compiler of wgpu 0.32 (Naga)
#: rejects it as not yet implemented, and accepts the builtins once the device
#: has the feature.
SUBGROUP_SIZE_BUILTIN = "@builtin(subgroup_size) vyre_sg_size: u32"


def _wrap_packed(tname: str, expression: str) -> str:
    """A 32-bit register value wrapped to `tname` when it is an 8/16-bit type."""
    return packed.normalize(tname, expression) if packed.is_packed(tname) else expression


def _packed_atomic(binding: k.BindingOp) -> bool:
    """Whether a binding is an array of `atomic<u32>` words holding packed 8/16-bit
    values: every writable one (stores are compare-exchanges on the word)."""
    return packed.is_packed(binding.element) and binding.access != "read_only"


def uses_subgroups(descriptor: k.DescriptorOp) -> bool:
    """Whether the kernel uses subgroup ops (and so needs the "subgroup" feature)."""
    return any(isinstance(op, v.SUBGROUP_OPS) for op in descriptor.walk())


def vector_storage(tname: str, width: int) -> str | None:
    """The WGSL storage type of `width` consecutive elements of `tname` in a
    vector form, or None when that form does not handle the type at that width:
    `vec4<T>` for four 32-bit or f16 values, whole `u32` words for 8/16-bit
    integers (one, two or four words) and for eight f16 values (four words; WGSL
    compiled by wgpu 0.32 rejects bitcasts between `u32` and `vec2<f16>`, so the
    halves are read with `unpack2x16float` and written with `F16_PAIR_HELPER`,
    both exact)."""
    nbytes = semantics.ELEMENTS[tname].storage_bytes * width
    if packed.is_packed(tname) or (tname == "f16" and width == 2 * VECTOR_WIDTH):
        return {4: "u32", 8: "vec2<u32>", 16: "vec4<u32>"}.get(nbytes)
    if width == VECTOR_WIDTH and nbytes in (8, 16) and (tname == "f16" or nbytes == 16):
        return f"vec{VECTOR_WIDTH}<{semantics.WGSL_STORAGE_TYPES[tname]}>"
    return None


def _vector_lane(tname: str, width: int, wide: str, lane: int) -> str:
    """Element `lane` of the `width` consecutive elements that `wide` holds."""
    if tname == "f16" and width == 2 * VECTOR_WIDTH:  # two halves per word, exact
        return f"f16(unpack2x16float({wide}[{lane // 2}]).{'xy'[lane % 2]})"
    if not packed.is_packed(tname):
        return f"{wide}[{lane}]"
    per_word = packed.per_word(tname)
    word = wide if width == per_word else f"{wide}[{lane // per_word}]"
    return packed.load(tname, word, f"{lane % per_word}u")


#: The binary16 bits of an f16 value, exactly (through its f32 bits: every f16
#: value is an f32 value), infinities and NaNs included; WGSL's `pack2x16float`
#: leaves infinities indeterminate, and naga rejects `bitcast<u32>(vec2<f16>)`.
F16_BITS_HELPER = """fn vyre_f16_bits(h: f16) -> u32 {
  let b = bitcast<u32>(f32(h));
  let sign = (b >> 16u) & 0x8000u;
  let e = (b >> 23u) & 0xffu;
  let m = b & 0x7fffffu;
  if (e == 0xffu) {
    return sign | 0x7c00u | select(0u, 0x200u | (m >> 13u), m != 0u);
  }
  if (e < 103u) {
    return sign;
  }
  if (e < 113u) {
    return sign | ((m | 0x800000u) >> (126u - e));
  }
  return sign | ((e - 112u) << 10u) | (m >> 13u);
}"""

#: Two f16 values as one `u32` word (the first in the low half): `pack2x16float`,
#: exact for every finite f16 value, unless either is an infinity or a NaN (an
#: all-ones f32 exponent), which `vyre_f16_bits` converts. Data without
#: infinities and NaNs takes the first branch throughout, which costs a few
#: instructions where `vyre_f16_bits` on every half would cost about thirty.
F16_PAIR_HELPER = """fn vyre_f16_pair(a: f16, b: f16) -> u32 {
  let v = vec2<f32>(f32(a), f32(b));
  let e = (bitcast<vec2<u32>>(v) >> vec2<u32>(23u)) & vec2<u32>(0xffu);
  if (all(e != vec2<u32>(0xffu))) {
    return pack2x16float(v);
  }
  return vyre_f16_bits(a) | (vyre_f16_bits(b) << 16u);
}"""


def _vector_value(tname: str, vector: str, parts: list[str]) -> str:
    """The WGSL value of type `vector` holding the consecutive elements `parts`."""
    if tname == "f16" and vector == "vec4<u32>":  # two halves per word
        words = [f"vyre_f16_pair({a}, {b})" for a, b in zip(parts[::2], parts[1::2], strict=True)]
        return f"{vector}({', '.join(words)})"
    if packed.is_packed(tname):  # whole words: no other invocation shares them
        words = packed.pack_words(tname, parts)
        return words[0] if len(words) == 1 else f"{vector}({', '.join(words)})"
    return f"{vector}({', '.join(parts)})"


def _lane_by_lane(sem: semantics.OpSemantics, info: semantics.ElementType, args) -> str:
    """A table op on vectors: the lane type's WGSL on each lane; `eq` holds when
    every lane is equal, `ne` when any differs."""
    lane_type = semantics.WGSL_TYPES[info.lane]
    lanes = [
        sem.wgsl(lane_type, *[f"{a}.{semantics.LANE_NAMES[k]}" for a in args])
        for k in range(info.lanes)
    ]
    if sem.kind == "compare":
        return "(" + (" && " if sem.name == "eq" else " || ").join(lanes) + ")"
    return f"{info.wgsl}({', '.join(lanes)})"


def _packed_bf16(binding: k.BindingOp) -> bool:
    """A host bf16 buffer: two 16-bit halves per u32 word."""
    return binding.is_host and binding.element == "bf16"


def _unsupported_type(op: Operation) -> str | None:
    """Why the WGSL backend cannot lower an element type that `op` uses, or None."""
    types = [r.type for r in op.results] + [o.type for o in op.operands]
    if isinstance(op, k.BindingOp):
        types.append(op.element_type)
    for ty in types:
        tname = v.type_name(ty)
        if tname is not None and (why := semantics.wgsl_unsupported(tname)) is not None:
            return why
    return None


def check_types(descriptor: k.DescriptorOp) -> None:
    """Raise a located error on the first op whose element type the WGSL backend
    cannot lower."""
    for op in descriptor.walk():
        if (why := _unsupported_type(op)) is not None:
            raise VyreDiagnostic([(op, why)])


def print_descriptor(descriptor: k.DescriptorOp, max_bytes: int = MAX_WGSL_BYTES) -> PrintedKernel:
    """The WGSL module of one descriptor."""
    check_types(descriptor)
    printed = _Printer(descriptor).print()
    size = len(printed.wgsl.encode())
    if size > max_bytes:
        raise WgslModuleTooLarge(
            f"the WGSL of kernel @{descriptor.sym_name.data} is {size} bytes, over the "
            f"{max_bytes}-byte cap. Fix: partition the program or the fusion group into "
            "several kernels (fuse fewer programs, or split the program)"
        )
    return printed
