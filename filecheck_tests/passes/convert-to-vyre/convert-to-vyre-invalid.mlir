// What convert-to-vyre refuses is a located error naming the op and the reason.
// RUN: not vyre-opt %s --split-input-file -p convert-to-vyre 2>&1 | filecheck %s

func.func @f(%a: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %a[%c0] : memref<4xf32>
  // CHECK: convert-to-vyre-invalid.mlir:[[# @LINE + 1]]:3: error: 'math.erf' is not supported; convert-to-vyre supports func (func, return), arith
  %r = math.erf %v : f32
  memref.store %r, %a[%c0] : memref<4xf32>
  func.return
}

// -----

// CHECK: convert-to-vyre-invalid.mlir:[[# @LINE + 1]]:1: error: argument %a (#0) cannot be converted: memref layout strided<[1, 4]> is not the identity
func.func @g(%a: memref<4x4xf32, strided<[1, 4]>>) {
  func.return
}

// -----

func.func @h(%a: memref<4xf32>) {
  // CHECK: convert-to-vyre-invalid.mlir:[[# @LINE + 1]]:3: error: index constant 4294967296 does not fit in 32 bits
  %c = arith.constant 4294967296 : index
  %v = arith.constant 1.0 : f32
  memref.store %v, %a[%c] : memref<4xf32>
  func.return
}
