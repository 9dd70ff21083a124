// RUN: VYRE_ROUNDTRIP
// RUN: VYRE_GENERIC_ROUNDTRIP
// Every kernel op in its custom syntax; prints identically, also after a trip through the generic form.

kernel.descriptor @tour id "00ff" entry "main" attributes {source = "tour", part = 1 : i64} {
  kernel.dispatch workgroup_size [128, 1, 1] program_workgroup_size [1, 1, 1] grid ? count [@g, @c]
  kernel.binding @k slot 0 group 0 constant read_only : f32[16]
  kernel.binding @g slot 1 group 0 global read_write : f32[?]
  kernel.binding @w slot 2 group 0 global write_only no_clear : i1[8]
  kernel.binding @u slot 3 group 1 uniform read_only : ui32[4]
  kernel.binding @c slot 4 group 0 global read_write atomic : ui32[2]
  kernel.binding @t slot 16777216 shared read_write : f32[64]
  kernel.binding @__vyre_descriptor_trap_sidecar slot 5 group 0 global read_write atomic trap_sidecar : ui32[8]
  %i = kernel.invocation_id x
  %wy = kernel.workgroup_id y
  %lz = kernel.local_id z
  %a = kernel.load_constant slot 0 [%i] : f32
  %b = kernel.load_global slot 1 [%i] : f32
  %u = kernel.load_uniform slot 3 [%i] : ui32
  %s = kernel.load_shared slot 16777216 [%lz] : f32
  %n = kernel.buffer_length slot 1
  kernel.store_global slot 1 [%i] = %a : f32
  kernel.store_shared slot 16777216 [%lz] = %b : f32
  %old = kernel.atomic add slot 4 [%u], %u : ui32
  %prev = kernel.atomic compare_exchange slot 4 [%u], %old, %u : ui32
  kernel.local @acc = %a : f32
  %zero = vyre.const 0 : ui32
  kernel.for %k = %zero to %n {
    %r = kernel.local_load @acc : f32
    %q = vyre.add %r, %s : f32
    kernel.local_store @acc = %q : f32
    %kk = vyre.add %k, %wy : ui32
  }
  %c = vyre.lt %a, %b : f32
  kernel.if %c {
    kernel.return
  } else {
    kernel.trap %zero "oops"
  }
  kernel.block {
    kernel.barrier
  }
  kernel.region "gen" {
    kernel.barrier acq_rel
  }
}

// CHECK:      kernel.descriptor @tour id "00ff" entry "main" attributes {source = "tour", part = 1 : i64} {
// CHECK-NEXT:   kernel.dispatch workgroup_size [128, 1, 1] program_workgroup_size [1, 1, 1] grid ? count [@g, @c]
// CHECK-NEXT:   kernel.binding @k slot 0 group 0 constant read_only : f32[16]
// CHECK-NEXT:   kernel.binding @g slot 1 group 0 global read_write : f32[?]
// CHECK-NEXT:   kernel.binding @w slot 2 group 0 global write_only no_clear : i1[8]
// CHECK-NEXT:   kernel.binding @u slot 3 group 1 uniform read_only : ui32[4]
// CHECK-NEXT:   kernel.binding @c slot 4 group 0 global read_write atomic : ui32[2]
// CHECK-NEXT:   kernel.binding @t slot 16777216 shared read_write : f32[64]
// CHECK-NEXT:   kernel.binding @__vyre_descriptor_trap_sidecar slot 5 group 0 global read_write atomic trap_sidecar : ui32[8]
// CHECK-NEXT:   %i = kernel.invocation_id x
// CHECK-NEXT:   %wy = kernel.workgroup_id y
// CHECK-NEXT:   %lz = kernel.local_id z
// CHECK-NEXT:   %a = kernel.load_constant slot 0 [%i] : f32
// CHECK-NEXT:   %b = kernel.load_global slot 1 [%i] : f32
// CHECK-NEXT:   %u = kernel.load_uniform slot 3 [%i] : ui32
// CHECK-NEXT:   %s = kernel.load_shared slot 16777216 [%lz] : f32
// CHECK-NEXT:   %n = kernel.buffer_length slot 1
// CHECK-NEXT:   kernel.store_global slot 1 [%i] = %a : f32
// CHECK-NEXT:   kernel.store_shared slot 16777216 [%lz] = %b : f32
// CHECK-NEXT:   %old = kernel.atomic add slot 4 [%u], %u : ui32
// CHECK-NEXT:   %prev = kernel.atomic compare_exchange slot 4 [%u], %old, %u : ui32
// CHECK-NEXT:   kernel.local @acc = %a : f32
// CHECK-NEXT:   %zero = vyre.const 0 : ui32
// CHECK-NEXT:   kernel.for %k = %zero to %n {
// CHECK-NEXT:     %r = kernel.local_load @acc : f32
// CHECK-NEXT:     %q = vyre.add %r, %s : f32
// CHECK-NEXT:     kernel.local_store @acc = %q : f32
// CHECK-NEXT:     %kk = vyre.add %k, %wy : ui32
// CHECK-NEXT:   }
// CHECK-NEXT:   %c = vyre.lt %a, %b : f32
// CHECK-NEXT:   kernel.if %c {
// CHECK-NEXT:     kernel.return
// CHECK-NEXT:   } else {
// CHECK-NEXT:     kernel.trap %zero "oops"
// CHECK-NEXT:   }
// CHECK-NEXT:   kernel.block {
// CHECK-NEXT:     kernel.barrier
// CHECK-NEXT:   }
// CHECK-NEXT:   kernel.region "gen" {
// CHECK-NEXT:     kernel.barrier acq_rel
// CHECK-NEXT:   }
// CHECK-NEXT: }
