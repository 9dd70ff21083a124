// C = A × B in standard MLIR (scf + memref), run by vyre_xdsl through
// convert-to-vyre: the 2-D scf.parallel becomes one vyre.program with one
// invocation per element of C, on grid axes (j on x, i on y: it reads a row
// of A and a column of B, so it is not elementwise; docs/mlir-input.md), and
// the scf.for reduction runs inside each.
//
//   vyre-run examples/matmul_scf.mlir --backend reference
//   vyre-opt -p convert-to-vyre examples/matmul_scf.mlir
//
// xDSL 0.74 has no custom syntax for scf.parallel: it is written in the
// generic form (bounds, upper bounds, steps and init values, then the body).
func.func @matmul(%A: memref<8x16xf32>, %B: memref<16x4xf32>, %C: memref<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  "scf.parallel"(%c0, %c0, %c8, %c4, %c1, %c1) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
  ^bb0(%i: index, %j: index):
    %sum = scf.for %k = %c0 to %c16 step %c1 iter_args(%acc = %zero) -> (f32) {
      %a = memref.load %A[%i, %k] : memref<8x16xf32>
      %b = memref.load %B[%k, %j] : memref<16x4xf32>
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %p : f32
      scf.yield %s : f32
    }
    memref.store %sum, %C[%i, %j] : memref<8x4xf32>
    scf.reduce
  }) : (index, index, index, index, index, index) -> ()
  func.return
}
