vyre.program @produce workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[256]
  vyre.buffer @t binding 1 write_only : ui32[256]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  vyre.let @kept = %v : ui32
  %k = vyre.var @kept : ui32
  vyre.store @t[%i] = %k : ui32
}
vyre.program @reverse workgroup_size [64, 1, 1] {
  vyre.buffer @t binding 0 read_only : ui32[256]
  vyre.buffer @out binding 1 write_only : ui32[256]
  %i = vyre.invocation_id x
  %c255 = vyre.const 255 : ui32
  %j = vyre.sub %c255, %i : ui32
  %v = vyre.load @t[%j] : ui32
  vyre.store @out[%i] = %v : ui32
}

