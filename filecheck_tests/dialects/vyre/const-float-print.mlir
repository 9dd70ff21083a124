// RUN: VYRE_ROUNDTRIP
// RUN: VYRE_GENERIC_ROUNDTRIP
// Float constants print as the shortest decimal that parses back to the same
// bits of their type (numpy's format_float_scientific(unique=True) digits for
// f16 and f32, Python's repr for f64); infinities and NaNs print as hex bit patterns.

vyre.program @consts workgroup_size [1, 1, 1] {
  vyre.buffer @x binding 0 read_write : f32[1]
  %a = vyre.const 0.005 : f32
  %b = vyre.const 0.1 : f32
  %c = vyre.const 1.0e-45 : f32
  %d = vyre.const 3.4028235e+38 : f32
  %e = vyre.const -0.0 : f32
  %f = vyre.const 0x7F800000 : f32
  %g = vyre.const 0x7FC00000 : f32
  %h = vyre.const 0.1 : f16
  %i = vyre.const 65504.0 : f16
  %j = vyre.const 6.0e-08 : f16
  %k = vyre.const 0.1 : bf16
  %l = vyre.const -0.0 : bf16
  %m = vyre.const 0.1 : f64
  %n = vyre.const 1.0e+300 : f64
  %o = vyre.const 5.0e-324 : f64
  %p = vyre.const 0.004999999888241291 : f32
  %z = vyre.invocation_id x
  vyre.store @x[%z] = %a : f32
}

// CHECK:      %a = vyre.const 0.005 : f32
// CHECK-NEXT: %b = vyre.const 0.1 : f32
// CHECK-NEXT: %c = vyre.const 1.0e-45 : f32
// CHECK-NEXT: %d = vyre.const 3.4028235e+38 : f32
// CHECK-NEXT: %e = vyre.const -0.0 : f32
// CHECK-NEXT: %f = vyre.const 0x7F800000 : f32
// CHECK-NEXT: %g = vyre.const 0x7FC00000 : f32
// CHECK-NEXT: %h = vyre.const 0.1 : f16
// CHECK-NEXT: %i = vyre.const 65500.0 : f16
// CHECK-NEXT: %j = vyre.const 6.0e-08 : f16
// CHECK-NEXT: %k = vyre.const 0.1 : bf16
// CHECK-NEXT: %l = vyre.const -0.0 : bf16
// CHECK-NEXT: %m = vyre.const 0.1 : f64
// CHECK-NEXT: %n = vyre.const 1.0e+300 : f64
// CHECK-NEXT: %o = vyre.const 5.0e-324 : f64
// CHECK-NEXT: %p = vyre.const 0.005 : f32
