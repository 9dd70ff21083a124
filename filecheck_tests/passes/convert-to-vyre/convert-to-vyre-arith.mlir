// RUN: vyre-opt %s --split-input-file -p convert-to-vyre | filecheck %s

// Signless integers are signed vyre integers; the unsigned arith ops read the
// same bits as unsigned (bitcast), index is ui32.
func.func @ints(%a: memref<4xi32>) {
  %c0 = arith.constant 0 : index
  %x = memref.load %a[%c0] : memref<4xi32>
  %q = arith.divui %x, %x : i32
  %c = arith.cmpi ult, %q, %x : i32
  %s = arith.select %c, %q, %x : i32
  %e = arith.extui %c : i1 to i32
  %t = arith.addi %s, %e : i32
  memref.store %t, %a[%c0] : memref<4xi32>
  func.return
}
// CHECK:      %[[X:.*]] = vyre.load @a[%{{.*}}] : si32
// CHECK-NEXT: %[[XU:.*]] = vyre.bitcast %[[X]] : si32 to ui32
// CHECK-NEXT: %[[XU2:.*]] = vyre.bitcast %[[X]] : si32 to ui32
// CHECK-NEXT: %[[QU:.*]] = vyre.div %[[XU]], %[[XU2]] : ui32
// CHECK-NEXT: %[[Q:.*]] = vyre.bitcast %[[QU]] : ui32 to si32
// CHECK-NEXT: %[[QU3:.*]] = vyre.bitcast %[[Q]] : si32 to ui32
// CHECK-NEXT: %[[XU3:.*]] = vyre.bitcast %[[X]] : si32 to ui32
// CHECK-NEXT: %[[C:.*]] = vyre.lt %[[QU3]], %[[XU3]] : ui32
// CHECK-NEXT: %[[S:.*]] = vyre.select %[[C]], %[[Q]], %[[X]] : si32
// CHECK-NEXT: %[[E:.*]] = vyre.cast %[[C]] : i1 to si32
// CHECK-NEXT: %[[T:.*]] = vyre.add %[[S]], %[[E]] : si32
// CHECK-NEXT: vyre.store @a[%{{.*}}] = %[[T]] : si32

// -----

// Float compares: ordered predicates are vyre's (false on NaN); unordered
// ones are the negated opposite; `ord`/`uno` test for NaN.
func.func @floats(%a: memref<4xf32>, %b: memref<4xi1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %x = memref.load %a[%c0] : memref<4xf32>
  %y = memref.load %a[%c1] : memref<4xf32>
  %lt = arith.cmpf olt, %x, %y : f32
  %uge = arith.cmpf uge, %x, %y : f32
  %uno = arith.cmpf uno, %x, %y : f32
  memref.store %lt, %b[%c0] : memref<4xi1>
  memref.store %uge, %b[%c1] : memref<4xi1>
  memref.store %uno, %b[%c2] : memref<4xi1>
  func.return
}
// CHECK:      %[[X:.*]] = vyre.load @a[%{{.*}}] : f32
// CHECK:      %[[Y:.*]] = vyre.load @a[%{{.*}}] : f32
// CHECK-NEXT: %[[LT:.*]] = vyre.lt %[[X]], %[[Y]] : f32
// CHECK-NEXT: %[[L2:.*]] = vyre.lt %[[X]], %[[Y]] : f32
// CHECK-NEXT: %[[UGE:.*]] = vyre.not %[[L2]] : i1
// CHECK-NEXT: %[[NX:.*]] = vyre.is_nan %[[X]] : f32
// CHECK-NEXT: %[[NY:.*]] = vyre.is_nan %[[Y]] : f32
// CHECK-NEXT: %[[UNO:.*]] = vyre.or %[[NX]], %[[NY]] : i1
// CHECK:      vyre.store @b[%{{.*}}] = %[[LT]] : i1
// CHECK:      vyre.store @b[%{{.*}}] = %[[UGE]] : i1
// CHECK:      vyre.store @b[%{{.*}}] = %[[UNO]] : i1

// -----

// index_cast to index traps on a value outside 0 … 2^32 - 1; index addition
// traps where it would wrap.
func.func @index(%a: memref<4xi32>) {
  %c0 = arith.constant 0 : index
  %x = memref.load %a[%c0] : memref<4xi32>
  %i = arith.index_cast %x : i32 to index
  %j = arith.addi %i, %i : index
  %v = memref.load %a[%j] : memref<4xi32>
  memref.store %v, %a[%c0] : memref<4xi32>
  func.return
}
// CHECK:      %[[X:.*]] = vyre.load @a[%{{.*}}] : si32
// CHECK-NEXT: %[[Z:.*]] = vyre.const 0 : si32
// CHECK-NEXT: %[[NEG:.*]] = vyre.lt %[[X]], %[[Z]] : si32
// CHECK-NEXT: %[[XU:.*]] = vyre.bitcast %[[X]] : si32 to ui32
// CHECK-NEXT: vyre.if %[[NEG]] {
// CHECK-NEXT:   vyre.trap %[[XU]] "index_cast"
// CHECK-NEXT: }
// CHECK-NEXT: %[[J:.*]] = vyre.add %[[XU]], %[[XU]] : ui32
// CHECK-NEXT: %[[WRAP:.*]] = vyre.lt %[[J]], %[[XU]] : ui32
// CHECK-NEXT: vyre.if %[[WRAP]] {
// CHECK-NEXT:   vyre.trap %[[J]] "index"
// CHECK-NEXT: }
// CHECK-NEXT: vyre.load @a[%[[J]]] : si32

// -----

// Index arithmetic on a loop's induction variable is checked only where its
// range allows a result outside 0 … 2^32 - 1: %i runs from 1 to 6, so %i - 1,
// %i + 1 and %i * 2 need no check, and %i - 2 keeps its trap (at %i = 1).
func.func @ranges(%a: memref<8xi32>, %b: memref<8xi32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c7 = arith.constant 7 : index
  scf.for %i = %c1 to %c7 step %c1 {
    %im = arith.subi %i, %c1 : index
    %ip = arith.addi %i, %c1 : index
    %i2 = arith.muli %i, %c2 : index
    %imm = arith.subi %i, %c2 : index
    %v = memref.load %a[%im] : memref<8xi32>
    %w = memref.load %a[%ip] : memref<8xi32>
    %x = memref.load %a[%i2] : memref<8xi32>
    %y = memref.load %a[%imm] : memref<8xi32>
    %s = arith.addi %v, %w : i32
    %t = arith.addi %x, %y : i32
    %u = arith.addi %s, %t : i32
    memref.store %u, %b[%i] : memref<8xi32>
  }
  func.return
}
// CHECK:      vyre.loop @k{{[0-9]+}} = %[[ONE:.*]] to %{{.*}} {
// CHECK-NEXT:   %[[I:.*]] = vyre.var @k{{[0-9]+}} : ui32
// CHECK-NEXT:   %[[IM:.*]] = vyre.sub %[[I]], %[[ONE]] : ui32
// CHECK-NEXT:   %[[IP:.*]] = vyre.add %[[I]], %[[ONE]] : ui32
// CHECK-NEXT:   %[[I2:.*]] = vyre.mul %[[I]], %[[TWO:.*]] : ui32
// CHECK-NEXT:   %[[IMM:.*]] = vyre.sub %[[I]], %[[TWO]] : ui32
// CHECK-NEXT:   %[[BAD:.*]] = vyre.gt %[[TWO]], %[[I]] : ui32
// CHECK-NEXT:   vyre.if %[[BAD]] {
// CHECK-NEXT:     vyre.trap %[[IMM]] "index"
// CHECK-NEXT:   }
// CHECK-NEXT:   vyre.load @a[%[[IM]]] : si32
// CHECK-NOT:    vyre.trap
// CHECK:        vyre.store @b[%[[I]]]
