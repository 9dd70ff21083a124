// RUN: vyre-opt %s --split-input-file -p convert-to-vyre | filecheck %s

// Multi-dimensional indices are row-major; memref.dim of a static dimension is
// a constant, of the runtime-sized one the buffer length over the others.
func.func @rowmajor(%a: memref<?x3x5xf32>, %n: memref<1xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %v = memref.load %a[%c2, %c1, %c0] : memref<?x3x5xf32>
  memref.store %v, %a[%c0, %c0, %c1] : memref<?x3x5xf32>
  %d = memref.dim %a, %c0 : memref<?x3x5xf32>
  %di = arith.index_cast %d : index to i32
  memref.store %di, %n[%c0] : memref<1xi32>
  func.return
}
// CHECK:      vyre.buffer @a binding 0 read_write : f32[?]
// CHECK-NEXT: vyre.buffer @n binding 1 read_write : si32[1]
// CHECK-DAG:  %[[C0:.*]] = vyre.const 0 : ui32
// CHECK-DAG:  %[[C1:.*]] = vyre.const 1 : ui32
// CHECK-DAG:  %[[C2:.*]] = vyre.const 2 : ui32
// CHECK:      %[[LEN:.*]] = vyre.buf_len @a
// CHECK-NEXT: %[[FIFTEEN:.*]] = vyre.const 15 : ui32
// CHECK-NEXT: %[[D:.*]] = vyre.div %[[LEN]], %[[FIFTEEN]] : ui32
// CHECK-NEXT: %[[DI:.*]] = vyre.bitcast %[[D]] : ui32 to si32
// CHECK:      vyre.if
// CHECK-NEXT:   %[[THREE:.*]] = vyre.const 3 : ui32
// CHECK-NEXT:   %[[R0:.*]] = vyre.mul %[[C2]], %[[THREE]] : ui32
// CHECK-NEXT:   %[[R1:.*]] = vyre.add %[[R0]], %[[C1]] : ui32
// CHECK-NEXT:   %[[FIVE:.*]] = vyre.const 5 : ui32
// CHECK-NEXT:   %[[R2:.*]] = vyre.mul %[[R1]], %[[FIVE]] : ui32
// CHECK-NEXT:   %[[R3:.*]] = vyre.add %[[R2]], %[[C0]] : ui32
// CHECK-NEXT:   %[[V:.*]] = vyre.load @a[%[[R3]]] : f32
// CHECK:        vyre.store @a[%{{.*}}] = %[[V]] : f32
// CHECK-NEXT:   vyre.store @n[%[[C0]]] = %[[DI]] : si32
