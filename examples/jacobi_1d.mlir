// PolyBench jacobi-1d (SMALL: N = 120), one time step written once:
//   B[i] = 0.33333 * (A[i-1] + A[i] + A[i+1])   for 1 <= i < N-1
//   A[i] = 0.33333 * (B[i-1] + B[i] + B[i+1])   for 1 <= i < N-1
// Run it T times on the same buffers: `vyre-run --repeat T examples/jacobi_1d.mlir`
// or `exe.run(inputs, repeat=T)` (one GPU submission for all T steps).
vyre.program @jacobi_1d_b workgroup_size [64, 1, 1] {
  vyre.buffer @A binding 0 read_write : f32[120]
  vyre.buffer @B binding 1 read_write : f32[120]
  %i = vyre.invocation_id x
  %one = vyre.const 1 : ui32
  %last = vyre.const 119 : ui32
  %lo = vyre.ge %i, %one : ui32
  %hi = vyre.lt %i, %last : ui32
  %inside = vyre.and %lo, %hi : i1
  vyre.if %inside {
    %im = vyre.sub %i, %one : ui32
    %ip = vyre.add %i, %one : ui32
    %a0 = vyre.load @A[%im] : f32
    %a1 = vyre.load @A[%i] : f32
    %a2 = vyre.load @A[%ip] : f32
    %s0 = vyre.add %a0, %a1 : f32
    %s1 = vyre.add %s0, %a2 : f32
    %third = vyre.const 0.33333 : f32
    %b = vyre.mul %third, %s1 : f32
    vyre.store @B[%i] = %b : f32
  }
}
vyre.program @jacobi_1d_a workgroup_size [64, 1, 1] {
  vyre.buffer @A binding 0 read_write : f32[120]
  vyre.buffer @B binding 1 read_only : f32[120]
  %i = vyre.invocation_id x
  %one = vyre.const 1 : ui32
  %last = vyre.const 119 : ui32
  %lo = vyre.ge %i, %one : ui32
  %hi = vyre.lt %i, %last : ui32
  %inside = vyre.and %lo, %hi : i1
  vyre.if %inside {
    %im = vyre.sub %i, %one : ui32
    %ip = vyre.add %i, %one : ui32
    %b0 = vyre.load @B[%im] : f32
    %b1 = vyre.load @B[%i] : f32
    %b2 = vyre.load @B[%ip] : f32
    %s0 = vyre.add %b0, %b1 : f32
    %s1 = vyre.add %s0, %b2 : f32
    %third = vyre.const 0.33333 : f32
    %a = vyre.mul %third, %s1 : f32
    vyre.store @A[%i] = %a : f32
  }
}
