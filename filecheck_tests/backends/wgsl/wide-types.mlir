// RUN: vyre-opt %s -t wgsl | filecheck %s
// f16 behind `enable f16;`, bf16 packed two halves a u32 word (stores through atomicAnd/atomicOr
// of the word, results rounded by vyre_bf16_round), f64 native, the bits of an f64 through u64,
// vectors lane by lane.

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

// CHECK:      enable f16;
// CHECK:      var<storage, read> b_h: array<f16>;
// CHECK-NEXT: var<storage, read_write> b_b: array<atomic<u32>>;
// CHECK-NEXT: var<storage, read_write> b_d: array<f64>;
// CHECK-NEXT: var<storage, read_write> b_v: array<vec2<u32>>;
// CHECK-NEXT: var<storage, read_write> b_q: array<vec4<f32>>;
// CHECK:      fn vyre_bf16_round(x: f32) -> f32 {
// CHECK:      let v_x = select(0.0h, b_h[min(v_i, 4u - 1u)], v_i < 4u);
// CHECK-NEXT: let v_y = fma(v_x, v_x, v_x);
// CHECK-NEXT: let v_z = vyre_bf16_round(f32(v_y));
// CHECK-NEXT: if (v_i < 4u) {
// CHECK-NEXT:   atomicAnd(&b_b[(v_i >> 1u)], ~(0xffffu << (16u * (v_i & 1u))));
// CHECK-NEXT:   atomicOr(&b_b[(v_i >> 1u)], (bitcast<u32>(v_z) >> 16u) << (16u * (v_i & 1u)));
// CHECK-NEXT: }
// CHECK-NEXT: let v_w = f64(v_z);
// CHECK:      let v_bits = vec2<u32>(u32(bitcast<u64>(v_w) & 0xfffffffflu), u32(bitcast<u64>(v_w) >> 32u));
// CHECK-NEXT: let v_lo = v_bits.x;
// CHECK-NEXT: let v_hi = v_bits.y;
// CHECK-NEXT: let v_swapped = vec2<u32>(v_hi, v_lo);
// CHECK:      let v_four = vec4<f32>(v_f, v_f, v_f, v_f);
// CHECK-NEXT: let v_r = vec4<f32>(sqrt(v_four.x), sqrt(v_four.y), sqrt(v_four.z), sqrt(v_four.w));
