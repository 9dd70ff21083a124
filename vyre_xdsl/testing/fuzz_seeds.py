"""Hand-written text seeds of the robustness fuzzer (`vyre_xdsl.testing.fuzz`)
for what the examples and the random modules leave out: standard MLIR with
`linalg` (generic and named ops), `math`, `scf.while`/`scf.if` and a 3-D
`scf.parallel`, and vyre programs on explicit 2-D and 3-D grids that read
`vyre.repetition` (the fuzzer runs some cases with `repeat` > 1).

Each seed parses, verifies and runs on the reference backend unmutated
(tests/testing/test_fuzz_robustness.py checks it).
"""

from __future__ import annotations

#: (name, text) of every seed
FUZZ_SEEDS: tuple[tuple[str, str], ...] = (
    (
        "seed:linalg_generic",
        """\
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#shift = affine_map<(i, j) -> ((i + 1) mod 6, j floordiv 2)>
func.func @rowsum(%A: memref<6x5xf32>, %B: memref<6x3xf32>, %s: memref<6xf32>, %t: memref<6x5xf32>) {
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%A : memref<6x5xf32>) outs(%s : memref<6xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#shift, #id], iterator_types = ["parallel", "parallel"]}
      ins(%B : memref<6x3xf32>) outs(%t : memref<6x5xf32>) {
  ^bb0(%b: f32, %o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %k = arith.addi %i, %j : index
    %w = arith.index_cast %k : index to i32
    %f = arith.sitofp %w : i32 to f32
    %m = arith.mulf %b, %f : f32
    linalg.yield %m : f32
  }
  func.return
}
""",
    ),
    (
        "seed:linalg_named",
        """\
func.func @mm(%A: memref<4x3xf32>, %B: memref<3x2xf32>, %C: memref<4x2xf32>, %D: memref<4x2xf32>, %E: memref<4x2xf32>) {
  %z = arith.constant 0.5 : f32
  linalg.fill ins(%z : f32) outs(%C : memref<4x2xf32>)
  linalg.matmul ins(%A, %B : memref<4x3xf32>, memref<3x2xf32>) outs(%C : memref<4x2xf32>)
  linalg.add ins(%C, %D : memref<4x2xf32>, memref<4x2xf32>) outs(%E : memref<4x2xf32>)
  func.return
}
""",
    ),
    (
        "seed:scf_3d_math",
        """\
func.func @transpose3(%a: memref<3x6x5xf32>, %b: memref<5x6x3xf32>, %n: memref<4xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  "scf.parallel"(%c0, %c0, %c0, %c3, %c6, %c5, %c1, %c1, %c1) <{operandSegmentSizes = array<i32: 3, 3, 3, 0>}> ({
  ^bb0(%i: index, %j: index, %k: index):
    %v = memref.load %a[%i, %j, %k] : memref<3x6x5xf32>
    %s = math.absf %v : f32
    %q = math.sqrt %s : f32
    %e = math.tanh %q : f32
    %f = math.fma %e, %v, %q : f32
    memref.store %f, %b[%k, %j, %i] : memref<5x6x3xf32>
    scf.reduce
  }) : (index, index, index, index, index, index, index, index, index) -> ()
  %one = arith.constant 1 : i32
  %x = memref.load %n[%c0] : memref<4xi32>
  %p = arith.cmpi sgt, %x, %one : i32
  %y = scf.if %p -> (i32) {
    scf.yield %one : i32
  } else {
    scf.yield %x : i32
  }
  %w = scf.while (%v = %y) : (i32) -> i32 {
    %more = arith.cmpi slt, %v, %x : i32
    scf.condition(%more) %v : i32
  } do {
  ^bb0(%v2: i32):
    %m = arith.addi %v2, %one : i32
    scf.yield %m : i32
  }
  memref.store %w, %n[%c1] : memref<4xi32>
  func.return
}
""",
    ),
    (
        "seed:grid_3d",
        """\
vyre.program @volume workgroup_size [4, 4, 2] grid [2, 3, 2] {
  vyre.buffer @src binding 0 read_only : ui32[384]
  vyre.buffer @out binding 1 write_only : ui32[384]
  %x = vyre.invocation_id x
  %y = vyre.invocation_id y
  %z = vyre.invocation_id z
  %nx = vyre.const 8 : ui32
  %ny = vyre.const 12 : ui32
  %zy = vyre.mul %z, %ny : ui32
  %row = vyre.add %zy, %y : ui32
  %base = vyre.mul %row, %nx : ui32
  %i = vyre.add %base, %x : ui32
  %g = vyre.num_workgroups z
  %w = vyre.workgroup_id y
  %l = vyre.local_id z
  %v = vyre.load @src[%i] : ui32
  %a = vyre.add %v, %g : ui32
  %b = vyre.mul %a, %w : ui32
  %c = vyre.add %b, %l : ui32
  vyre.store @out[%i] = %c : ui32
}
""",
    ),
    (
        "seed:grid_2d_repetition",
        """\
vyre.program @step workgroup_size [8, 8, 1] grid [2, 2, 1] {
  vyre.buffer @acc binding 0 read_write : f32[256]
  vyre.buffer @rate binding 1 read_only : f32[4]
  %x = vyre.invocation_id x
  %y = vyre.invocation_id y
  %w = vyre.const 16 : ui32
  %row = vyre.mul %y, %w : ui32
  %i = vyre.add %row, %x : ui32
  %t = vyre.repetition
  %four = vyre.const 4 : ui32
  %k = vyre.mod %t, %four : ui32
  %r = vyre.load @rate[%k] : f32
  %v = vyre.load @acc[%i] : f32
  %n = vyre.add %v, %r : f32
  vyre.store @acc[%i] = %n : f32
}
vyre.program @count workgroup_size [64, 1, 1] {
  vyre.buffer @acc binding 0 read_only : f32[256]
  vyre.buffer @steps binding 1 read_write : ui32[256]
  vyre.buffer @seen binding 2 write_only : f32[256]
  %i = vyre.invocation_id x
  %t = vyre.repetition
  %s = vyre.load @steps[%i] : ui32
  %m = vyre.max %s, %t : ui32
  vyre.store @steps[%i] = %m : ui32
  %v = vyre.load @acc[%i] : f32
  vyre.store @seen[%i] = %v : f32
}
""",
    ),
)
