"""Structure of the `vyre` dialect: programs and buffer declarations."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

import numpy as np
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    UnitAttr,
    i32,
    i64,
)
from xdsl.ir import Attribute, Operation, Region, TypeAttribute
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    opt_prop_def,
    prop_def,
    region_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsolatedFromAbove, NoTerminator, SymbolOpInterface
from xdsl.utils.exceptions import VerifyException

from vyre_xdsl.dialects.syntax import (
    AXES,
    I32_MAX,
    count_problem,
    parse_int_in,
    parse_int_triple_in,
    parse_shaped_type,
    print_shaped_type,
)
from vyre_xdsl.dialects.verify import body_errors, raise_body_errors
from vyre_xdsl.dialects.vyre.common import (
    ACCESS_MODES,
    ELEMENT_TYPES,
    MAX_BINDING,
    MAX_GRID_PER_AXIS,
    MAX_INVOCATIONS,
    MAX_WORKGROUP,
    DeclaresBuffer,
    _as_region,
    _parse_body,
    _print_attrs,
    _print_body,
    _require_element_type,
    indexed_lets,
    type_name,
)
from vyre_xdsl.dialects.vyre.ids import NumWorkgroupsOp

#: the ops whose regions are scopes
SCOPE_OPS = ("vyre.if", "vyre.loop", "vyre.block", "vyre.region")

#: the discardable attribute that marks a per-invocation scratch buffer (grid_sync spills)
SCRATCH_ATTR = "vyre.scratch"

#: program attributes that record dispatch facts (set by `vyre-split-grid-sync`
#: and `vyre-privatize-atomics`, read by `vyre-lower`): they name and size the
#: dispatch, they are not part of the code it runs (the descriptor id leaves them out)
SOURCE_ATTR = "source"
PART_ATTR = "part"
COUNT_BUFFERS_ATTR = "count_buffers"
ACTIVE_WORKGROUPS_ATTR = "active_workgroups"
DISPATCH_FACT_ATTRS = (SOURCE_ATTR, PART_ATTR, COUNT_BUFFERS_ATTR, ACTIVE_WORKGROUPS_ATTR)


#: `{` then what starts a statement (`%r =`, `vyre.op ...`, `"generic.op"(`, or `}`),
#: not an attribute entry (`name`, `name = ...`)
_BODY_START = re.compile(
    r'\{(?:\s|//[^\n]*)*(?:%|\}|"[^"\n]*"\s*\(|[A-Za-z_][\w$.]*\.[\w$.]*\s+[^\s=,}])'
)


def _body_follows(parser: Parser) -> bool:
    """Whether the next token opens the program body (rather than an attribute dict)."""
    return _BODY_START.match(parser.lexer.input.content, parser.pos) is not None


def _is_vyre_statement(op: Operation) -> bool:
    """Whether `op` may appear inside a program: any vyre op but a program."""
    from vyre_xdsl.dialects.vyre.calls import FuncOp, YieldOp

    return op.dialect_name() == "vyre" and not isinstance(op, ProgramOp | FuncOp | YieldOp)


@irdl_op_definition
class ProgramOp(IRDLOperation):
    """One compute program: its body runs once per invocation.

    Buffer declarations come first, then statements. The optional attribute
    dictionary after the name carries flags such as `non_composable`, and
    `indirect = @grid`: the program launches `grid[0] x grid[1] x grid[2]`
    workgroups, read from that ui32 buffer when the program starts (after the
    programs before it ran), instead of a grid derived from buffer lengths;
    `indirect_offset = B` reads the three words from byte `B` of the buffer
    (a multiple of 4; upstream's `count_offset`).

    A program split at its `grid_sync` barriers (`vyre-split-grid-sync`) becomes
    consecutive parts `@p_part0`, `@p_part1`, ... that record the dispatch they
    come from: `source = "p"`, `part = K`, and `count_buffers = [@a, ...]`, the
    buffers whose element counts size the whole program's dispatch (every part
    launches the grid of the whole program, cut to its active workgroups).
    `active_workgroups = G` (set by `vyre-privatize-atomics`) records that only
    the first G workgroups of the dispatch can have an effect.

    `grid [GX, GY, GZ]` after the workgroup size launches exactly GX x GY x GZ
    workgroups (each axis 1 ... 65535), whatever the buffer lengths; the ids
    span it on every axis (`invocation_id a = workgroup_id a x workgroup_size a
    + local_id a`). It excludes `indirect`.

    ```mlir
    vyre.program @tile workgroup_size [16, 16, 1] grid [4, 2, 1] {
      vyre.buffer @out binding 0 write_only : ui32[2048]
      %x = vyre.invocation_id x
      %y = vyre.invocation_id y
      %w = vyre.const 64 : ui32
      %row = vyre.mul %y, %w : ui32
      %i = vyre.add %row, %x : ui32
      vyre.store @out[%i] = %i : ui32
    }
    ```

    ```mlir
    vyre.program @consume {indirect = @grid} workgroup_size [64, 1, 1] {
      vyre.buffer @grid binding 2 read_only : ui32[3]
      vyre.buffer @out binding 1 read_write : ui32[?]
      %i = vyre.invocation_id x
      vyre.store @out[%i] = %i : ui32
    }
    ```

    ```mlir
    vyre.program @second {indirect = @grid, indirect_offset = 12} workgroup_size [64, 1, 1] {
      vyre.buffer @grid binding 2 read_only : ui32[6]
      vyre.buffer @out binding 1 read_write : ui32[?]
      %i = vyre.invocation_id x
      vyre.store @out[%i] = %i : ui32
    }
    ```

    ```mlir
    vyre.program @double workgroup_size [64, 1, 1] {
      vyre.buffer @x binding 0 read_write : ui32[?]
      %i = vyre.invocation_id x
      %v = vyre.load @x[%i] : ui32
      %d = vyre.add %v, %v : ui32
      vyre.store @x[%i] = %d : ui32
    }
    ```
    """

    name = "vyre.program"

    sym_name = prop_def(StringAttr)
    workgroup_size = prop_def(DenseArrayBase)
    grid = opt_prop_def(DenseArrayBase)
    body = region_def("single_block")

    traits = traits_def(IsolatedFromAbove(), NoTerminator(), SymbolOpInterface())

    def __init__(
        self,
        name: str,
        workgroup_size: Sequence[int],
        body: Region | Sequence[Operation] | None = None,
        attributes: dict[str, Attribute] | None = None,
        grid: Sequence[int] | None = None,
    ):
        properties: dict[str, Attribute] = {
            "sym_name": StringAttr(name),
            "workgroup_size": DenseArrayBase.from_list(i32, list(workgroup_size)),
        }
        if grid is not None:
            properties["grid"] = DenseArrayBase.from_list(i32, list(grid))
        super().__init__(
            properties=properties,
            regions=[_as_region(body)],
            attributes=attributes or {},
        )

    @property
    def explicit_grid(self) -> tuple[int, int, int] | None:
        """The workgroups per axis of `grid [GX, GY, GZ]`, or None (a derived or
        indirect grid)."""
        if self.grid is None:
            return None
        x, y, z = self.grid.get_values()
        return int(x), int(y), int(z)

    @property
    def workgroup(self) -> tuple[int, int, int]:
        x, y, z = self.workgroup_size.get_values()
        return int(x), int(y), int(z)

    @property
    def fixed_launch(self) -> bool:
        """Whether the program must launch exactly its own grid: it has an
        explicit one, or reads `vyre.num_workgroups` (fusion keeps it apart)."""
        if self.explicit_grid is not None:
            return True
        return any(isinstance(op, NumWorkgroupsOp) for op in self.walk())

    @property
    def non_composable(self) -> bool:
        return "non_composable" in self.attributes

    @property
    def indirect_buffer(self) -> str | None:
        """The buffer whose words 0..2 are the grid (`{indirect = @grid}`), or None."""
        attr = self.attributes.get("indirect")
        return attr.root_reference.data if isinstance(attr, SymbolRefAttr) else None

    @property
    def indirect_offset(self) -> int:
        """The byte offset of the indirect grid in its buffer (`indirect_offset = B`), 0 by default."""
        attr = self.attributes.get("indirect_offset")
        return attr.value.data if isinstance(attr, IntegerAttr) else 0

    @property
    def source_name(self) -> str:
        """The program this dispatch comes from (`source = "p"`), else its own name."""
        attr = self.attributes.get(SOURCE_ATTR)
        return attr.data if isinstance(attr, StringAttr) else self.sym_name.data

    @property
    def part_index(self) -> int | None:
        """Which part of a program split at `grid_sync` this is (`part = K`), or None."""
        attr = self.attributes.get(PART_ATTR)
        return attr.value.data if isinstance(attr, IntegerAttr) else None

    @property
    def recorded_count_buffers(self) -> list[str] | None:
        """The buffers recorded to size the dispatch (`count_buffers = [@a]`), or None."""
        attr = self.attributes.get(COUNT_BUFFERS_ATTR)
        if not isinstance(attr, ArrayAttr):
            return None
        return [a.root_reference.data for a in attr.data if isinstance(a, SymbolRefAttr)]

    @property
    def recorded_active_workgroups(self) -> int | None:
        """The leading workgroups recorded to hold every effect (`active_workgroups = G`)."""
        attr = self.attributes.get(ACTIVE_WORKGROUPS_ATTR)
        return attr.value.data if isinstance(attr, IntegerAttr) else None

    def buffers(self) -> Iterator[BufferOp]:
        """The buffer declarations, in order."""
        for op in self.body.block.ops:
            if isinstance(op, BufferOp):
                yield op

    def buffer(self, name: str) -> BufferOp | None:
        for buffer in self.buffers():
            if buffer.sym_name.data == name:
                return buffer
        return None

    def statements(self) -> Iterator[Operation]:
        for op in self.body.block.ops:
            if not isinstance(op, BufferOp):
                yield op

    @classmethod
    def parse(cls, parser: Parser) -> ProgramOp:
        name = parser.parse_symbol_name()
        if _body_follows(parser):
            parser.raise_error(
                f"expected 'workgroup_size [X, Y, Z]' after @{name.data}, "
                f"e.g. 'vyre.program @{name.data} workgroup_size [64, 1, 1] {{ ... }}'"
            )
        attributes = parser.parse_optional_attr_dict()
        parser.parse_keyword(
            "workgroup_size", " after the program name (e.g. workgroup_size [64, 1, 1])"
        )
        sizes = parse_int_triple_in(
            parser,
            "workgroup_size",
            -I32_MAX - 1,
            I32_MAX,
            f"the limits are {list(MAX_WORKGROUP)} per axis and {MAX_INVOCATIONS} invocations",
        )
        grid = None
        if parser.parse_optional_keyword("grid") is not None:
            grid = parse_int_triple_in(
                parser,
                "grid",
                -I32_MAX - 1,
                I32_MAX,
                f"each axis launches 1 ... {MAX_GRID_PER_AXIS} workgroups",
            )
        body = _parse_body(parser)
        op = cls(name.data, sizes, body, grid=grid)
        op.attributes.update(attributes)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        _print_attrs(printer, self)
        printer.print_string(" workgroup_size [")
        printer.print_string(", ".join(str(v) for v in self.workgroup_size.get_values()))
        printer.print_string("]")
        if self.explicit_grid is not None:
            printer.print_string(f" grid [{', '.join(str(g) for g in self.explicit_grid)}]")
        _print_body(printer, self.body)

    def verify(self, verify_nested_ops: bool = True) -> None:
        from vyre_xdsl.dialects.vyre.control import barriers_after_divergent_returns

        # whole-body checks first: the ops' own verifiers follow operand
        # definitions, which is only safe once every use is dominated
        with indexed_lets():  # verifying changes nothing
            raise_body_errors(
                body_errors(self, _is_vyre_statement, SCOPE_OPS, "a 'vyre.program'")
                or barriers_after_divergent_returns(self)
            )
            super().verify(verify_nested_ops)

    def verify_(self) -> None:
        sizes = self.workgroup_size.get_values()
        if len(sizes) != 3:
            raise VerifyException("workgroup_size must have exactly 3 axes")
        for axis, (size, limit) in enumerate(zip(sizes, MAX_WORKGROUP)):
            if size < 1:
                raise VerifyException(
                    f"workgroup_size axis {AXES[axis]} is {size}; every axis must be >= 1"
                )
            if size > limit:
                raise VerifyException(
                    f"workgroup_size axis {AXES[axis]} is {size}; the limit is {limit}"
                )
        total = int(np.prod(sizes))
        if total > MAX_INVOCATIONS:
            raise VerifyException(
                f"workgroup_size {list(sizes)} has {total} invocations; the limit is {MAX_INVOCATIONS}"
            )
        self._verify_indirect()
        self._verify_grid()
        self._verify_dispatch_facts()
        seen: set[str] = set()
        for buffer in self.buffers():
            if buffer.sym_name.data in seen:
                raise VerifyException(f"buffer @{buffer.sym_name.data} is declared twice")
            seen.add(buffer.sym_name.data)
        seen_statement = False
        for op in self.body.block.ops:
            if not isinstance(op, BufferOp):
                seen_statement = True
            elif seen_statement:
                raise VerifyException(
                    f"buffer @{op.sym_name.data} is declared after a statement; "
                    "declarations come first"
                )

    def _verify_dispatch_facts(self) -> None:
        """`source`, `part`, `count_buffers`, `active_workgroups` (see the class
        docstring), and no scratch buffer under an indirect grid."""
        attrs = self.attributes
        source = attrs.get(SOURCE_ATTR)
        if source is not None and not (isinstance(source, StringAttr) and source.data):
            raise VerifyException(
                f"'source' must name the program the dispatch comes from, e.g. "
                f'source = "{self.sym_name.data}"'
            )
        part = attrs.get(PART_ATTR)
        if part is not None:
            if not isinstance(part, IntegerAttr) or part.value.data < 0:
                raise VerifyException(
                    "'part' must be a non-negative integer (the index of the part), e.g. part = 0"
                )
            if source is None:
                raise VerifyException(
                    "a 'part' needs the 'source' program it is a part of, e.g. "
                    '{source = "p", part = 0}'
                )
        counts = attrs.get(COUNT_BUFFERS_ATTR)
        if counts is not None:
            if not isinstance(counts, ArrayAttr) or not all(
                isinstance(a, SymbolRefAttr) for a in counts.data
            ):
                raise VerifyException(
                    "'count_buffers' must be a list of buffer symbols, e.g. count_buffers = [@x]"
                )
            for ref in counts.data:
                assert isinstance(ref, SymbolRefAttr)
                buffer = self.buffer(ref.root_reference.data)
                if buffer is None or buffer.is_workgroup or buffer.is_scratch:
                    raise VerifyException(
                        f"count buffer @{ref.root_reference.data} is not a host buffer of "
                        f"@{self.sym_name.data}"
                    )
        active = attrs.get(ACTIVE_WORKGROUPS_ATTR)
        if active is not None and not (isinstance(active, IntegerAttr) and active.value.data >= 0):
            raise VerifyException(
                "'active_workgroups' must be a non-negative integer, e.g. active_workgroups = 4"
            )
        if self.indirect_buffer is not None:
            for buffer in self.buffers():
                if buffer.is_scratch:
                    raise VerifyException(
                        f"scratch buffer @{buffer.buffer_name} in a program with an indirect "
                        "grid: per-invocation scratch would be sized by a grid known only on "
                        "the GPU"
                    )

    def _verify_grid(self) -> None:
        """`grid [GX, GY, GZ]`: three axes, each 1 ... 65535; not with `indirect`."""
        if self.grid is None:
            return
        values = list(self.grid.get_values())
        if len(values) != 3:
            raise VerifyException("grid must have exactly 3 axes [GX, GY, GZ]")
        for axis, value in enumerate(values):
            if not 1 <= value <= MAX_GRID_PER_AXIS:
                raise VerifyException(
                    f"grid axis {AXES[axis]} is {value} workgroups; every axis must launch "
                    f"1 ... {MAX_GRID_PER_AXIS} workgroups (the device limit per dimension)"
                )
        if "indirect" in self.attributes:
            raise VerifyException(
                "a program has either an explicit grid or an indirect one, not both: "
                "remove 'grid [...]' or the 'indirect' attribute"
            )

    def _verify_indirect(self) -> None:
        """`{indirect = @grid}`: @grid is a declared host `ui32` buffer of at least 3
        elements (`indirect_offset / 4 + 3` with an offset)."""
        if "indirect" not in self.attributes:
            if "indirect_offset" in self.attributes:
                raise VerifyException(
                    "'indirect_offset' needs an indirect grid, e.g. "
                    "{indirect = @grid, indirect_offset = 12}"
                )
            return
        offset = self.attributes.get("indirect_offset")
        if offset is not None and not (
            isinstance(offset, IntegerAttr)
            and offset.value.data >= 0
            and offset.value.data % 4 == 0
        ):
            raise VerifyException(
                f"indirect grid offset {offset} is not a non-negative multiple of 4 bytes "
                "(the grid is three ui32 words); e.g. indirect_offset = 12"
            )
        name = self.indirect_buffer
        if name is None:
            raise VerifyException(
                "'indirect' must name a buffer of the program, e.g. {indirect = @grid}"
            )
        buffer = self.buffer(name)
        if buffer is None:
            raise VerifyException(
                f"indirect grid buffer @{name} is not declared in @{self.sym_name.data}. "
                f"Fix: declare it, e.g. 'vyre.buffer @{name} binding 3 read_only : ui32[3]'"
            )
        count = buffer.static_count
        if buffer.is_workgroup or buffer.element != "ui32":
            raise VerifyException(
                f"indirect grid buffer @{name} must be a host ui32 buffer with a static "
                "count of at least 3 (the workgroups on x, y and z)"
            )
        needed = self.indirect_offset // 4 + 3
        if count is None or count < needed:
            at = f" from byte {self.indirect_offset}" if self.indirect_offset else ""
            raise VerifyException(
                f"indirect grid buffer @{name} must be a host ui32 buffer with a static "
                f"count of at least {needed} (the workgroups on x, y and z{at})"
            )


@irdl_op_definition
class BufferOp(IRDLOperation):
    """Declares a buffer of the enclosing program.

    ```mlir
    vyre.buffer @x binding 0 read_only : f32[1024]
    vyre.buffer @out binding 1 read_write output : ui32[?]
    vyre.buffer @tile workgroup : f32[64]
    ```
    """

    name = "vyre.buffer"

    sym_name = prop_def(StringAttr)
    binding = opt_prop_def(IntegerAttr)
    access = prop_def(StringAttr)
    element_type = prop_def(TypeAttribute)
    count = opt_prop_def(IntegerAttr)
    output = opt_prop_def(UnitAttr)

    traits = traits_def(HasParent(ProgramOp), SymbolOpInterface(), DeclaresBuffer())

    def __init__(
        self,
        name: str,
        access: str,
        element_type: Attribute | str,
        count: int | None,
        binding: int | None = None,
        output: bool = False,
    ):
        if isinstance(element_type, str):
            element_type = ELEMENT_TYPES[element_type]
        properties: dict[str, Attribute] = {
            "sym_name": StringAttr(name),
            "access": StringAttr(access),
            "element_type": element_type,
        }
        if binding is not None:
            properties["binding"] = IntegerAttr(binding, i64)
        if count is not None:
            properties["count"] = IntegerAttr(count, i64)
        if output:
            properties["output"] = UnitAttr()
        super().__init__(properties=properties)

    @property
    def buffer_name(self) -> str:
        return self.sym_name.data

    @property
    def access_mode(self) -> str:
        return self.access.data

    @property
    def element(self) -> str:
        return type_name(self.element_type) or str(self.element_type)

    @property
    def static_count(self) -> int | None:
        """The declared element count, or None when runtime-sized (`?`)."""
        return None if self.count is None else self.count.value.data

    @property
    def binding_slot(self) -> int | None:
        return None if self.binding is None else self.binding.value.data

    @property
    def is_output(self) -> bool:
        return self.output is not None

    @property
    def is_workgroup(self) -> bool:
        return self.access_mode == "workgroup"

    @property
    def is_scratch(self) -> bool:
        """Per-invocation scratch (`{vyre.scratch}`: `count` elements for every
        invocation of the dispatch, zeroed, never seen by the host)."""
        return SCRATCH_ATTR in self.attributes

    @classmethod
    def parse(cls, parser: Parser) -> BufferOp:
        name = parser.parse_symbol_name()
        binding = None
        if parser.parse_optional_keyword("binding") is not None:
            binding = parse_int_in(parser, "binding", 0, MAX_BINDING)
        pos = parser.pos
        access = parser.parse_identifier()
        if access not in ACCESS_MODES:
            parser.raise_error(
                f"expected access mode, one of {', '.join(ACCESS_MODES)}", pos, parser.pos
            )
        output = parser.parse_optional_keyword("output") is not None
        element_type, count = parse_shaped_type(parser)
        op = cls(name.data, access, element_type, count, binding, output)
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.buffer_name)
        if self.binding_slot is not None:
            printer.print_string(f" binding {self.binding_slot}")
        printer.print_string(f" {self.access_mode}")
        if self.is_output:
            printer.print_string(" output")
        print_shaped_type(printer, self.element_type, self.static_count)
        _print_attrs(printer, self)

    def verify_(self) -> None:
        if self.access_mode not in ACCESS_MODES:
            raise VerifyException(
                f"unknown access mode '{self.access_mode}'; expected one of {', '.join(ACCESS_MODES)}"
            )
        _require_element_type(self.element_type, f"buffer @{self.buffer_name}")
        if (problem := count_problem(self.static_count, f"buffer @{self.buffer_name}")) is not None:
            raise VerifyException(problem)
        if self.binding_slot is not None and not 0 <= self.binding_slot <= MAX_BINDING:
            raise VerifyException(
                f"binding {self.binding_slot} of buffer @{self.buffer_name} is out of range; "
                f"bindings are between 0 and {MAX_BINDING} (2^24 - 1)"
            )
        if self.is_workgroup:
            if self.binding is not None:
                raise VerifyException(f"workgroup buffer @{self.buffer_name} takes no binding")
            if not self.static_count:
                raise VerifyException(
                    f"workgroup buffer @{self.buffer_name} needs a static element count > 0"
                )
            if self.is_output:
                raise VerifyException(f"workgroup buffer @{self.buffer_name} cannot be an output")
        if self.is_scratch and (
            self.access_mode != "read_write"
            or self.binding is not None
            or self.is_output
            or not self.static_count
            or not isinstance(self.attributes[SCRATCH_ATTR], UnitAttr)
        ):
            raise VerifyException(
                f"scratch buffer @{self.buffer_name} must be 'read_write' with a static count "
                "(elements per invocation) > 0, no binding and no output, e.g. "
                f"'vyre.buffer @{self.buffer_name} read_write : ui32[2] {{{SCRATCH_ATTR}}}'"
            )


def programs(module: ModuleOp) -> list[ProgramOp]:
    """The programs of a module, in program order."""
    return [op for op in module.ops if isinstance(op, ProgramOp)]
