// RUN: %python -m vyre_xdsl.testing.cli_batch \
// RUN:   --run "vyre-opt %s --split-input-file -p kernel-coarsen > %t.once" \
// RUN:   --run "vyre-opt %s --split-input-file -p kernel-coarsen,kernel-verify > %t.verified" \
// RUN:   --run "vyre-opt %s --split-input-file -p kernel-coarsen,kernel-coarsen > %t.twice"
// RUN: filecheck %s < %t.once
// RUN: filecheck %s < %t.verified
// RUN: filecheck %s < %t.twice
// kernel-coarsen records, on a kernel from atomic privatization whose logical
// workgroups are independent, how many of them each launched workgroup runs
// (`groups_per_workgroup` C = min(256, groups / 1024)), keeps the logical grid
// as `logical_grid`, makes `grid` the launch grid ceil(groups / C) and marks
// the privatized body `coarsened`. Running it twice changes nothing more.

// 2^21 elements in workgroups of 256: 8192 logical workgroups, 8 per launched
// workgroup, 1024 launched.
kernel.descriptor @big id "0" entry "main" {
  kernel.dispatch workgroup_size [256, 1, 1] program_workgroup_size [256, 1, 1] grid [8192, 1, 1] count [@x, @out]
  kernel.binding @x slot 0 group 0 constant read_only : ui32[2097152]
  kernel.binding @out slot 1 group 0 global write_only atomic : ui32[256]
  kernel.binding @__vyre_private_out slot 16777216 shared read_write atomic : ui32[256]
  kernel.region "vyre.privatize.body" {
    %i = kernel.invocation_id x
    %v = kernel.load_constant slot 0 [%i] : ui32
    %one = vyre.const 1 : ui32
    %old = kernel.atomic add slot 16777216 [%v], %one : ui32
  }
  kernel.barrier
  %0 = kernel.local_id x
  %1 = kernel.load_shared slot 16777216 [%0] : ui32
  %2 = vyre.const 0 : ui32
  %3 = vyre.ne %1, %2 : ui32
  kernel.if %3 {
    %4 = kernel.atomic add slot 1 [%0], %1 : ui32
  }
}
// CHECK-LABEL: kernel.descriptor @big
// CHECK-NEXT:  kernel.dispatch workgroup_size [256, 1, 1] program_workgroup_size [256, 1, 1] grid [1024, 1, 1] count [@x, @out] groups_per_workgroup 8 logical_grid [8192, 1, 1]
// CHECK:       kernel.region "vyre.privatize.body" {
// CHECK:       } {coarsened}

// -----

// 2^28 elements: 2^20 logical workgroups, folded into y as [61681, 17, 1]
// (1048577 workgroups); at most 256 per launched workgroup: 4097 launched.
kernel.descriptor @huge id "0" entry "main" {
  kernel.dispatch workgroup_size [256, 1, 1] program_workgroup_size [256, 1, 1] grid [61681, 17, 1] count [@x, @out]
  kernel.binding @x slot 0 group 0 constant read_only : ui32[268435456]
  kernel.binding @out slot 1 group 0 global write_only atomic : ui32[256]
  kernel.binding @__vyre_private_out slot 16777216 shared read_write atomic : ui32[256]
  kernel.region "vyre.privatize.body" {
    %i = kernel.invocation_id x
    %v = kernel.load_constant slot 0 [%i] : ui32
    %one = vyre.const 1 : ui32
    %old = kernel.atomic add slot 16777216 [%v], %one : ui32
  }
  kernel.barrier
  %0 = kernel.local_id x
  %1 = kernel.load_shared slot 16777216 [%0] : ui32
  %2 = vyre.const 0 : ui32
  %3 = vyre.ne %1, %2 : ui32
  kernel.if %3 {
    %4 = kernel.atomic add slot 1 [%0], %1 : ui32
  }
}
// CHECK-LABEL: kernel.descriptor @huge
// CHECK-NEXT:  kernel.dispatch workgroup_size [256, 1, 1] program_workgroup_size [256, 1, 1] grid [4097, 1, 1] count [@x, @out] groups_per_workgroup 256 logical_grid [61681, 17, 1]

// -----

// Left as they are: 1024 logical workgroups (C would be 1); a body with a
// barrier; workgroup memory that is not a private copy; a runtime grid.
kernel.descriptor @small id "0" entry "main" {
  kernel.dispatch workgroup_size [256, 1, 1] program_workgroup_size [256, 1, 1] grid [1024, 1, 1] count [@x, @out]
  kernel.binding @x slot 0 group 0 constant read_only : ui32[262144]
  kernel.binding @out slot 1 group 0 global write_only atomic : ui32[256]
  kernel.binding @__vyre_private_out slot 16777216 shared read_write atomic : ui32[256]
  kernel.region "vyre.privatize.body" {
    %i = kernel.invocation_id x
    %v = kernel.load_constant slot 0 [%i] : ui32
    %one = vyre.const 1 : ui32
    %old = kernel.atomic add slot 16777216 [%v], %one : ui32
  }
  kernel.barrier
  %0 = kernel.local_id x
  %1 = kernel.load_shared slot 16777216 [%0] : ui32
  %2 = vyre.const 0 : ui32
  %3 = vyre.ne %1, %2 : ui32
  kernel.if %3 {
    %4 = kernel.atomic add slot 1 [%0], %1 : ui32
  }
}
kernel.descriptor @barrier id "0" entry "main" {
  kernel.dispatch workgroup_size [256, 1, 1] program_workgroup_size [256, 1, 1] grid [8192, 1, 1] count [@x, @out]
  kernel.binding @x slot 0 group 0 constant read_only : ui32[2097152]
  kernel.binding @out slot 1 group 0 global write_only atomic : ui32[256]
  kernel.binding @__vyre_private_out slot 16777216 shared read_write atomic : ui32[256]
  kernel.region "vyre.privatize.body" {
    %i = kernel.invocation_id x
    %v = kernel.load_constant slot 0 [%i] : ui32
    %one = vyre.const 1 : ui32
    kernel.barrier
    %old = kernel.atomic add slot 16777216 [%v], %one : ui32
  }
  kernel.barrier
  %0 = kernel.local_id x
  %1 = kernel.load_shared slot 16777216 [%0] : ui32
  %2 = vyre.const 0 : ui32
  %3 = vyre.ne %1, %2 : ui32
  kernel.if %3 {
    %4 = kernel.atomic add slot 1 [%0], %1 : ui32
  }
}
kernel.descriptor @shared id "0" entry "main" {
  kernel.dispatch workgroup_size [256, 1, 1] program_workgroup_size [256, 1, 1] grid [8192, 1, 1] count [@x, @out]
  kernel.binding @x slot 0 group 0 constant read_only : ui32[2097152]
  kernel.binding @out slot 1 group 0 global write_only atomic : ui32[256]
  kernel.binding @__vyre_private_out slot 16777216 shared read_write atomic : ui32[256]
  kernel.binding @tile slot 16777217 shared read_write : ui32[256]
  kernel.region "vyre.privatize.body" {
    %i = kernel.invocation_id x
    %v = kernel.load_constant slot 0 [%i] : ui32
    %one = vyre.const 1 : ui32
    %old = kernel.atomic add slot 16777216 [%v], %one : ui32
  }
  kernel.barrier
  %0 = kernel.local_id x
  %1 = kernel.load_shared slot 16777216 [%0] : ui32
  %2 = vyre.const 0 : ui32
  %3 = vyre.ne %1, %2 : ui32
  kernel.if %3 {
    %4 = kernel.atomic add slot 1 [%0], %1 : ui32
  }
}
kernel.descriptor @runtime id "0" entry "main" {
  kernel.dispatch workgroup_size [256, 1, 1] program_workgroup_size [256, 1, 1] grid ? count [@x, @out]
  kernel.binding @x slot 0 group 0 constant read_only : ui32[?]
  kernel.binding @out slot 1 group 0 global write_only atomic : ui32[256]
  kernel.binding @__vyre_private_out slot 16777216 shared read_write atomic : ui32[256]
  kernel.region "vyre.privatize.body" {
    %i = kernel.invocation_id x
    %v = kernel.load_constant slot 0 [%i] : ui32
    %one = vyre.const 1 : ui32
    %old = kernel.atomic add slot 16777216 [%v], %one : ui32
  }
  kernel.barrier
  %0 = kernel.local_id x
  %1 = kernel.load_shared slot 16777216 [%0] : ui32
  %2 = vyre.const 0 : ui32
  %3 = vyre.ne %1, %2 : ui32
  kernel.if %3 {
    %4 = kernel.atomic add slot 1 [%0], %1 : ui32
  }
}
// CHECK-LABEL: kernel.descriptor @small
// CHECK-NEXT:  kernel.dispatch workgroup_size [256, 1, 1] program_workgroup_size [256, 1, 1] grid [1024, 1, 1] count [@x, @out]{{$}}
// CHECK-NOT:   coarsened
// CHECK-LABEL: kernel.descriptor @barrier
// CHECK-NEXT:  kernel.dispatch workgroup_size [256, 1, 1] program_workgroup_size [256, 1, 1] grid [8192, 1, 1] count [@x, @out]{{$}}
// CHECK-NOT:   coarsened
// CHECK-LABEL: kernel.descriptor @shared
// CHECK-NEXT:  kernel.dispatch workgroup_size [256, 1, 1] program_workgroup_size [256, 1, 1] grid [8192, 1, 1] count [@x, @out]{{$}}
// CHECK-NOT:   coarsened
// CHECK-LABEL: kernel.descriptor @runtime
// CHECK-NEXT:  kernel.dispatch workgroup_size [256, 1, 1] program_workgroup_size [256, 1, 1] grid ? count [@x, @out]{{$}}
// CHECK-NOT:   coarsened
