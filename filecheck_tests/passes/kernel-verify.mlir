// RUN: %python -m vyre_xdsl.testing.cli_batch \
// RUN:   --run "vyre-opt %s --split-input-file --verify-diagnostics -p kernel-verify > %t.default" \
// RUN:   --run "vyre-opt %s --split-input-file --verify-diagnostics -p 'kernel-verify{max-storage-buffers=2 max-invocations=1024 max-workgroup-size-x=1024}' > %t.limits"
// RUN: filecheck %s < %t.default
// RUN: filecheck %s --check-prefix=LIMITS < %t.limits
// The invalid suite of kernel-verify: every violation of a descriptor is
// reported at once, each on its own op.

// Slots: duplicates, host slots in the workgroup range and the reverse, the
// reserved sidecar name on a user buffer.
kernel.descriptor @slots id "0" entry "main" {
  kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [1, 1, 1] count []
  kernel.binding @a slot 0 group 0 global read_write : f32[64]
// CHECK: kernel-verify.mlir:[[# @LINE + 1]]:3: error: duplicate binding slot 0: @b and @a
  kernel.binding @b slot 0 group 0 global read_write : f32[64]
// CHECK: kernel-verify.mlir:[[# @LINE + 1]]:3: error: host binding @c (constant) at slot 16777216 is in the workgroup range (>= 2^24 = 16777216)
  kernel.binding @c slot 16777216 group 0 constant read_only : f32[64]
// CHECK: kernel-verify.mlir:[[# @LINE + 1]]:3: error: shared binding @t at slot 5 is in the host range (< 2^24 = 16777216)
  kernel.binding @t slot 5 shared read_write : f32[64]
// CHECK: kernel-verify.mlir:[[# @LINE + 1]]:3: error: buffer name @__vyre_descriptor_trap_sidecar is reserved for the trap sidecar. Fix: rename the buffer
  kernel.binding @__vyre_descriptor_trap_sidecar slot 7 group 0 global read_write : ui32[4]
}

// -----

// Dispatch: zero extents, a workgroup over the target profile, count buffers
// that name nothing.
kernel.descriptor @dispatch id "0" entry "main" {
// CHECK: kernel-verify.mlir:[[# @LINE + 4]]:3: error: dispatch grid is 0 on axis y
// CHECK: kernel-verify.mlir:[[# @LINE + 3]]:3: error: workgroup size [512, 1, 1] exceeds the target profile on axis x (512 > 256)
// CHECK: kernel-verify.mlir:[[# @LINE + 2]]:3: error: workgroup size [512, 1, 1] has 512 invocations; the target profile allows 256
// CHECK: kernel-verify.mlir:[[# @LINE + 1]]:3: error: count buffer @nowhere is not a host binding of this descriptor
  kernel.dispatch workgroup_size [512, 1, 1] program_workgroup_size [512, 1, 1] grid [4, 0, 1] count [@nowhere]
}
// LIMITS-NOT: exceeds the target profile
// LIMITS: error: dispatch grid is 0 on axis y

// -----

kernel.descriptor @zero id "0" entry "main" {
// CHECK: kernel-verify.mlir:[[# @LINE + 2]]:3: error: dispatch workgroup size is 0 on axis z
// CHECK: kernel-verify.mlir:[[# @LINE + 1]]:3: error: dispatch program workgroup size is 0 on axis z
  kernel.dispatch workgroup_size [4, 4, 0] program_workgroup_size [4, 4, 0] grid [1, 1, 1] count []
}

// -----

// Body: store and atomic to a read-only slot, dangling slots and locals, a
// memory class mismatch, a type mismatch, an atomic on an unmarked binding.
kernel.descriptor @body id "0" entry "main" {
  kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [1, 1, 1] count []
  kernel.binding @x slot 0 group 0 global read_only : ui32[64]
  kernel.binding @y slot 1 group 0 global read_write : ui32[64]
  %i = kernel.invocation_id x
// CHECK: kernel-verify.mlir:[[# @LINE + 1]]:3: error: 'kernel.store_global' writes read-only slot 0 (@x)
  kernel.store_global slot 0 [%i] = %i : ui32
// CHECK: kernel-verify.mlir:[[# @LINE + 1]]:3: error: 'kernel.load_global' refers to slot 9, which no binding declares
  %d = kernel.load_global slot 9 [%i] : ui32
// CHECK: kernel-verify.mlir:[[# @LINE + 1]]:3: error: 'kernel.load_constant' cannot address slot 1 (@y), which is global memory
  %c = kernel.load_constant slot 1 [%i] : ui32
// CHECK: kernel-verify.mlir:[[# @LINE + 1]]:3: error: slot 1 (@y) holds ui32, not f32
  %f = kernel.load_global slot 1 [%i] : f32
// CHECK: kernel-verify.mlir:[[# @LINE + 1]]:3: error: atomic on slot 1 (@y), which is not marked 'atomic'
  %o = kernel.atomic add slot 1 [%i], %i : ui32
// CHECK: kernel-verify.mlir:[[# @LINE + 1]]:3: error: 'kernel.local_load' of @acc, which no visible 'kernel.local' declares
  %a = kernel.local_load @acc : ui32
  kernel.block {
    kernel.local @t = %i : ui32
  }
// CHECK: kernel-verify.mlir:[[# @LINE + 1]]:3: error: 'kernel.local_store' of @t, which no visible 'kernel.local' declares
  kernel.local_store @t = %i : ui32
}

// -----

// Traps need the sidecar; a widened kernel cannot hold a barrier or workgroup memory.
kernel.descriptor @traps id "0" entry "main" {
  kernel.dispatch workgroup_size [128, 1, 1] program_workgroup_size [1, 1, 1] grid [1, 1, 1] count []
// CHECK: kernel-verify.mlir:[[# @LINE + 1]]:3: error: workgroup memory @t in a kernel whose workgroup was widened from [1, 1, 1]
  kernel.binding @t slot 16777216 shared read_write : f32[4]
  %z = vyre.const 0 : ui32
  %m = vyre.const -1 : si32
// CHECK: kernel-verify.mlir:[[# @LINE + 1]]:3: error: 'kernel.trap' needs a trap sidecar binding, and there is none
  kernel.trap %z "oops"
// CHECK: kernel-verify.mlir:[[# @LINE + 1]]:3: error: 'vyre.div' on si32 may trap and needs a trap sidecar binding, and there is none
  %q = vyre.div %m, %m : si32
// CHECK: kernel-verify.mlir:[[# @LINE + 1]]:3: error: a barrier in a kernel whose workgroup was widened from [1, 1, 1]
  kernel.barrier
}

// -----

// Widening is only from [1, 1, 1] to [N, 1, 1].
kernel.descriptor @widen id "0" entry "main" {
// CHECK: kernel-verify.mlir:[[# @LINE + 1]]:3: error: a kernel workgroup [64, 2, 1] that differs from the program's [8, 1, 1] is only supported when widening [1, 1, 1] to [N, 1, 1]
  kernel.dispatch workgroup_size [64, 2, 1] program_workgroup_size [8, 1, 1] grid [1, 1, 1] count []
}

// -----

// More storage buffers than the target allows (2 in the second RUN), more workgroup
// memory than it allows (16384 bytes), a malformed sidecar.
kernel.descriptor @limits id "0" entry "main" {
  kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [1, 1, 1] count []
  kernel.binding @a slot 0 group 0 global read_write : f32[64]
  kernel.binding @b slot 1 group 0 global read_write : f32[64]
// LIMITS: kernel-verify.mlir:[[# @LINE + 1]]:3: error: binding @c is storage buffer 3; the target allows 2 per shader stage. Fix: fuse fewer programs or split the program
  kernel.binding @c slot 2 group 0 global read_write : f32[64]
  kernel.binding @t slot 16777216 shared read_write : f32[4096]
// CHECK: kernel-verify.mlir:[[# @LINE + 1]]:3: error: workgroup memory reaches 16416 bytes with @u; the target allows 16384
  kernel.binding @u slot 16777217 shared read_write : f32[8]
// CHECK: kernel-verify.mlir:[[# @LINE + 1]]:3: error: the trap sidecar must be @__vyre_descriptor_trap_sidecar, a global read_write ui32[8] binding
  kernel.binding @__vyre_descriptor_trap_sidecar slot 3 group 0 global read_write atomic trap_sidecar : ui32[2]
}

// -----

// A loop needs the sidecar: that is where a driver that leaves loops early
// (Mesa's lavapipe, after 65535 iterations) is reported.
kernel.descriptor @loop id "0" entry "main" {
  kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [1, 1, 1] count []
  %i = kernel.invocation_id x
// CHECK: kernel-verify.mlir:[[# @LINE + 1]]:3: error: 'kernel.for' needs a trap sidecar binding (where a driver that leaves loops early is reported), and there is none
  kernel.for %k = %i to %i {
  }
}

// -----

// Scratch (per-invocation device memory, e.g. grid_sync spills) is bound in group 0 below 2^24, with a static
// per-invocation count, and is never a count buffer.
kernel.descriptor @scratch id "0" entry "main" {
// CHECK: kernel-verify.mlir:[[# @LINE + 4]]:3: error: scratch binding @t (scratch) at slot 16777216 is in the workgroup range (>= 2^24 = 16777216)
// CHECK: kernel-verify.mlir:[[# @LINE + 1]]:3: error: count buffer @s is not a host binding of this descriptor
  kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [1, 1, 1] count [@s]
  kernel.binding @s slot 0 group 0 scratch read_write : ui32[2]
  kernel.binding @t slot 16777216 group 0 scratch read_write : f32[1]
}

// -----

// A valid descriptor passes unchanged (modules are printed after all diagnostics).
kernel.descriptor @ok_scratch id "0" entry "main" {
  kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [1, 1, 1] count [@y]
  kernel.binding @y slot 0 group 0 global read_write : f32[64]
  kernel.binding @spill slot 1 group 0 scratch read_write : f32[1]
  %i = kernel.invocation_id x
  %v = kernel.load_global slot 1 [%i] : f32
  kernel.store_global slot 0 [%i] = %v : f32
}
// CHECK:      kernel.descriptor @ok_scratch
// CHECK-NEXT:   kernel.dispatch
// CHECK-NEXT:   kernel.binding @y
// CHECK-NEXT:   kernel.binding @spill slot 1 group 0 scratch read_write : f32[1]
// LIMITS:     kernel.descriptor @ok_scratch

// -----

// A valid descriptor passes unchanged (modules are printed after all diagnostics).
kernel.descriptor @ok id "0" entry "main" {
  kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [1, 1, 1] count [@y]
  kernel.binding @x slot 0 group 0 constant read_only : f32[64]
  kernel.binding @y slot 1 group 0 global read_write : f32[64]
  %i = kernel.invocation_id x
  %v = kernel.load_constant slot 0 [%i] : f32
  kernel.store_global slot 1 [%i] = %v : f32
}
// CHECK:      kernel.descriptor @ok
// CHECK-NEXT:   kernel.dispatch
// LIMITS:     kernel.descriptor @ok


// -----

// An indirect dispatch names a ui32 host binding of its descriptor.
kernel.descriptor @indirect id "0" entry "main" {
// CHECK: kernel-verify.mlir:[[# @LINE + 1]]:3: error: indirect grid buffer @nowhere is not a ui32 host binding of this descriptor
  kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid indirect @nowhere count [@y]
  kernel.binding @y slot 0 group 0 global read_write : f32[64]
}

// -----

// An indirect grid at a byte offset needs its three words inside the binding.
kernel.descriptor @indirect_offset id "0" entry "main" {
// CHECK: kernel-verify.mlir:[[# @LINE + 1]]:3: error: indirect grid buffer @grid has no 3 words from byte 16
  kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid indirect @grid offset 16 count [@y]
  kernel.binding @grid slot 1 group 0 constant read_only : ui32[6]
  kernel.binding @y slot 0 group 0 global read_write : f32[64]
}

// -----

// The repetition binding: only @__vyre_repetition, a constant read_only ui32[1]
// binding marked `repetition`, and kernel.repetition reads only it.
kernel.descriptor @repetition id "0" entry "main" {
  kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [1, 1, 1] count []
  kernel.binding @a slot 0 group 0 global read_write : ui32[64]
// CHECK: kernel-verify.mlir:[[# @LINE + 1]]:3: error: the repetition binding must be @__vyre_repetition, a constant read_only ui32[1] binding marked 'repetition'
  kernel.binding @__vyre_repetition slot 1 group 0 constant read_only : ui32[1]
// CHECK: kernel-verify.mlir:[[# @LINE + 2]]:3: error: 'kernel.repetition' cannot address slot 0 (@a), which is global memory
// CHECK: kernel-verify.mlir:[[# @LINE + 1]]:3: error: 'kernel.repetition' reads slot 0 (@a), which is not the repetition binding
  %r = kernel.repetition slot 0
}

// -----

// `no_clear` only where kernel-elide-clears could prove it: here the store
// covers half of @y (a grid of 1 workgroup of 32 for 64 elements).
kernel.descriptor @no_clear id "0" entry "main" {
  kernel.dispatch workgroup_size [32, 1, 1] program_workgroup_size [32, 1, 1] grid [1, 1, 1] count [@y]
// CHECK: kernel-verify.mlir:[[# @LINE + 1]]:3: error: binding @y is marked no_clear, but this kernel is not proven to write every element of it before any read. Fix: run kernel-elide-clears (which marks only proven bindings) or drop the mark
  kernel.binding @y slot 0 group 0 global write_only no_clear : f32[64]
  %i = kernel.invocation_id x
  %z = vyre.const 0.0 : f32
  kernel.store_global slot 0 [%i] = %z : f32
}

// -----

// The records of kernel-vectorize and kernel-coarsen: a launch grid that is not
// the one the record gives, a width on a kernel that is not elementwise, a
// coarsening without its `coarsened` region.
kernel.descriptor @bad_grid id "0" entry "main" {
// CHECK: kernel-verify.mlir:[[# @LINE + 1]]:3: error: grid [16, 1, 1] is not the launch grid [4, 1, 1] that elements_per_invocation gives over logical_grid [16, 1, 1]
  kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [16, 1, 1] count [@y] elements_per_invocation 4 logical_grid [16, 1, 1]
  kernel.binding @y slot 0 group 0 global write_only : f32[1024]
  %i = kernel.invocation_id x
  %v = vyre.const 1.0 : f32
  kernel.store_global slot 0 [%i] = %v : f32
}
kernel.descriptor @not_elementwise id "0" entry "main" {
// CHECK: kernel-verify.mlir:[[# @LINE + 1]]:3: error: elements_per_invocation 4 on a kernel that is not elementwise at that width (see kernel-vectorize)
  kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [4, 1, 1] count [@y] elements_per_invocation 4 logical_grid [16, 1, 1]
  kernel.binding @y slot 0 group 0 global write_only : f32[1001]
  %i = kernel.invocation_id x
  %v = vyre.const 1.0 : f32
  kernel.store_global slot 0 [%i] = %v : f32
}
kernel.descriptor @no_region id "0" entry "main" {
// CHECK: kernel-verify.mlir:[[# @LINE + 1]]:3: error: groups_per_workgroup 4 with 0 'coarsened' regions; a coarsened kernel has exactly one (see kernel-coarsen)
  kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [4, 1, 1] count [@y] groups_per_workgroup 4 logical_grid [16, 1, 1]
  kernel.binding @y slot 0 group 0 global write_only : f32[1024]
}

// -----

// The facts vyre-lower records: `declared_invocations` of the program's
// declared launch, `unroll` on constant bounds only, `written_first` only
// where the kernel stores the whole buffer first.
kernel.descriptor @declared id "0" entry "main" {
// CHECK: kernel-verify.mlir:[[# @LINE + 1]]:3: error: declared_invocations 1000 is not the 1024 invocations of the program's declared launch over 1024 elements
  kernel.dispatch workgroup_size [128, 1, 1] program_workgroup_size [1, 1, 1] grid [8, 1, 1] count [@y] declared_invocations 1000
  kernel.binding @y slot 0 group 0 global write_only : f32[1024]
}
kernel.descriptor @facts id "0" entry "main" {
  kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [1, 1, 1] count [@y]
  kernel.binding @y slot 0 group 0 global read_write : ui32[64]
  kernel.binding @__vyre_descriptor_trap_sidecar slot 1 group 0 global read_write atomic trap_sidecar : ui32[8]
// CHECK: kernel-verify.mlir:[[# @LINE + 1]]:3: error: binding @t is marked 'written_first', but the kernel is not proven to store every element of it before any read
  kernel.binding @t slot 16777216 shared read_write : ui32[64] {written_first}
  %i = kernel.invocation_id x
  %n = kernel.load_global slot 0 [%i] : ui32
  %zero = vyre.const 0 : ui32
  %v = kernel.load_shared slot 16777216 [%zero] : ui32
// CHECK: kernel-verify.mlir:[[# @LINE + 1]]:3: error: an 'unroll' loop needs constant ui32 bounds
  kernel.for %k = %zero to %n {
  } {unroll}
}

// -----

// `workgroup_only` only on barriers across which no storage element is shared:
// here every invocation stores @y[0] before the barrier and loads it after.
kernel.descriptor @shared_storage id "0" entry "main" {
  kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [1, 1, 1] count [@y]
  kernel.binding @y slot 0 group 0 global read_write : ui32[64]
  %i = kernel.invocation_id x
  %zero = vyre.const 0 : ui32
  kernel.store_global slot 0 [%zero] = %i : ui32
// CHECK: kernel-verify.mlir:[[# @LINE + 1]]:3: error: a 'workgroup_only' barrier in a kernel whose invocations share storage elements across barriers (it must order storage memory too)
  kernel.barrier {workgroup_only}
  %v = kernel.load_global slot 0 [%zero] : ui32
  kernel.store_global slot 0 [%i] = %v : ui32
}
