// PolyBench's jacobi-2d on a 64 x 64 f32 grid, written once for one time step
// and run for T steps with repeat=T: two CUDA-style 2-D kernels, 16 x 16
// workgroups on an explicit 4 x 4 grid, so invocation_id x is the column j and
// invocation_id y the row i.
//
//   B[i][j] = 0.2 * (A[i][j] + A[i][j-1] + A[i][j+1] + A[i+1][j] + A[i-1][j])
//   A[i][j] = 0.2 * (B[i][j] + B[i][j-1] + B[i][j+1] + B[i+1][j] + B[i-1][j])
//
// over the interior (1 <= i, j < 63); the borders keep their input values. The
// row length is read from the launch: num_workgroups x * 16.
//
//   vyre-run examples/jacobi_2d.mlir --random-inputs 0 --backend reference --repeat 10
//   vyre-run examples/jacobi_2d.mlir --random-inputs 0 --grid jacobi_2d=2,2,1 --grid jacobi_2d_back=2,2,1
//     (a 32 x 32 corner)
vyre.program @jacobi_2d workgroup_size [16, 16, 1] grid [4, 4, 1] {
  vyre.buffer @a binding 0 read_only : f32[4096]
  vyre.buffer @b binding 1 read_write : f32[4096]
  %j = vyre.invocation_id x
  %i = vyre.invocation_id y
  %groups = vyre.num_workgroups x
  %width = vyre.const 16 : ui32
  %n = vyre.mul %groups, %width : ui32
  %one = vyre.const 1 : ui32
  %last = vyre.sub %n, %one : ui32
  %i_low = vyre.ge %i, %one : ui32
  %i_high = vyre.lt %i, %last : ui32
  %j_low = vyre.ge %j, %one : ui32
  %j_high = vyre.lt %j, %last : ui32
  %i_in = vyre.and %i_low, %i_high : i1
  %j_in = vyre.and %j_low, %j_high : i1
  %interior = vyre.and %i_in, %j_in : i1
  vyre.if %interior {
    %row = vyre.mul %i, %n : ui32
    %c = vyre.add %row, %j : ui32
    %west = vyre.sub %c, %one : ui32
    %east = vyre.add %c, %one : ui32
    %south = vyre.add %c, %n : ui32
    %north = vyre.sub %c, %n : ui32
    %vc = vyre.load @a[%c] : f32
    %vw = vyre.load @a[%west] : f32
    %ve = vyre.load @a[%east] : f32
    %vs = vyre.load @a[%south] : f32
    %vn = vyre.load @a[%north] : f32
    %s1 = vyre.add %vc, %vw : f32
    %s2 = vyre.add %s1, %ve : f32
    %s3 = vyre.add %s2, %vs : f32
    %s4 = vyre.add %s3, %vn : f32
    %fifth = vyre.const 0.2 : f32
    %v = vyre.mul %fifth, %s4 : f32
    vyre.store @b[%c] = %v : f32
  }
}
vyre.program @jacobi_2d_back workgroup_size [16, 16, 1] grid [4, 4, 1] {
  vyre.buffer @b binding 0 read_only : f32[4096]
  vyre.buffer @a binding 1 read_write : f32[4096]
  %j = vyre.invocation_id x
  %i = vyre.invocation_id y
  %groups = vyre.num_workgroups x
  %width = vyre.const 16 : ui32
  %n = vyre.mul %groups, %width : ui32
  %one = vyre.const 1 : ui32
  %last = vyre.sub %n, %one : ui32
  %i_low = vyre.ge %i, %one : ui32
  %i_high = vyre.lt %i, %last : ui32
  %j_low = vyre.ge %j, %one : ui32
  %j_high = vyre.lt %j, %last : ui32
  %i_in = vyre.and %i_low, %i_high : i1
  %j_in = vyre.and %j_low, %j_high : i1
  %interior = vyre.and %i_in, %j_in : i1
  vyre.if %interior {
    %row = vyre.mul %i, %n : ui32
    %c = vyre.add %row, %j : ui32
    %west = vyre.sub %c, %one : ui32
    %east = vyre.add %c, %one : ui32
    %south = vyre.add %c, %n : ui32
    %north = vyre.sub %c, %n : ui32
    %vc = vyre.load @b[%c] : f32
    %vw = vyre.load @b[%west] : f32
    %ve = vyre.load @b[%east] : f32
    %vs = vyre.load @b[%south] : f32
    %vn = vyre.load @b[%north] : f32
    %s1 = vyre.add %vc, %vw : f32
    %s2 = vyre.add %s1, %ve : f32
    %s3 = vyre.add %s2, %vs : f32
    %s4 = vyre.add %s3, %vn : f32
    %fifth = vyre.const 0.2 : f32
    %v = vyre.mul %fifth, %s4 : f32
    vyre.store @a[%c] = %v : f32
  }
}
