// RUN: VYRE_ROUNDTRIP
// RUN: VYRE_GENERIC_ROUNDTRIP
// f16, bf16, f64 and vectors: buffers, fma, casts, a bitcast, vyre.extract and vyre.from_elements print back as parsed.

vyre.program @wide_types workgroup_size [4, 1, 1] {
  vyre.buffer @h binding 0 read_only : f16[4]
  vyre.buffer @b binding 1 read_write : bf16[4]
  vyre.buffer @d binding 2 read_write : f64[4]
  vyre.buffer @v binding 3 read_write : vector<2xui32>[4]
  vyre.buffer @q binding 4 read_write : vector<4xf32>[4]
  %i = vyre.invocation_id x
  %x = vyre.load @h[%i] : f16
  %y = vyre.fma %x, %x, %x : f16
  %z = vyre.cast %y : f16 to bf16
  vyre.store @b[%i] = %z : bf16
  %w = vyre.cast %z : bf16 to f64
  vyre.store @d[%i] = %w : f64
  %bits = vyre.bitcast %w : f64 to vector<2xui32>
  %lo = vyre.extract %bits[0] : vector<2xui32>
  %hi = vyre.extract %bits[1] : vector<2xui32>
  %swapped = vyre.from_elements %hi, %lo : vector<2xui32>
  vyre.store @v[%i] = %swapped : vector<2xui32>
  %f = vyre.cast %w : f64 to f32
  %four = vyre.from_elements %f, %f, %f, %f : vector<4xf32>
  %r = vyre.sqrt %four : vector<4xf32>
  vyre.store @q[%i] = %r : vector<4xf32>
}

// CHECK: builtin.module {
// CHECK-NEXT:   vyre.program @wide_types workgroup_size [4, 1, 1] {
// CHECK-NEXT:     vyre.buffer @h binding 0 read_only : f16[4]
// CHECK-NEXT:     vyre.buffer @b binding 1 read_write : bf16[4]
// CHECK-NEXT:     vyre.buffer @d binding 2 read_write : f64[4]
// CHECK-NEXT:     vyre.buffer @v binding 3 read_write : vector<2xui32>[4]
// CHECK-NEXT:     vyre.buffer @q binding 4 read_write : vector<4xf32>[4]
// CHECK-NEXT:     %i = vyre.invocation_id x
// CHECK-NEXT:     %x = vyre.load @h[%i] : f16
// CHECK-NEXT:     %y = vyre.fma %x, %x, %x : f16
// CHECK-NEXT:     %z = vyre.cast %y : f16 to bf16
// CHECK-NEXT:     vyre.store @b[%i] = %z : bf16
// CHECK-NEXT:     %w = vyre.cast %z : bf16 to f64
// CHECK-NEXT:     vyre.store @d[%i] = %w : f64
// CHECK-NEXT:     %bits = vyre.bitcast %w : f64 to vector<2xui32>
// CHECK-NEXT:     %lo = vyre.extract %bits[0] : vector<2xui32>
// CHECK-NEXT:     %hi = vyre.extract %bits[1] : vector<2xui32>
// CHECK-NEXT:     %swapped = vyre.from_elements %hi, %lo : vector<2xui32>
// CHECK-NEXT:     vyre.store @v[%i] = %swapped : vector<2xui32>
// CHECK-NEXT:     %f = vyre.cast %w : f64 to f32
// CHECK-NEXT:     %four = vyre.from_elements %f, %f, %f, %f : vector<4xf32>
// CHECK-NEXT:     %r = vyre.sqrt %four : vector<4xf32>
// CHECK-NEXT:     vyre.store @q[%i] = %r : vector<4xf32>
// CHECK-NEXT:   }
// CHECK-NEXT: }
// CHECK-EMPTY:
