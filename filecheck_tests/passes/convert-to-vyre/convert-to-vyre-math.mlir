// RUN: vyre-opt %s -p convert-to-vyre | filecheck %s

// math ops with a vyre op of the same meaning map one to one; math.round
// (ties away from zero) is composed from trunc, since vyre.round ties to even.
func.func @m(%a: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %x = memref.load %a[%c0] : memref<8xf32>
  %s = math.sqrt %x : f32
  %r = math.rsqrt %s : f32
  %e = math.exp %r : f32
  %t = math.tanh %e : f32
  %b = math.absf %t : f32
  %f = math.fma %b, %x, %s : f32
  %o = math.round %f : f32
  memref.store %o, %a[%c0] : memref<8xf32>
  func.return
}
// CHECK:      %[[X:.*]] = vyre.load @a[%{{.*}}] : f32
// CHECK-NEXT: %[[S:.*]] = vyre.sqrt %[[X]] : f32
// CHECK-NEXT: %[[R:.*]] = vyre.inverse_sqrt %[[S]] : f32
// CHECK-NEXT: %[[E:.*]] = vyre.exp %[[R]] : f32
// CHECK-NEXT: %[[T:.*]] = vyre.tanh %[[E]] : f32
// CHECK-NEXT: %[[B:.*]] = vyre.abs %[[T]] : f32
// CHECK-NEXT: %[[F:.*]] = vyre.fma %[[B]], %[[X]], %[[S]] : f32
// CHECK-NEXT: %[[TR:.*]] = vyre.trunc %[[F]] : f32
// CHECK-NEXT: %[[D:.*]] = vyre.sub %[[F]], %[[TR]] : f32
// CHECK-NEXT: %[[AD:.*]] = vyre.abs %[[D]] : f32
// CHECK-NEXT: %[[HALF:.*]] = vyre.const 0.5 : f32
// CHECK-NEXT: %[[UP:.*]] = vyre.ge %[[AD]], %[[HALF]] : f32
// CHECK-NEXT: %[[SG:.*]] = vyre.sign %[[F]] : f32
// CHECK-NEXT: %[[AWAY:.*]] = vyre.add %[[TR]], %[[SG]] : f32
// CHECK-NEXT: %[[O:.*]] = vyre.select %[[UP]], %[[AWAY]], %[[TR]] : f32
// CHECK-NEXT: vyre.store @a[%{{.*}}] = %[[O]] : f32
