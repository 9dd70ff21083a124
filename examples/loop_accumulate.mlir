// out[i] = sum of x[4i .. 4i+3], accumulated in a named local.
vyre.program @sum4 workgroup_size [32, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[4096]
  vyre.buffer @out binding 1 write_only : f32[1024]
  %i = vyre.invocation_id x
  %zero = vyre.const 0.0 : f32
  %lo = vyre.const 0 : ui32
  %four = vyre.const 4 : ui32
  %base = vyre.mul %i, %four : ui32
  vyre.let @acc = %zero : f32
  vyre.loop @k = %lo to %four {
    %k = vyre.var @k : ui32
    %j = vyre.add %base, %k : ui32
    %v = vyre.load @x[%j] : f32
    %a = vyre.var @acc : f32
    %s = vyre.add %a, %v : f32
    vyre.assign @acc = %s : f32
  }
  %total = vyre.var @acc : f32
  vyre.store @out[%i] = %total : f32
}
