vyre.program @p workgroup_size [1, 1, 1] {
  %x = vyre.frobnicate
}
