// RUN: %python -m vyre_xdsl.testing.cli_batch \
// RUN:   --run "xdsl-opt %s --split-input-file -p vyre-inline > %t.xdsl" \
// RUN:   --run "vyre-opt %s --split-input-file -p vyre-inline > %t.vyre"
// RUN: filecheck %s < %t.vyre
// RUN: diff %t.vyre %t.xdsl

// A call becomes its callee's body: arguments are the call's operands, the
// yielded value replaces the result. Named locals of the body are renamed per
// call site (the caller's @acc and two inlined bodies never collide); calls
// inside an inlined body are inlined too; the functions are removed.
vyre.func @sum_to(%n: ui32) -> ui32 {
  %zero = vyre.const 0 : ui32
  vyre.let @acc = %zero : ui32
  vyre.loop @k = %zero to %n {
    %a = vyre.var @acc : ui32
    %k = vyre.var @k : ui32
    %s = vyre.add %a, %k : ui32
    vyre.assign @acc = %s : ui32
  }
  %r = vyre.var @acc : ui32
  vyre.yield %r : ui32
}
vyre.func @twice_sum(%n: ui32) -> ui32 {
  %a = vyre.call @sum_to(%n) : ui32
  %r = vyre.add %a, %a : ui32
  vyre.yield %r : ui32
}
vyre.program @p workgroup_size [64, 1, 1] {
  vyre.buffer @out binding 0 read_write : ui32[64]
  %i = vyre.invocation_id x
  vyre.let @acc = %i : ui32
  %x = vyre.call @sum_to(%i) : ui32
  %y = vyre.call @twice_sum(%x) : ui32
  vyre.store @out[%i] = %y : ui32
}

// CHECK-NOT:   vyre.func
// CHECK-LABEL: vyre.program @p
// CHECK:         %i = vyre.invocation_id x
// CHECK-NEXT:    vyre.let @acc = %i : ui32
// CHECK-NEXT:    %[[Z0:.*]] = vyre.const 0 : ui32
// CHECK-NEXT:    vyre.let @[[ACC0:__vyre_inline[0-9]+_acc]] = %[[Z0]] : ui32
// CHECK-NEXT:    vyre.loop @[[K0:__vyre_inline[0-9]+_k]] = %[[Z0]] to %i {
// CHECK-NEXT:      %{{.*}} = vyre.var @[[ACC0]] : ui32
// CHECK-NEXT:      %{{.*}} = vyre.var @[[K0]] : ui32
// CHECK:           vyre.assign @[[ACC0]] = %{{.*}} : ui32
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[X:.*]] = vyre.var @[[ACC0]] : ui32
// CHECK-NEXT:    %[[Z1:.*]] = vyre.const 0 : ui32
// CHECK-NEXT:    vyre.let @[[ACC1:__vyre_inline[0-9]+_acc]] = %[[Z1]] : ui32
// CHECK-NEXT:    vyre.loop @{{__vyre_inline[0-9]+_k}} = %[[Z1]] to %[[X]] {
// CHECK:           vyre.assign @[[ACC1]] = %{{.*}} : ui32
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[S:.*]] = vyre.var @[[ACC1]] : ui32
// CHECK-NEXT:    %[[Y:.*]] = vyre.add %[[S]], %[[S]] : ui32
// CHECK-NEXT:    vyre.store @out[%i] = %[[Y]] : ui32
// CHECK-NEXT:  }
// CHECK-NOT:   vyre.func

// -----

// A pure function whose result is unused: inlining leaves pure ops that
// canonicalization may then remove; a module without calls is unchanged.
vyre.func @unused(%a: f32) -> f32 {
  vyre.yield %a : f32
}
vyre.program @q workgroup_size [1, 1, 1] {
  vyre.buffer @o binding 0 write_only : f32[1]
  %c = vyre.const 1.5 : f32
  %z = vyre.const 0 : ui32
  %r = vyre.call @unused(%c) : f32
  vyre.store @o[%z] = %r : f32
}

// CHECK-NOT:   vyre.func
// CHECK-LABEL: vyre.program @q
// CHECK:         %c = vyre.const 1.5 : f32
// CHECK-NEXT:    %z = vyre.const 0 : ui32
// CHECK-NEXT:    vyre.store @o[%z] = %c : f32
