// RUN: %python -m vyre_xdsl.testing.cli_batch \
// RUN:   --run "vyre-opt %s --split-input-file -p kernel-elide-clears > %t.elided" \
// RUN:   --run "vyre-opt %s --split-input-file -p kernel-elide-clears,kernel-verify > %t.verified"
// RUN: filecheck %s < %t.elided
// RUN: filecheck %s < %t.verified
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

// -----

// Covered, tiles: each workgroup of 64 stores a tile of 128 (offsets 0 and 64;
// 8 x 128 >= 1000), over a logical grid, and over an explicit 2-D grid
// [4, 2, 1] whose workgroup index is x + y * 4 (each kernel its own output:
// only the first kernel to bind a buffer is marked).
kernel.descriptor @tiles id "0" entry "main" {
  kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [8, 1, 1] count [@out]
  kernel.binding @out slot 0 group 0 global write_only : f32[1000]
  %l = kernel.local_id x
  %g = kernel.workgroup_id x
  %t = vyre.const 128 : ui32
  %s = vyre.mul %g, %t : ui32
  %a = vyre.add %s, %l : ui32
  %c = vyre.const 64 : ui32
  %b = vyre.add %a, %c : ui32
  %v = vyre.const 1.0 : f32
  kernel.store_global slot 0 [%a] = %v : f32
  kernel.store_global slot 0 [%b] = %v : f32
}
kernel.descriptor @tiles2d id "0" entry "main" {
  kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid explicit [4, 2, 1] count [@out2]
  kernel.binding @out2 slot 0 group 0 global write_only : f32[1000]
  %l = kernel.local_id x
  %x = kernel.workgroup_id x
  %y = kernel.workgroup_id y
  %gx = vyre.const 4 : ui32
  %yy = vyre.mul %y, %gx : ui32
  %g = vyre.add %x, %yy : ui32
  %t = vyre.const 128 : ui32
  %s = vyre.mul %g, %t : ui32
  %a = vyre.add %s, %l : ui32
  %c = vyre.const 64 : ui32
  %b = vyre.add %a, %c : ui32
  %v = vyre.const 1.0 : f32
  kernel.store_global slot 0 [%a] = %v : f32
  kernel.store_global slot 0 [%b] = %v : f32
}
// CHECK-LABEL: kernel.descriptor @tiles
// CHECK:       kernel.binding @out slot 0 group 0 global write_only no_clear : f32[1000]
// CHECK-LABEL: kernel.descriptor @tiles2d
// CHECK:       kernel.binding @out2 slot 0 group 0 global write_only no_clear : f32[1000]

// -----

// Not covered, tiles: a gap (tiles of 130, stores at 0 and 64 miss 128 and
// 129), a y multiplier that is not the grid's x extent, and too few tiles
// (7 x 128 < 1000).
kernel.descriptor @gap id "0" entry "main" {
  kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [8, 1, 1] count [@a]
  kernel.binding @a slot 0 group 0 global write_only : f32[1000]
  %l = kernel.local_id x
  %g = kernel.workgroup_id x
  %t = vyre.const 130 : ui32
  %s = vyre.mul %g, %t : ui32
  %a = vyre.add %s, %l : ui32
  %c = vyre.const 64 : ui32
  %b = vyre.add %a, %c : ui32
  %v = vyre.const 1.0 : f32
  kernel.store_global slot 0 [%a] = %v : f32
  kernel.store_global slot 0 [%b] = %v : f32
}
kernel.descriptor @skewed id "0" entry "main" {
  kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid explicit [4, 2, 1] count [@b]
  kernel.binding @b slot 0 group 0 global write_only : f32[1000]
  %l = kernel.local_id x
  %x = kernel.workgroup_id x
  %y = kernel.workgroup_id y
  %gx = vyre.const 3 : ui32
  %yy = vyre.mul %y, %gx : ui32
  %g = vyre.add %x, %yy : ui32
  %t = vyre.const 128 : ui32
  %s = vyre.mul %g, %t : ui32
  %a = vyre.add %s, %l : ui32
  %c = vyre.const 64 : ui32
  %b = vyre.add %a, %c : ui32
  %v = vyre.const 1.0 : f32
  kernel.store_global slot 0 [%a] = %v : f32
  kernel.store_global slot 0 [%b] = %v : f32
}
kernel.descriptor @few id "0" entry "main" {
  kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [7, 1, 1] count [@c]
  kernel.binding @c slot 0 group 0 global write_only : f32[1000]
  %l = kernel.local_id x
  %g = kernel.workgroup_id x
  %t = vyre.const 128 : ui32
  %s = vyre.mul %g, %t : ui32
  %a = vyre.add %s, %l : ui32
  %c = vyre.const 64 : ui32
  %b = vyre.add %a, %c : ui32
  %v = vyre.const 1.0 : f32
  kernel.store_global slot 0 [%a] = %v : f32
  kernel.store_global slot 0 [%b] = %v : f32
}
// CHECK-LABEL: kernel.descriptor @gap
// CHECK-NOT:   no_clear
// CHECK-LABEL: kernel.descriptor @skewed
// CHECK-NOT:   no_clear
// CHECK-LABEL: kernel.descriptor @few
// CHECK-NOT:   no_clear
// CHECK:       }
