"""vyre-lower and kernel-verify from Python: slots, geometry, ids, splitting,
diagnostics, the WgslKernel contract, the size cap and descriptor dumps."""

from __future__ import annotations

import math

import blake3
import numpy as np
import pytest

from vyre_xdsl.backends.wgsl import WgslModuleTooLarge, compile_module, lowered_module
from vyre_xdsl.context import parse_module
from vyre_xdsl.diagnostics import VyreDiagnostic
from vyre_xdsl.dialects import kernel as k
from vyre_xdsl.lowering.descriptor_id import canonical_program_bytes, descriptor_id
from vyre_xdsl.target_profile import TargetProfile
from vyre_xdsl.tools.vyre_opt import VyreOptMain, run_tool

from ..support import EXAMPLES


def descriptors(text: str, profile: TargetProfile = TargetProfile()) -> list[k.DescriptorOp]:
    return k.descriptors(lowered_module(parse_module(text), profile))


def program(body: str, wg: str = "[64, 1, 1]", buffers: str = "") -> str:
    return f"vyre.program @p workgroup_size {wg} {{\n{buffers}\n{body}\n}}\n"


ELEMENTWISE = """
  vyre.buffer @out binding 0 write_only : ui32[{n}]
  %i = vyre.invocation_id x
  vyre.store @out[%i] = %i : ui32
"""


def independent_grid(n: int, threads: int) -> tuple[int, int, int]:
    groups = max(1, -(-n // threads))
    if groups <= 65535:
        return (groups, 1, 1)
    rows = -(-groups // 65535)
    return (-(-groups // rows), rows, 1)


@pytest.mark.parametrize(
    "n,wg", [(1, 64), (1000, 64), (4096, 256), (65535 * 64 + 1, 64), (5_000_000, 32)]
)
def test_static_grid_folds_past_65535(n, wg):
    (d,) = descriptors(program(ELEMENTWISE.format(n=n), f"[{wg}, 1, 1]"))
    # the logical grid (kernel-vectorize may launch fewer workgroups: its own test)
    grid = d.dispatch().logical_static_grid
    assert grid == independent_grid(n, wg)
    assert grid[0] <= 65535 and grid[0] * grid[1] * wg >= n


@pytest.mark.parametrize(
    "profile,expected",
    [
        (TargetProfile(), 128),  # unknown subgroup: 4 x 32
        (TargetProfile(subgroup_size=8), 128),  # at least 32
        (TargetProfile(subgroup_size=64), 256),
        (TargetProfile(subgroup_size=128), 256),  # at most 256
        (TargetProfile(max_workgroup_size=(64, 256, 64)), 64),  # the device limit
    ],
)
def test_scalar_default_is_widened(profile, expected):
    (d,) = descriptors(program(ELEMENTWISE.format(n=1000), "[1, 1, 1]"), profile)
    dispatch = d.dispatch()
    assert dispatch.kernel_workgroup == (expected, 1, 1)
    assert dispatch.program_workgroup == (1, 1, 1)
    assert dispatch.static_grid == (math.ceil(1000 / expected), 1, 1)


def test_explicit_sizes_are_honoured_and_noop_gets_one():
    # n = 8: one workgroup covers it along x (a larger n needs a grid; test_launch_geometry)
    (d,) = descriptors(program(ELEMENTWISE.format(n=8), "[8, 8, 1]"))
    assert d.dispatch().kernel_workgroup == (8, 8, 1)
    (noop,) = descriptors("vyre.program @noop workgroup_size [1, 1, 1] {\n}\n")
    assert noop.dispatch().kernel_workgroup == (1, 1, 1)


def test_widening_keeps_the_declared_launch_past_the_fold():
    # n = 131200: the declared [1,1,1] launch folds to 3 rows of 43734 = 131202
    # invocations, two more than 1025 workgroups of 128 would run.
    n = 128 * 1025
    (d,) = descriptors(program(ELEMENTWISE.format(n=n), "[1, 1, 1]"))
    gx, gy, gz = d.dispatch().static_grid
    declared = independent_grid(n, 1)
    assert gx * gy * gz * 128 >= declared[0] * declared[1]
    kernel = compile_module(parse_module(program(ELEMENTWISE.format(n=n), "[1, 1, 1]")))[0]
    assert f"if (vyre_invocation >= {declared[0] * declared[1]}u)" in kernel.wgsl


def test_slots_classes_and_groups():
    text = program(
        "  %l = vyre.local_id x\n  %v = vyre.load @a[%l] : ui32\n  vyre.store @b[%l] = %v : ui32\n"
        "  %u = vyre.load @d[%l] : ui32\n  vyre.store @tile[%l] = %u : ui32\n"
        "  %o = vyre.atomic add @c[%l], %u : ui32\n",
        buffers="  vyre.buffer @a binding 2 read_only : ui32[8]\n"
        "  vyre.buffer @b binding 2 write_only : ui32[8]\n"
        "  vyre.buffer @c binding 0 read_write : ui32[8]\n"
        "  vyre.buffer @tile workgroup : ui32[8]\n"
        "  vyre.buffer @tile2 workgroup : f32[8]\n"
        "  vyre.buffer @d binding 7 uniform : ui32[8]",
    )
    (d,) = descriptors(text)
    table = {
        b.buffer_name: (b.slot_number, b.group_number, b.mem_class, b.access, b.is_atomic)
        for b in d.bindings()
    }
    assert table == {
        "a": (2, 0, "constant", "read_only", False),
        "b": (1, 0, "global", "write_only", False),
        "c": (0, 0, "global", "read_write", True),
        "tile": (1 << 24, None, "shared", "read_write", False),
        "tile2": ((1 << 24) + 1, None, "shared", "read_write", False),
        "d": (7, 1, "uniform", "read_only", False),
        # the atomics on @c go to a workgroup copy (atomic privatization)
        "__vyre_private_c": ((1 << 24) + 2, None, "shared", "read_write", True),
    }


def test_trap_sidecar_at_highest_host_slot_plus_one():
    text = program(
        "  %i = vyre.invocation_id x\n  %v = vyre.load @x[%i] : si32\n  %q = vyre.mod %v, %v : si32\n",
        buffers="  vyre.buffer @x binding 9 read_only : si32[8]\n  vyre.buffer @y binding 3 read_write : si32[8]",
    )
    (d,) = descriptors(text)
    sidecar = [b for b in d.bindings() if b.is_trap_sidecar]
    assert [(b.buffer_name, b.slot_number, b.static_count) for b in sidecar] == [
        (k.TRAP_SIDECAR_NAME, 10, k.TRAP_SIDECAR_WORDS)
    ]
    # no division on si32, no trap: no sidecar
    (plain,) = descriptors(text.replace("si32", "ui32"))
    assert not any(b.is_trap_sidecar for b in plain.bindings())


def test_descriptor_id_is_blake3_of_the_canonical_program():
    text = (EXAMPLES / "axpy.mlir").read_text()
    module = parse_module(text)
    (p,) = list(module.ops)
    (d,) = descriptors(text)
    assert d.id == blake3.blake3(canonical_program_bytes(p)).hexdigest()
    # stable under renaming SSA values and moving the program in its file
    renamed = parse_module("\n\n" + text.replace("%xv", "%other").replace("%s", "%sum"))
    assert descriptor_id(list(renamed.ops)[0]) == d.id
    # any semantic change changes it
    changed = parse_module(text.replace("2.0 : f32", "3.0 : f32"))
    assert descriptor_id(list(changed.ops)[0]) != d.id
    resized = parse_module(text.replace("[64, 1, 1]", "[32, 1, 1]"))
    assert descriptor_id(list(resized.ops)[0]) != d.id


def test_grid_sync_split_gives_ordered_kernels_with_the_same_count():
    text = program(
        "  %i = vyre.invocation_id x\n  %v = vyre.load @x[%i] : ui32\n  vyre.store @t[%i] = %v : ui32\n"
        "  vyre.barrier grid_sync\n  %w = vyre.load @t[%i] : ui32\n  vyre.store @out[%i] = %w : ui32\n"
        "  vyre.barrier grid_sync\n  vyre.store @out[%i] = %v : ui32\n",
        buffers="  vyre.buffer @x binding 0 read_only : ui32[?]\n  vyre.buffer @t binding 1 read_write : ui32[100]\n"
        "  vyre.buffer @out binding 2 write_only : ui32[300]",
    )
    kernels = compile_module(parse_module(text))
    assert [(kern.source, kern.part) for kern in kernels] == [("p", 0), ("p", 1), ("p", 2)]
    assert len({kern.id for kern in kernels}) == 3
    # parts 0 and 2 load the runtime-sized @x (part 2 recomputes %v), so only part 1
    # takes the vec4 form
    assert [kern.elements_per_invocation for kern in kernels] == [1, 4, 1]
    for kern in kernels:
        assert kern.count_buffers == ("out", "t")
        expected = (5, 1, 1) if kern.elements_per_invocation == 1 else (2, 1, 1)  # 300/64, 75/64
        assert kern.static_grid == expected
        assert kern.dispatch_grid({"x": 7}) == expected


def test_runtime_sized_grid_comes_from_the_bound_lengths():
    text = program(ELEMENTWISE.format(n="?"), "[1, 1, 1]")
    (kernel,) = compile_module(parse_module(text))
    assert kernel.static_grid is None and kernel.count_buffers == ("out",)
    assert kernel.workgroup_size == (128, 1, 1) and kernel.program_workgroup_size == (1, 1, 1)
    assert kernel.dispatch_grid({"out": 1000}) == (8, 1, 1)
    n = 128 * 1025
    rows = -(-n // 65535)
    declared = -(-n // rows) * rows
    assert kernel.dispatch_grid({"out": n}) == (-(-declared // 128), 1, 1)
    assert kernel.element_count({"out": 0}) == 1


def test_lowering_reports_every_error_at_once():
    text = program(
        "  %i = vyre.invocation_id x\n",
        buffers=f"  vyre.buffer @{k.TRAP_SIDECAR_NAME} binding 0 read_only : ui32[4]",
    ) + program(ELEMENTWISE.format(n=8), "[512, 1, 1]").replace("@p", "@q")
    with pytest.raises(VyreDiagnostic) as info:
        lowered_module(parse_module(text))
    messages = [m for _, m in info.value.errors]
    assert any("reserved for the trap sidecar" in m for m in messages)
    assert any("exceeds the target profile" in m for m in messages)
    assert all(op is not None for op, _ in info.value.errors)


def test_input_module_is_not_changed():
    module = parse_module((EXAMPLES / "chain3.mlir").read_text())
    before = str(module)
    assert len(compile_module(module)) == 3
    assert str(module) == before


def test_module_over_the_size_cap_is_refused():
    module = parse_module((EXAMPLES / "axpy.mlir").read_text())
    size = len(compile_module(module)[0].wgsl.encode())
    assert compile_module(module, max_bytes=size)  # at the cap: fine
    with pytest.raises(WgslModuleTooLarge, match="partition"):
        compile_module(module, max_bytes=size - 1)


def test_dump_kdesc_writes_each_descriptor(tmp_path, monkeypatch):
    monkeypatch.setenv("VYRE_DUMP_KDESC", str(tmp_path / "dump"))
    kernels = compile_module(parse_module((EXAMPLES / "chain3.mlir").read_text()))
    for kernel in kernels:
        text = (tmp_path / "dump" / f"{kernel.id}.kdesc.mlir").read_text()
        assert text.startswith(f'kernel.descriptor @{kernel.source} id "{kernel.id}"')
        assert (tmp_path / "dump" / f"{kernel.id}.wgsl").read_text() == kernel.wgsl
        # the dump parses back as a descriptor
        assert k.descriptors(parse_module(text))[0].id == kernel.id


def test_cli_lower_error_is_located_without_traceback(tmp_path, capsys):
    path = tmp_path / "bad.mlir"
    path.write_text(program(ELEMENTWISE.format(n=8), "[512, 1, 1]"))
    assert run_tool(VyreOptMain, [str(path), "--lower"]) == 1
    err = capsys.readouterr().err
    assert f"{path}:1:1: error: workgroup size [512, 1, 1] exceeds the target profile" in err
    assert "Traceback" not in err


def test_bool_and_float_literals_keep_their_bits():
    from vyre_xdsl.backends.wgsl.printer import wgsl_literal

    for value in [0.1, -0.0, 1e-40, float("inf"), float("nan"), 3.4028234663852886e38, -2.5]:
        text = wgsl_literal(value, "f32")
        bits = int(np.float32(value).view(np.uint32))
        if text.startswith("bitcast"):
            assert text == f"bitcast<f32>({bits:#010x}u)"
        else:
            assert np.float32(float(text.removesuffix("f"))).view(np.uint32) == bits
    assert wgsl_literal(-(2**31), "si32") == "i32(-2147483648)"
    assert wgsl_literal(4294967295, "ui32") == "4294967295u"
    assert wgsl_literal(True, "i1") == "true"
