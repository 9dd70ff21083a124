// Mixed precision: half-precision inputs squared, a bfloat16 copy, a double-precision
// copy, and the bits of each double as a pair of ui32 words (low word first).
// Also four-lane vectors built from scalars, computed on lane by lane.
vyre.program @wide_types workgroup_size [64, 1, 1] {
  vyre.buffer @h binding 0 read_only : f16[256]
  vyre.buffer @b binding 1 write_only : bf16[256]
  vyre.buffer @d binding 2 write_only : f64[256]
  vyre.buffer @bits binding 3 write_only : vector<2xui32>[256]
  vyre.buffer @q binding 4 write_only : vector<4xf32>[256]
  %i = vyre.invocation_id x
  %x = vyre.load @h[%i] : f16
  %y = vyre.mul %x, %x : f16
  %z = vyre.cast %y : f16 to bf16
  vyre.store @b[%i] = %z : bf16
  %w = vyre.cast %y : f16 to f64
  vyre.store @d[%i] = %w : f64
  %pair = vyre.bitcast %w : f64 to vector<2xui32>
  %lo = vyre.extract %pair[0] : vector<2xui32>
  %hi = vyre.extract %pair[1] : vector<2xui32>
  %swapped = vyre.from_elements %hi, %lo : vector<2xui32>
  vyre.store @bits[%i] = %swapped : vector<2xui32>
  %f = vyre.cast %x : f16 to f32
  %g = vyre.abs %f : f32
  %four = vyre.from_elements %f, %g, %f, %g : vector<4xf32>
  %r = vyre.sqrt %four : vector<4xf32>
  vyre.store @q[%i] = %r : vector<4xf32>
}
