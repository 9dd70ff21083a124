// A 3-point stencil in standard MLIR (scf + memref), then a second parallel
// loop that reads its result: two vyre.programs after convert-to-vyre, which
// `--fuse` merges like hand-written programs.
//
//   vyre-run examples/stencil_scf.mlir --backend reference
//   vyre-opt --fuse examples/stencil_scf.mlir
//
// The runtime-sized memrefs (`?`) take their length from the host arrays;
// the loop bounds come from memref.dim of the memref each loop writes, so
// each invocation runs one iteration (see docs/mlir-input.md).
func.func @smooth(%x: memref<?xf32>, %y: memref<?xf32>, %z: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %third = arith.constant 0.333333343 : f32
  %n = memref.dim %y, %c0 : memref<?xf32>
  %last = arith.subi %n, %c1 : index
  "scf.parallel"(%c1, %last, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %im = arith.subi %i, %c1 : index
    %ip = arith.addi %i, %c1 : index
    %l = memref.load %x[%im] : memref<?xf32>
    %m = memref.load %x[%i] : memref<?xf32>
    %r = memref.load %x[%ip] : memref<?xf32>
    %s1 = arith.addf %l, %m : f32
    %s2 = arith.addf %s1, %r : f32
    %avg = arith.mulf %s2, %third : f32
    memref.store %avg, %y[%i] : memref<?xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  %nz = memref.dim %z, %c0 : memref<?xf32>
  "scf.parallel"(%c0, %nz, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %v = memref.load %y[%i] : memref<?xf32>
    %d = arith.mulf %v, %v : f32
    memref.store %d, %z[%i] : memref<?xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}
