// RUN: %python -m vyre_xdsl.testing.cli_batch \
// RUN:   --run "vyre-opt %s --lower > %t.lowered.mlir" \
// RUN:   --run "vyre-opt %t.lowered.mlir > %t.reparsed.mlir" \
// RUN:   --run "vyre-opt %s -t wgsl > %t.wgsl"
// RUN: filecheck %s < %t.lowered.mlir
// RUN: filecheck %s < %t.reparsed.mlir
// RUN: filecheck %s --check-prefix=WGSL < %t.wgsl
// `vyre.repetition` lowers to `kernel.repetition` over a `repetition` binding at
// the lowest slot no other binding holds: here slot 1 (the program's buffers
// are at 0 and 2; the trap sidecar of the loop takes 3).

vyre.program @rep workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[64]
  vyre.buffer @y binding 2 read_write : ui32[64]
  %i = vyre.invocation_id x
  %r = vyre.repetition
  %v = vyre.load @x[%i] : ui32
  %lo = vyre.const 0 : ui32
  vyre.loop @k = %lo to %r {
    %k = vyre.var @k : ui32
    %s = vyre.add %v, %k : ui32
    vyre.store @y[%i] = %s : ui32
  }
}

// CHECK:      kernel.binding @x slot 0 group 0 constant read_only : ui32[64]
// CHECK-NEXT: kernel.binding @y slot 2 group 0 global read_write : ui32[64]
// CHECK-NEXT: kernel.binding @__vyre_descriptor_trap_sidecar slot 3 group 0 global read_write atomic trap_sidecar : ui32[8]
// CHECK-NEXT: kernel.binding @__vyre_repetition slot 1 group 0 constant read_only repetition : ui32[1]
// CHECK:      %{{.*}} = kernel.repetition slot 1
// CHECK:      kernel.for

// WGSL: @group(0) @binding(1) var<storage, read> [[REP:b___vyre_repetition[_0-9]*]]: array<u32>;
// WGSL: let {{.*}} = [[REP]][0];
