// Per-workgroup sum: each workgroup of 64 invocations reduces its 64 elements
// in workgroup memory (a tree with a barrier per level) and writes one partial sum.
vyre.program @workgroup_sum workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[4096]
  vyre.buffer @partial binding 1 write_only : ui32[64]
  vyre.buffer @tile workgroup : ui32[64]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %v = vyre.load @x[%i] : ui32
  vyre.store @tile[%l] = %v : ui32
  vyre.barrier
  %zero = vyre.const 0 : ui32
  %levels = vyre.const 6 : ui32
  %half = vyre.const 32 : ui32
  vyre.loop @level = %zero to %levels {
    %k = vyre.var @level : ui32
    %stride = vyre.shr %half, %k : ui32
    %active = vyre.lt %l, %stride : ui32
    vyre.if %active {
      %j = vyre.add %l, %stride : ui32
      %a = vyre.load @tile[%l] : ui32
      %b = vyre.load @tile[%j] : ui32
      %s = vyre.add %a, %b : ui32
      vyre.store @tile[%l] = %s : ui32
    }
    vyre.barrier
  }
  %first = vyre.eq %l, %zero : ui32
  vyre.if %first {
    %total = vyre.load @tile[%zero] : ui32
    vyre.store @partial[%w] = %total : ui32
  }
}
