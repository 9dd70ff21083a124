vyre.program @p workgroup_size [1, 1, 1] {
  vyre.buffer @o binding 0 write_only : ui32[1]
  %a = vyre.const 7 : ui32
  %b = vyre.const 0 : ui32
  %c = vyre.div %a, %b : ui32
  %d = vyre.shl %a, %a : ui32
  vyre.store @o[%b] = %c : ui32
  vyre.store @o[%b] = %d : ui32
}
