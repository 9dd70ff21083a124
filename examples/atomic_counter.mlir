// Counts the elements above a threshold with an atomic add, and keeps the
// largest element seen with an atomic max.
vyre.program @count_above workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[4096]
  vyre.buffer @stats binding 1 write_only output : ui32[2]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %threshold = vyre.const 1000 : ui32
  %above = vyre.gt %v, %threshold : ui32
  %zero = vyre.const 0 : ui32
  %one = vyre.const 1 : ui32
  vyre.if %above {
    %old = vyre.atomic add @stats[%zero], %one : ui32
  }
  %prev = vyre.atomic max @stats[%one], %v : ui32
}
