// RUN: %python -m vyre_xdsl.testing.cli_batch \
// RUN:   --run "vyre-opt %s --split-input-file -p kernel-vectorize > %t.once" \
// RUN:   --run "vyre-opt %s --split-input-file -p kernel-vectorize,kernel-verify > %t.verified" \
// RUN:   --run "vyre-opt %s --split-input-file -p kernel-vectorize,kernel-vectorize > %t.twice"
// RUN: filecheck %s < %t.once
// RUN: filecheck %s < %t.verified
// RUN: filecheck %s < %t.twice
// kernel-vectorize records the vector form of each elementwise kernel on its
// dispatch: `elements_per_invocation` W, the logical grid as `logical_grid`,
// and `grid` becomes the launch grid of ceil(n / W) invocations. Running it
// twice changes nothing more; kernel-verify accepts the result.

// f32 over 1024 elements, 64 per workgroup: 16 logical workgroups, vec4:
// 256 invocations, 4 workgroups.
kernel.descriptor @axpy id "0" entry "main" {
  kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [16, 1, 1] count [@y]
  kernel.binding @x slot 0 group 0 constant read_only : f32[1024]
  kernel.binding @y slot 1 group 0 global read_write : f32[1024]
  %i = kernel.invocation_id x
  %a = kernel.load_constant slot 0 [%i] : f32
  %b = kernel.load_global slot 1 [%i] : f32
  %s = vyre.add %a, %b : f32
  kernel.store_global slot 1 [%i] = %s : f32
}
// CHECK-LABEL: kernel.descriptor @axpy
// CHECK-NEXT:  kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [4, 1, 1] count [@y] elements_per_invocation 4 logical_grid [16, 1, 1]

// -----

// 8-bit elements: 16 per invocation (one vec4<u32> of bytes), 1024 / 16 = 64
// invocations, one workgroup. A load at i + 1 of a buffer the kernel never
// stores to is elementwise too.
kernel.descriptor @bytes id "0" entry "main" {
  kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [16, 1, 1] count [@y]
  kernel.binding @x slot 0 group 0 constant read_only : ui8[1024]
  kernel.binding @y slot 1 group 0 global write_only : ui8[1024]
  %i = kernel.invocation_id x
  %one = vyre.const 1 : ui32
  %j = vyre.add %i, %one : ui32
  %a = kernel.load_constant slot 0 [%j] : ui8
  kernel.store_global slot 1 [%i] = %a : ui8
}
// CHECK-LABEL: kernel.descriptor @bytes
// CHECK-NEXT:  kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [1, 1, 1] count [@y] elements_per_invocation 16 logical_grid [16, 1, 1]

// -----

// A part cut down to its guarded arm's 2 workgroups (of 16): the vector form
// covers the 128 elements of its logical grid, 32 invocations.
kernel.descriptor @part id "0" entry "main" {
  kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [2, 1, 1] count [@y]
  kernel.binding @y slot 0 group 0 global write_only : f32[1024]
  %i = kernel.invocation_id x
  %v = vyre.const 1.0 : f32
  kernel.store_global slot 0 [%i] = %v : f32
}
// CHECK-LABEL: kernel.descriptor @part
// CHECK-NEXT:  kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [1, 1, 1] count [@y] elements_per_invocation 4 logical_grid [2, 1, 1]

// -----

// Left scalar (no record): a count that is no multiple of 4; a runtime-sized
// count; an atomic; a store at a shifted index; a load inside an `if`; a
// workgroup id; an explicit grid; a kernel widened from [1, 1, 1].
kernel.descriptor @odd id "0" entry "main" {
  kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [16, 1, 1] count [@y]
  kernel.binding @y slot 0 group 0 global write_only : f32[1001]
  %i = kernel.invocation_id x
  %v = vyre.const 1.0 : f32
  kernel.store_global slot 0 [%i] = %v : f32
}
kernel.descriptor @runtime id "0" entry "main" {
  kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid ? count [@y]
  kernel.binding @y slot 0 group 0 global write_only : f32[?]
  %i = kernel.invocation_id x
  %v = vyre.const 1.0 : f32
  kernel.store_global slot 0 [%i] = %v : f32
}
kernel.descriptor @atomic id "0" entry "main" {
  kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [16, 1, 1] count [@y]
  kernel.binding @y slot 0 group 0 global read_write atomic : ui32[1024]
  %i = kernel.invocation_id x
  %one = vyre.const 1 : ui32
  %old = kernel.atomic add slot 0 [%i], %one : ui32
}
kernel.descriptor @shifted id "0" entry "main" {
  kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [16, 1, 1] count [@y]
  kernel.binding @y slot 0 group 0 global write_only : f32[1024]
  %i = kernel.invocation_id x
  %one = vyre.const 1 : ui32
  %j = vyre.add %i, %one : ui32
  %v = vyre.const 1.0 : f32
  kernel.store_global slot 0 [%j] = %v : f32
}
kernel.descriptor @nested id "0" entry "main" {
  kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [16, 1, 1] count [@y]
  kernel.binding @y slot 0 group 0 global write_only : f32[1024]
  %i = kernel.invocation_id x
  %c = vyre.const true : i1
  kernel.if %c {
    %v = vyre.const 1.0 : f32
    kernel.store_global slot 0 [%i] = %v : f32
  }
}
kernel.descriptor @group id "0" entry "main" {
  kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [16, 1, 1] count [@y]
  kernel.binding @y slot 0 group 0 global write_only : ui32[1024]
  %i = kernel.invocation_id x
  %g = kernel.workgroup_id x
  kernel.store_global slot 0 [%i] = %g : ui32
}
kernel.descriptor @explicit id "0" entry "main" {
  kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid explicit [16, 1, 1] count [@y]
  kernel.binding @y slot 0 group 0 global write_only : f32[1024]
  %i = kernel.invocation_id x
  %v = vyre.const 1.0 : f32
  kernel.store_global slot 0 [%i] = %v : f32
}
kernel.descriptor @widened id "0" entry "main" {
  kernel.dispatch workgroup_size [128, 1, 1] program_workgroup_size [1, 1, 1] grid [8, 1, 1] count [@y] declared_invocations 1024
  kernel.binding @y slot 0 group 0 global write_only : f32[1024]
  %i = kernel.invocation_id x
  %v = vyre.const 1.0 : f32
  kernel.store_global slot 0 [%i] = %v : f32
}
// CHECK-LABEL: kernel.descriptor @odd
// CHECK-NEXT:  kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [16, 1, 1] count [@y]{{$}}
// CHECK-LABEL: kernel.descriptor @runtime
// CHECK-NEXT:  kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid ? count [@y]{{$}}
// CHECK-LABEL: kernel.descriptor @atomic
// CHECK-NEXT:  kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [16, 1, 1] count [@y]{{$}}
// CHECK-LABEL: kernel.descriptor @shifted
// CHECK-NEXT:  kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [16, 1, 1] count [@y]{{$}}
// CHECK-LABEL: kernel.descriptor @nested
// CHECK-NEXT:  kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [16, 1, 1] count [@y]{{$}}
// CHECK-LABEL: kernel.descriptor @group
// CHECK-NEXT:  kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [16, 1, 1] count [@y]{{$}}
// CHECK-LABEL: kernel.descriptor @explicit
// CHECK-NEXT:  kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid explicit [16, 1, 1] count [@y]{{$}}
// CHECK-LABEL: kernel.descriptor @widened
// CHECK-NEXT:  kernel.dispatch workgroup_size [128, 1, 1] program_workgroup_size [1, 1, 1] grid [8, 1, 1] count [@y] declared_invocations 1024{{$}}
