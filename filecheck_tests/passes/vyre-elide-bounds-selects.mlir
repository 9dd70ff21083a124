// RUN: %python -m vyre_xdsl.testing.cli_batch \
// RUN:   --run "xdsl-opt %s -p vyre-elide-bounds-selects > %t.xdsl" \
// RUN:   --run "vyre-opt %s -p vyre-elide-bounds-selects > %t.vyre"
// RUN: filecheck %s < %t.vyre
// RUN: diff %t.vyre %t.xdsl

// A fused two-stage chain whose grid runs past the count: the forwarded value
// is selected below the count, and only the store at the same index into a
// buffer of that count sees it. The select, its compare and its constants go.
vyre.program @chain workgroup_size [256, 1, 1] grid [5, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[1000]
  vyre.buffer @out binding 1 write_only : f32[1000]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : f32
  %n = vyre.const 1000 : ui32
  %inside = vyre.lt %i, %n : ui32
  %zero = vyre.const 0.0 : f32
  %s = vyre.select %inside, %v, %zero : f32
  %c = vyre.const 2.0 : f32
  %y = vyre.mul %s, %c : f32
  %i2 = vyre.invocation_id x
  vyre.store @out[%i2] = %y : f32
}

// CHECK-LABEL: vyre.program @chain
// CHECK:         %v = vyre.load @x[%i] : f32
// CHECK-NEXT:    %c = vyre.const 2.0 : f32
// CHECK-NEXT:    %y = vyre.mul %v, %c : f32
// CHECK-NEXT:    %i2 = vyre.invocation_id x
// CHECK-NEXT:    vyre.store @out[%i2] = %y : f32
// CHECK-NEXT:  }

// Kept: the store's buffer holds more elements than the bound (element 1000
// would be written with the unselected value).
vyre.program @longer_buffer workgroup_size [256, 1, 1] grid [5, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[1000]
  vyre.buffer @out binding 1 write_only : f32[1280]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : f32
  %n = vyre.const 1000 : ui32
  %inside = vyre.lt %i, %n : ui32
  %zero = vyre.const 0.0 : f32
  %s = vyre.select %inside, %v, %zero : f32
  vyre.store @out[%i] = %s : f32
}

// CHECK-LABEL: vyre.program @longer_buffer
// CHECK:         %s = vyre.select %inside, %v, %zero : f32
// CHECK-NEXT:    vyre.store @out[%i] = %s : f32

// Kept: the store is at another index than the compared one.
vyre.program @other_index workgroup_size [256, 1, 1] grid [5, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[1000]
  vyre.buffer @out binding 1 write_only : f32[1000]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : f32
  %n = vyre.const 1000 : ui32
  %inside = vyre.lt %i, %n : ui32
  %zero = vyre.const 0.0 : f32
  %s = vyre.select %inside, %v, %zero : f32
  %one = vyre.const 1 : ui32
  %j = vyre.sub %i, %one : ui32
  vyre.store @out[%j] = %s : f32
}

// CHECK-LABEL: vyre.program @other_index
// CHECK:         %s = vyre.select %inside, %v, %zero : f32

// Kept: the selected value also indexes a load (seen where i >= N).
vyre.program @index_use workgroup_size [256, 1, 1] grid [5, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[1000]
  vyre.buffer @out binding 1 write_only : ui32[1000]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %n = vyre.const 1000 : ui32
  %inside = vyre.lt %i, %n : ui32
  %zero = vyre.const 0 : ui32
  %s = vyre.select %inside, %v, %zero : ui32
  %w = vyre.load @x[%s] : ui32
  vyre.store @out[%i] = %w : ui32
}

// CHECK-LABEL: vyre.program @index_use
// CHECK:         %s = vyre.select %inside, %v, %zero : ui32

// Kept: the value passes through an si32 division, which may trap where the
// select would have given 0 (x / 0 with x = INT_MIN / -1 is a trap; here the
// divisor is the selected value).
vyre.program @trapping workgroup_size [256, 1, 1] grid [5, 1, 1] {
  vyre.buffer @x binding 0 read_only : si32[1000]
  vyre.buffer @out binding 1 write_only : si32[1000]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : si32
  %n = vyre.const 1000 : ui32
  %inside = vyre.lt %i, %n : ui32
  %one = vyre.const 1 : si32
  %s = vyre.select %inside, %v, %one : si32
  %q = vyre.div %one, %s : si32
  vyre.store @out[%i] = %q : si32
}

// CHECK-LABEL: vyre.program @trapping
// CHECK:         %s = vyre.select %inside, %v, %one : si32

// Kept: a buffer with a run-time count, and a condition that is not `lt`
// against a constant.
vyre.program @not_bounds workgroup_size [256, 1, 1] grid [5, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[?]
  vyre.buffer @out binding 1 write_only : f32[?]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : f32
  %n = vyre.const 1000 : ui32
  %inside = vyre.lt %i, %n : ui32
  %zero = vyre.const 0.0 : f32
  %s = vyre.select %inside, %v, %zero : f32
  vyre.store @out[%i] = %s : f32
  %len = vyre.buf_len @x
  %below = vyre.lt %i, %len : ui32
  %t = vyre.select %below, %v, %zero : f32
  vyre.store @out[%i] = %t : f32
}

// CHECK-LABEL: vyre.program @not_bounds
// CHECK:         %s = vyre.select %inside, %v, %zero : f32
// CHECK:         %t = vyre.select %below, %v, %zero : f32
