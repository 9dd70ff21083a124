// RUN: vyre-opt %s --split-input-file -p kernel-elide-clears | filecheck %s
// RUN: vyre-opt %s --split-input-file -p kernel-elide-clears,kernel-verify | filecheck %s
// kernel-elide-clears marks `no_clear` exactly the bindings that the first
// kernel to bind them writes in full without reading them.

// Covered: every invocation below the count (16 x 64 >= 1000) stores out[i].
// The read-only input is never marked.
kernel.descriptor @full id "0" entry "main" {
  kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [16, 1, 1] count [@out]
  kernel.binding @x slot 0 group 0 constant read_only : f32[1000]
  kernel.binding @out slot 1 group 0 global write_only : f32[1000]
  %i = kernel.invocation_id x
  %v = kernel.load_constant slot 0 [%i] : f32
  kernel.store_global slot 1 [%i] = %v : f32
}
// CHECK-LABEL: kernel.descriptor @full
// CHECK:       kernel.binding @x slot 0 group 0 constant read_only : f32[1000]
// CHECK-NEXT:  kernel.binding @out slot 1 group 0 global write_only no_clear : f32[1000]

// -----

// Covered: a guard `i < n` with n at least the count; a runtime grid over a
// runtime-sized count buffer with a `buffer_length` guard.
kernel.descriptor @guarded id "0" entry "main" {
  kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [16, 1, 1] count [@out]
  kernel.binding @out slot 0 group 0 global write_only : ui32[1000]
  %i = kernel.invocation_id x
  %n = vyre.const 1000 : ui32
  %c = vyre.lt %i, %n : ui32
  kernel.if %c {
    kernel.store_global slot 0 [%i] = %i : ui32
  }
}
kernel.descriptor @runtime id "0" entry "main" {
  kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid ? count [@y]
  kernel.binding @y slot 0 group 0 global write_only : ui32[?]
  %i = kernel.invocation_id x
  %n = kernel.buffer_length slot 0
  %c = vyre.lt %i, %n : ui32
  kernel.if %c {
    kernel.store_global slot 0 [%i] = %i : ui32
  }
}
// CHECK-LABEL: kernel.descriptor @guarded
// CHECK:       kernel.binding @out slot 0 group 0 global write_only no_clear : ui32[1000]
// CHECK-LABEL: kernel.descriptor @runtime
// CHECK:       kernel.binding @y slot 0 group 0 global write_only no_clear : ui32[?]

// -----

// Not covered: a guard that passes half the invocations, a shifted index, a
// store in a loop, a return that some invocations take first, an output the
// kernel also reads, a grid too small for the count, and a buffer an earlier
// kernel binds (it may read the zeros). A stale mark is removed.
kernel.descriptor @half id "0" entry "main" {
  kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [16, 1, 1] count [@a]
  kernel.binding @a slot 0 group 0 global write_only no_clear : ui32[1000]
  kernel.binding @b slot 1 group 0 global write_only : ui32[1000]
  kernel.binding @c slot 2 group 0 global write_only : ui32[1000]
  kernel.binding @d slot 3 group 0 global write_only : ui32[1000]
  kernel.binding @e slot 4 group 0 global read_write : ui32[1000]
  kernel.binding @__vyre_descriptor_trap_sidecar slot 5 group 0 global read_write atomic trap_sidecar : ui32[8]
  %i = kernel.invocation_id x
  %h = vyre.const 500 : ui32
  %c = vyre.lt %i, %h : ui32
  kernel.if %c {
    kernel.store_global slot 0 [%i] = %i : ui32
  }
  %one = vyre.const 1 : ui32
  %j = vyre.add %i, %one : ui32
  kernel.store_global slot 1 [%j] = %i : ui32
  %z = vyre.const 0 : ui32
  kernel.for %k = %z to %one {
    kernel.store_global slot 2 [%i] = %i : ui32
  }
  %e = kernel.load_global slot 4 [%i] : ui32
  kernel.store_global slot 4 [%i] = %e : ui32
  %three = vyre.const 3 : ui32
  %is3 = vyre.eq %i, %three : ui32
  kernel.if %is3 {
    kernel.return
  }
  kernel.store_global slot 3 [%i] = %i : ui32
}
kernel.descriptor @small id "0" entry "main" {
  kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [15, 1, 1] count [@f]
  kernel.binding @f slot 0 group 0 global write_only : ui32[1000]
  kernel.binding @a slot 1 group 0 global write_only : ui32[1000]
  %i = kernel.invocation_id x
  kernel.store_global slot 0 [%i] = %i : ui32
  kernel.store_global slot 1 [%i] = %i : ui32
}
// CHECK-LABEL: kernel.descriptor @half
// CHECK-NOT:   no_clear
// CHECK-LABEL: kernel.descriptor @small
// CHECK-NOT:   no_clear
// CHECK:       }
