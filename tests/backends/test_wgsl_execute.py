"""The printed WGSL computes SPEC section 3.4 semantics on lavapipe.

A deliberately tiny executor (one buffer per name, shared across the kernels of
a module, one submit) runs `compile_module` output; every expected value is
computed here with numpy, independently of the compiler and the interpreter.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

wgpu = pytest.importorskip("wgpu")

from vyre_xdsl.backends.wgsl import WgslKernel, compile_module  # noqa: E402
from vyre_xdsl.context import parse_module  # noqa: E402
from vyre_xdsl.dialects.kernel import TRAP_SIDECAR_NAME  # noqa: E402

from ..support import EXAMPLES  # noqa: E402


def execute(
    device, kernels: list[WgslKernel], arrays: dict[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """Run `kernels` in order in one submit over `arrays` (by buffer name)."""
    usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
    arrays = dict(arrays)
    arrays[TRAP_SIDECAR_NAME] = np.zeros(4, np.uint32)
    buffers = {
        name: device.create_buffer_with_data(
            data=np.ascontiguousarray(a).tobytes() or b"\0" * 4, usage=usage
        )
        for name, a in arrays.items()
    }
    encoder = device.create_command_encoder()
    for kernel in kernels:
        module = device.create_shader_module(code=kernel.wgsl)
        pipeline = device.create_compute_pipeline(
            layout="auto", compute={"module": module, "entry_point": kernel.entry_point}
        )
        groups = sorted({b.group for b in kernel.bindings})
        bind_groups = {
            g: device.create_bind_group(
                layout=pipeline.get_bind_group_layout(g),
                entries=[
                    {"binding": b.slot, "resource": {"buffer": buffers[b.name]}}
                    for b in kernel.bindings
                    if b.group == g
                ],
            )
            for g in groups
        }
        lengths = {name: a.size for name, a in arrays.items()}
        compute = encoder.begin_compute_pass()
        compute.set_pipeline(pipeline)
        for g, bind_group in bind_groups.items():
            compute.set_bind_group(g, bind_group)
        compute.dispatch_workgroups(*kernel.dispatch_grid(lengths))
        compute.end()
    device.queue.submit([encoder.finish()])
    return {
        name: np.frombuffer(device.queue.read_buffer(buffers[name]), dtype=a.dtype)[: a.size].copy()
        for name, a in arrays.items()
    }


def run(device, text: str, arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return execute(device, compile_module(parse_module(text)), arrays)


def test_axpy(device):
    text = open(os.path.join(EXAMPLES, "axpy.mlir")).read()
    rng = np.random.default_rng(0)
    x = rng.integers(-1000, 1000, 1024).astype(np.float32)
    y = rng.integers(-1000, 1000, 1024).astype(np.float32)
    out = run(device, text, {"x": x, "y": y})
    assert out["y"].tobytes() == (np.float32(2.0) * x + y).tobytes()


UINT_EDGES = """
vyre.program @edges workgroup_size [64, 1, 1] {
  vyre.buffer @a binding 0 read_only : ui32[256]
  vyre.buffer @b binding 1 read_only : ui32[256]
  vyre.buffer @out binding 2 write_only : ui32[1024]
  %i = vyre.invocation_id x
  %four = vyre.const 4 : ui32
  %base = vyre.mul %i, %four : ui32
  %one = vyre.const 1 : ui32
  %two = vyre.const 2 : ui32
  %three = vyre.const 3 : ui32
  %x = vyre.load @a[%i] : ui32
  %y = vyre.load @b[%i] : ui32
  %d = vyre.div %x, %y : ui32
  %m = vyre.mod %x, %y : ui32
  %l = vyre.shl %x, %y : ui32
  %r = vyre.shr %x, %y : ui32
  %p1 = vyre.add %base, %one : ui32
  %p2 = vyre.add %base, %two : ui32
  %p3 = vyre.add %base, %three : ui32
  vyre.store @out[%base] = %d : ui32
  vyre.store @out[%p1] = %m : ui32
  vyre.store @out[%p2] = %l : ui32
  vyre.store @out[%p3] = %r : ui32
}
"""


def test_ui32_division_by_zero_and_shift_masking(device):
    rng = np.random.default_rng(1)
    a = rng.integers(0, 2**32, 256, dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, 64, 256).astype(np.uint32)
    b[::4] = 0
    arrays = {"a": a, "b": b, "out": np.zeros(1024, np.uint32)}
    out = run(device, UINT_EDGES, arrays)["out"].reshape(256, 4)
    a64, b64 = a.astype(np.uint64), b.astype(np.uint64)
    safe = np.where(b64 == 0, 1, b64)
    assert (out[:, 0] == np.where(b64 == 0, 0xFFFFFFFF, a64 // safe)).all()
    assert (out[:, 1] == np.where(b64 == 0, 0, a64 % safe)).all()
    assert (out[:, 2] == ((a64 << (b64 & 31)) & 0xFFFFFFFF)).all()
    assert (out[:, 3] == (a64 >> (b64 & 31))).all()


OUT_OF_BOUNDS = """
vyre.program @oob workgroup_size [32, 1, 1] {
  vyre.buffer @x binding 0 read_only : si32[100]
  vyre.buffer @out binding 1 read_write : si32[?]
  %i = vyre.invocation_id x
  %ten = vyre.const 10 : ui32
  %j = vyre.add %i, %ten : ui32
  %v = vyre.load @x[%j] : si32
  %n = vyre.buf_len @out
  %k = vyre.sub %n, %i : ui32
  vyre.store @out[%k] = %v : si32
}
"""


def test_out_of_bounds_loads_are_zero_and_stores_dropped(device):
    # x is declared with 100 elements but the host array is longer: the
    # program must still see exactly 100.
    x = np.arange(1, 201, dtype=np.int32)
    out = np.full(50, -7, np.int32)
    result = run(device, OUT_OF_BOUNDS, {"x": x, "out": out})["out"]
    expected = out.copy()
    for i in range(64):  # 50 elements, 32 per workgroup: two workgroups launched
        k = (50 - i) % 2**32
        value = x[i + 10] if i + 10 < 100 else 0
        if k < 50:
            expected[k] = value
    assert result.tolist() == expected.tolist()


BOOLS = """
vyre.program @bools workgroup_size [64, 1, 1] {
  vyre.buffer @a binding 0 read_only : f32[128]
  vyre.buffer @flags binding 1 read_only : i1[128]
  vyre.buffer @lt binding 2 write_only : i1[128]
  vyre.buffer @both binding 3 write_only : ui32[128]
  %i = vyre.invocation_id x
  %v = vyre.load @a[%i] : f32
  %z = vyre.const 0.0 : f32
  %c = vyre.lt %v, %z : f32
  vyre.store @lt[%i] = %c : i1
  %f = vyre.load @flags[%i] : i1
  %b = vyre.and %c, %f : i1
  %u = vyre.cast %b : i1 to ui32
  vyre.store @both[%i] = %u : ui32
}
"""


def test_bool_buffers_are_u32_words(device):
    rng = np.random.default_rng(2)
    a = rng.normal(size=128).astype(np.float32)
    flags = rng.integers(0, 3, 128).astype(np.uint32) * 7  # non-zero means true
    out = run(
        device,
        BOOLS,
        {"a": a, "flags": flags, "lt": np.zeros(128, np.uint32), "both": np.zeros(128, np.uint32)},
    )
    assert out["lt"].tolist() == (a < 0).astype(np.uint32).tolist()
    assert out["both"].tolist() == ((a < 0) & (flags != 0)).astype(np.uint32).tolist()


def test_atomics_and_compare_exchange(device):
    text = """
vyre.program @atomics workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[1000]
  vyre.buffer @stats binding 1 read_write : ui32[4]
  vyre.buffer @cas binding 2 read_write : ui32[1000]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %zero = vyre.const 0 : ui32
  %one = vyre.const 1 : ui32
  %two = vyre.const 2 : ui32
  %o1 = vyre.atomic add @stats[%zero], %one : ui32
  %o2 = vyre.atomic max @stats[%one], %v : ui32
  %o3 = vyre.atomic xor @stats[%two], %v : ui32
  %seven = vyre.const 7 : ui32
  %o4 = vyre.atomic compare_exchange @cas[%i], %seven, %v : ui32
  %far = vyre.const 5000 : ui32
  %o5 = vyre.atomic add @stats[%far], %one : ui32
}
"""
    rng = np.random.default_rng(3)
    x = rng.integers(0, 2**31, 1000).astype(np.uint32)
    cas = rng.integers(0, 10, 1000).astype(np.uint32)
    out = run(device, text, {"x": x, "stats": np.zeros(4, np.uint32), "cas": cas})
    # atomics cover all buffers: n = 1000 -> 16 workgroups of 64 = 1024 invocations;
    # the 24 past the end load 0 and still count.
    assert out["stats"].tolist() == [1024, int(x.max()), int(np.bitwise_xor.reduce(x)), 0]
    assert out["cas"].tolist() == np.where(cas == 7, x, cas).tolist()


def test_si32_division_trap_is_recorded(device):
    text = """
vyre.program @divide workgroup_size [64, 1, 1] {
  vyre.buffer @a binding 0 read_only : si32[64]
  vyre.buffer @b binding 1 read_only : si32[64]
  vyre.buffer @out binding 2 write_only : si32[64]
  %i = vyre.invocation_id x
  %x = vyre.load @a[%i] : si32
  %y = vyre.load @b[%i] : si32
  %q = vyre.div %x, %y : si32
  vyre.store @out[%i] = %q : si32
}
"""
    a = np.arange(64, dtype=np.int32) * 3
    b = np.ones(64, np.int32) * 2
    kernels = compile_module(parse_module(text))
    clean = execute(device, kernels, {"a": a, "b": b, "out": np.zeros(64, np.int32)})
    assert clean[TRAP_SIDECAR_NAME].tolist() == [0, 0, 0, 0]
    assert clean["out"].tolist() == (a // 2).tolist()
    b[37] = 0
    trapped = execute(device, kernels, {"a": a, "b": b, "out": np.zeros(64, np.int32)})
    # word 0: ~invocation of the lowest trapping invocation; word 3: flags (none set)
    key, address, code, flags = trapped[TRAP_SIDECAR_NAME].tolist()
    assert (key, address, flags) == (0xFFFFFFFF - 37, 0, 0)
    assert kernels[0].trap_tags[code - 1] == "si32.div"
    assert trapped["out"][37] == 0  # the trapping invocation ended before its store


def test_widened_scalar_program_runs_exactly_its_invocations(device):
    # [1, 1, 1] is widened to 128 invocations per workgroup; the kernel must
    # still run exactly the 1000 invocations the declared launch has.
    text = """
vyre.program @count workgroup_size [1, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[1000]
  vyre.buffer @hits binding 1 read_write : ui32[1]
  vyre.buffer @ids binding 2 read_write : ui32[?]
  %i = vyre.invocation_id x
  %w = vyre.workgroup_id x
  %l = vyre.local_id x
  %zero = vyre.const 0 : ui32
  %one = vyre.const 1 : ui32
  %o = vyre.atomic add @hits[%zero], %one : ui32
  %s = vyre.add %w, %l : ui32
  vyre.store @ids[%i] = %s : ui32
}
"""
    kernels = compile_module(parse_module(text))
    assert kernels[0].workgroup_size == (128, 1, 1)
    assert kernels[0].program_workgroup_size == (1, 1, 1)
    ids = np.full(1010, 0xFFFFFFFF, np.uint32)
    out = execute(
        device,
        kernels,
        {"x": np.zeros(1000, np.uint32), "hits": np.zeros(1, np.uint32), "ids": ids},
    )
    # n = max(1000, 1, 1010) = 1010 invocations, ids are 0..1009
    assert out["hits"].tolist() == [1010]
    assert out["ids"].tolist() == list(range(1010))


def test_grid_sync_splits_into_ordered_dispatches(device):
    text = """
vyre.program @reverse workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[4096]
  vyre.buffer @tmp binding 1 read_write : ui32[4096]
  vyre.buffer @out binding 2 write_only : ui32[4096]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %one = vyre.const 1 : ui32
  %w = vyre.add %v, %one : ui32
  vyre.store @tmp[%i] = %w : ui32
  vyre.barrier grid_sync
  %last = vyre.const 4095 : ui32
  %j = vyre.sub %last, %i : ui32
  %r = vyre.load @tmp[%j] : ui32
  vyre.store @out[%i] = %r : ui32
}
"""
    kernels = compile_module(parse_module(text))
    assert [k.part for k in kernels] == [0, 1]
    x = np.arange(4096, dtype=np.uint32) * 3
    out = execute(
        device,
        kernels,
        {"x": x, "tmp": np.zeros(4096, np.uint32), "out": np.zeros(4096, np.uint32)},
    )
    assert out["out"].tolist() == (x[::-1] + 1).tolist()


def test_workgroup_reduction_example(device):
    path = os.path.join(EXAMPLES, "reduction.mlir")
    module = parse_module(open(path).read())
    x = np.arange(4096, dtype=np.uint32)
    arrays = {"x": x, "partial": np.zeros(64, np.uint32)}
    out = execute(device, compile_module(module), arrays)
    assert out["partial"].tolist() == x.reshape(64, 64).sum(axis=1).astype(np.uint32).tolist()


#: Leaves `12345 + local_id` in every element of its workgroup memory (lavapipe
#: keeps such values for the next kernel's workgroups).
DIRTY = """
vyre.program @dirty workgroup_size [64, 1, 1] {
  vyre.buffer @sink binding 0 write_only : ui32[4096]
  vyre.buffer @tile workgroup : ui32[64]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %big = vyre.const 12345 : ui32
  %v = vyre.add %l, %big : ui32
  vyre.store @tile[%l] = %v : ui32
  vyre.barrier
  %r = vyre.load @tile[%l] : ui32
  vyre.store @sink[%i] = %r : ui32
}
"""


def test_workgroup_memory_starts_zeroed(device):
    # lavapipe (through wgpu) keeps the previous workgroup's values in
    # workgroup memory; the kernel must clear it itself.
    text = (
        DIRTY
        + """vyre.program @fresh workgroup_size [64, 1, 1] {
  vyre.buffer @out binding 1 write_only : ui32[4096]
  vyre.buffer @tile workgroup : ui32[64]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %r = vyre.load @tile[%l] : ui32
  vyre.store @out[%i] = %r : ui32
}
"""
    )
    arrays = {"sink": np.zeros(4096, np.uint32), "out": np.ones(4096, np.uint32)}
    out = run(device, text, arrays)
    assert out["sink"].tolist() == (np.arange(4096) % 64 + 12345).tolist()
    assert out["out"].tolist() == [0] * 4096


def test_barriers_order_storage_and_written_tiles_skip_zeroing(device):
    # @exchange: invocations meet in a storage buffer across a barrier (the
    # printer keeps storageBarrier there); @tree: each tile element is stored
    # at local_id before anything reads it, so the prologue does not zero it,
    # and 64 workgroups in a row each see only what they stored.
    text = """
vyre.program @exchange workgroup_size [64, 1, 1] {
  vyre.buffer @buf binding 0 read_write : ui32[64]
  vyre.buffer @swapped binding 1 write_only : ui32[64]
  %l = vyre.local_id x
  vyre.store @buf[%l] = %l : ui32
  vyre.barrier
  %one = vyre.const 1 : ui32
  %n = vyre.add %l, %one : ui32
  %r = vyre.load @buf[%n] : ui32
  vyre.store @swapped[%l] = %r : ui32
}
vyre.program @tree workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 2 read_only : ui32[4096]
  vyre.buffer @partial binding 3 write_only : ui32[64]
  vyre.buffer @tile workgroup : ui32[64]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %v = vyre.load @x[%i] : ui32
  vyre.store @tile[%l] = %v : ui32
  vyre.barrier
  %zero = vyre.const 0 : ui32
  %levels = vyre.const 6 : ui32
  %half = vyre.const 32 : ui32
  vyre.loop @level = %zero to %levels {
    %k = vyre.var @level : ui32
    %stride = vyre.shr %half, %k : ui32
    %active = vyre.lt %l, %stride : ui32
    vyre.if %active {
      %j = vyre.add %l, %stride : ui32
      %a = vyre.load @tile[%l] : ui32
      %b = vyre.load @tile[%j] : ui32
      %s = vyre.add %a, %b : ui32
      vyre.store @tile[%l] = %s : ui32
    }
    vyre.barrier
  }
  %first = vyre.eq %l, %zero : ui32
  vyre.if %first {
    %total = vyre.load @tile[%zero] : ui32
    vyre.store @partial[%w] = %total : ui32
  }
}
"""
    kernels = compile_module(parse_module(text))
    exchange, tree = (k.wgsl for k in kernels)
    assert "storageBarrier" in exchange
    assert "storageBarrier" not in tree and "vyre_z" not in tree
    x = np.random.default_rng(3).integers(0, 1 << 20, 4096).astype(np.uint32)
    arrays = {
        "buf": np.full(64, 7, np.uint32),
        "swapped": np.zeros(64, np.uint32),
        "x": x,
        "partial": np.zeros(64, np.uint32),
    }
    out = execute(device, kernels, arrays)
    assert out["swapped"].tolist() == list(range(1, 64)) + [0]
    assert out["partial"].tolist() == x.reshape(64, 64).sum(1, dtype=np.uint64).tolist()


def test_a_guarded_tile_skips_zeroing_only_when_the_guard_holds_every_access(device):
    # @dirty leaves values in workgroup memory (lavapipe keeps them); @guarded
    # stores its tile at local_id first inside an `if` on the workgroup id that
    # holds every tile access, so it is not zeroed and the stored values are
    # read back; @read_after reads the tile after that `if`, so it is zeroed and
    # the workgroups whose guard is false read 0.
    text = (
        DIRTY
        + """vyre.program @guarded workgroup_size [64, 1, 1] {
  vyre.buffer @reversed binding 1 read_write : ui32[4096]
  vyre.buffer @tile workgroup : ui32[64]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %half = vyre.const 32 : ui32
  %run = vyre.lt %w, %half : ui32
  vyre.if %run {
    %three = vyre.const 3 : ui32
    %v = vyre.mul %l, %three : ui32
    vyre.store @tile[%l] = %v : ui32
    vyre.barrier
    %last = vyre.const 63 : ui32
    %j = vyre.sub %last, %l : ui32
    %r = vyre.load @tile[%j] : ui32
    vyre.store @reversed[%i] = %r : ui32
  }
}
vyre.program @read_after workgroup_size [64, 1, 1] {
  vyre.buffer @after binding 2 write_only : ui32[4096]
  vyre.buffer @tile workgroup : ui32[64]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %half = vyre.const 32 : ui32
  %run = vyre.lt %w, %half : ui32
  vyre.if %run {
    %three = vyre.const 3 : ui32
    %v = vyre.mul %l, %three : ui32
    vyre.store @tile[%l] = %v : ui32
  }
  vyre.barrier
  %r = vyre.load @tile[%l] : ui32
  vyre.store @after[%i] = %r : ui32
}
"""
    )
    kernels = compile_module(parse_module(text))
    _, guarded, read_after = (k.wgsl for k in kernels)
    assert "vyre_z" not in guarded and "vyre_z" in read_after
    arrays = {
        "sink": np.zeros(4096, np.uint32),
        "reversed": np.full(4096, 9, np.uint32),
        "after": np.full(4096, 9, np.uint32),
    }
    out = execute(device, kernels, arrays)
    i = np.arange(4096)
    lane, group = i % 64, i // 64
    assert out["reversed"].tolist() == np.where(group < 32, (63 - lane) * 3, 9).tolist()
    assert out["after"].tolist() == np.where(group < 32, lane * 3, 0).tolist()
