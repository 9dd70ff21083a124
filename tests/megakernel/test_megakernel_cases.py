"""Multi-program modules for the megakernel tests (one per planner situation),
and checks of the program graph built from them.

Each module is small (256 elements) so that the reference interpreter and
lavapipe run it in milliseconds.
"""

from __future__ import annotations

import vyre_xdsl
from vyre_xdsl.megakernel.graph import ANTI, DATA, OUTPUT, ProgramGraph


def _copy(
    name: str,
    src: str,
    dst: str,
    index: str = "%i",
    extra: str = "",
    wg: str = "64, 1, 1",
    attrs: str = "",
    src_access: str = "read_only",
    dst_access: str = "write_only",
) -> str:
    """A program `dst[i] = src[index] + 1` over 256 ui32 elements."""
    return f"""
vyre.program @{name}{attrs} workgroup_size [{wg}] {{
  vyre.buffer @{src} binding 0 {src_access} : ui32[256]
  vyre.buffer @{dst} binding 1 {dst_access} : ui32[256]
  %i = vyre.invocation_id x
  %one = vyre.const 1 : ui32
  %next = vyre.add %i, %one : ui32
{extra}  %v = vyre.load @{src}[{index}] : ui32
  %r = vyre.add %v, %one : ui32
  vyre.store @{dst}[%i] = %r : ui32
}}
"""


# t = x + 1; out = t[i + 1] + 1: the consumer reads an element another workgroup wrote.
MKL003 = _copy("p", "x", "t") + _copy("c", "t", "out", index="%next")

# p -> c1 is invocation-local; c2 reads t shifted (cross-workgroup) and u from c1.
MKL004 = (
    _copy("p", "x", "t")
    + _copy("c1", "t", "u")
    + """
vyre.program @c2 workgroup_size [64, 1, 1] {
  vyre.buffer @t binding 0 read_only : ui32[256]
  vyre.buffer @u binding 1 read_only : ui32[256]
  vyre.buffer @out binding 2 write_only : ui32[256]
  %i = vyre.invocation_id x
  %one = vyre.const 1 : ui32
  %j = vyre.add %i, %one : ui32
  %a = vyre.load @t[%j] : ui32
  %b = vyre.load @u[%i] : ui32
  %s = vyre.add %a, %b : ui32
  vyre.store @out[%i] = %s : ui32
}
"""
)

# The producer reads workgroup_id under workgroup [64, 1, 1]; the consumer's is [128, 1, 1].
MKL005 = _copy(
    "p", "x", "t", extra="  %w = vyre.workgroup_id x\n  %wi = vyre.add %i, %w : ui32\n", index="%wi"
) + _copy("c", "t", "out", wg="128, 1, 1")

# Over-dispatch: [32, 1, 1] and [1, 8, 1] fuse to [32, 8, 1], 8x the largest program.
MKL005_OVER_DISPATCH = _copy("p", "x", "t", wg="32, 1, 1") + _copy("c", "t", "out", wg="1, 8, 1")

# The producer splits itself at a grid_sync barrier.
MKL006 = """
vyre.program @p workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[256]
  vyre.buffer @t binding 1 write_only : ui32[256]
  vyre.buffer @s binding 2 write_only : ui32[256]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  vyre.store @s[%i] = %v : ui32
  vyre.barrier grid_sync
  %one = vyre.const 1 : ui32
  %j = vyre.add %i, %one : ui32
  %w = vyre.load @s[%j] : ui32
  vyre.store @t[%i] = %w : ui32
}
""" + _copy("c", "t", "out")

MKL006_NON_COMPOSABLE = _copy("p", "x", "t", attrs=" {non_composable}") + _copy("c", "t", "out")

# p -> c is legal alone, but m (cross-workgroup from p, and to c) sits between them.
MKL007 = (
    _copy("p", "x", "a")
    + _copy("m", "a", "b", index="%next")
    + """
vyre.program @c workgroup_size [64, 1, 1] {
  vyre.buffer @a binding 0 read_only : ui32[256]
  vyre.buffer @b binding 1 read_only : ui32[256]
  vyre.buffer @out binding 2 write_only : ui32[256]
  %i = vyre.invocation_id x
  %one = vyre.const 1 : ui32
  %j = vyre.add %i, %one : ui32
  %p = vyre.load @a[%i] : ui32
  %q = vyre.load @b[%j] : ui32
  %s = vyre.add %p, %q : ui32
  vyre.store @out[%i] = %s : ui32
}
"""
)

# The consumer reads its workgroup's 64 elements in reverse: workgroup-local (a barrier).
WORKGROUP_LOCAL = (
    _copy("p", "x", "t")
    + """
vyre.program @c workgroup_size [64, 1, 1] {
  vyre.buffer @t binding 0 read_only : ui32[256]
  vyre.buffer @out binding 1 write_only : ui32[256]
  %i = vyre.invocation_id x
  %w = vyre.workgroup_id x
  %l = vyre.local_id x
  %size = vyre.const 64 : ui32
  %last = vyre.const 63 : ui32
  %base = vyre.mul %w, %size : ui32
  %r = vyre.sub %last, %l : ui32
  %j = vyre.add %base, %r : ui32
  %v = vyre.load @t[%j] : ui32
  vyre.store @out[%i] = %v : ui32
}
"""
)

# No dataflow between p and c, but c overwrites (shifted) what p read: write-after-read.
WRITE_AFTER_READ = _copy("p", "a", "out1", index="%next", src_access="read_write") + _copy(
    "c", "y", "a", dst_access="read_write"
)

# A four-stage pipeline: fused chain, cross-workgroup stencil, workgroup-local
# reversal, then an atomic histogram over everything.
PIPELINE = (
    _copy("scale", "x", "t1")
    + _copy("shift", "t1", "t2")
    + _copy("stencil", "t2", "t3", index="%next")
    + """
vyre.program @reverse workgroup_size [64, 1, 1] {
  vyre.buffer @t3 binding 0 read_only : ui32[256]
  vyre.buffer @out binding 1 write_only output : ui32[256]
  %i = vyre.invocation_id x
  %w = vyre.workgroup_id x
  %l = vyre.local_id x
  %size = vyre.const 64 : ui32
  %last = vyre.const 63 : ui32
  %base = vyre.mul %w, %size : ui32
  %r = vyre.sub %last, %l : ui32
  %j = vyre.add %base, %r : ui32
  %v = vyre.load @t3[%j] : ui32
  vyre.store @out[%i] = %v : ui32
}
vyre.program @histogram workgroup_size [64, 1, 1] {
  vyre.buffer @out binding 0 read_only : ui32[256]
  vyre.buffer @hist binding 1 read_write : ui32[16]
  %i = vyre.invocation_id x
  %v = vyre.load @out[%i] : ui32
  %mask = vyre.const 15 : ui32
  %bucket = vyre.bit_and %v, %mask : ui32
  %one = vyre.const 1 : ui32
  %old = vyre.atomic add @hist[%bucket], %one : ui32
}
"""
)

CASES = {
    "mkl003": MKL003,
    "mkl004": MKL004,
    "mkl005": MKL005,
    "mkl005_over_dispatch": MKL005_OVER_DISPATCH,
    "mkl006": MKL006,
    "mkl006_non_composable": MKL006_NON_COMPOSABLE,
    "mkl007": MKL007,
    "workgroup_local": WORKGROUP_LOCAL,
    "write_after_read": WRITE_AFTER_READ,
    "pipeline": PIPELINE,
}


def module_of(text: str):
    """The verified vyre module of `text` (standard MLIR is converted first)."""
    return vyre_xdsl.parse(text)


def graph_of(text: str) -> ProgramGraph:
    return ProgramGraph.from_module(module_of(text))


# ---------------------------------------------------------------------- graph tests


def test_every_case_verifies():
    for name, text in CASES.items():
        module_of(text)


def test_data_edges_run_from_each_writer_to_every_later_reader():
    graph = graph_of(MKL004)
    names = {v.name: v.id for v in graph.values}
    edges = {(d.producer, d.consumer, d.value) for d in graph.data_edges()}
    assert edges == {(0, 1, names["t"]), (0, 2, names["t"]), (1, 2, names["u"])}


def test_values_are_host_buffers_in_order_of_first_declaration():
    graph = graph_of(MKL004)
    assert [v.name for v in graph.values] == ["x", "t", "u", "out"]
    assert graph.value_named("t").writers == (0,)
    assert graph.value_named("t").readers == (1, 2)


def test_lifetimes_follow_the_run_signature():
    graph = graph_of(PIPELINE)
    lifetime = {v.name: v.lifetime for v in graph.values}
    # x: read-only input; t1..t3: intermediates; out: marked output (and read
    # later); hist: read_write, so both an input and an output -> retained
    assert lifetime == {
        "x": "invocation",
        "t1": "invocation",
        "t2": "invocation",
        "t3": "invocation",
        "out": "output",
        "hist": "retained",
    }
    assert [graph.values[m.value].name for m in graph.materializations] == ["out", "hist"]


def test_write_after_read_is_an_anti_dependence_not_a_data_edge():
    graph = graph_of(WRITE_AFTER_READ)
    a = graph.value_named("a").id
    assert [(d.producer, d.consumer, d.value, d.kind) for d in graph.dependences] == [
        (0, 1, a, ANTI)
    ]
    assert graph.data_edges() == ()


def test_output_dependence_between_two_writers():
    text = _copy("p", "x", "t", dst_access="read_write") + _copy(
        "c", "y", "t", dst_access="read_write"
    )
    graph = graph_of(text)
    t = graph.value_named("t").id
    assert {(d.producer, d.consumer, d.value, d.kind) for d in graph.dependences} == {
        (0, 1, t, OUTPUT)
    }
    assert DATA not in {d.kind for d in graph.dependences}


def test_node_text_is_canonical_whatever_the_ssa_names():
    renamed = MKL003.replace("%v", "%value").replace("%r", "%result")
    assert [n.text for n in graph_of(renamed).nodes] == [n.text for n in graph_of(MKL003).nodes]
    assert "%value" not in graph_of(renamed).nodes[0].text
