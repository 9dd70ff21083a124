// RUN: not vyre-opt %s --split-input-file 2>&1 | filecheck %s
// RUN: not vyre-opt - < /dev/null 2>&1 | filecheck %s --check-prefix=EMPTY
// RUN: %python -c "import sys; sys.stdout.buffer.write(b'vyre.program @p workgroup_size [1, 1, 1] {\n  // caf\xe9\n}\n')" > %t.latin1.mlir
// RUN: not vyre-opt %t.latin1.mlir 2>&1 | filecheck %s --check-prefix=UTF8
// RUN: not vyre-run %t.latin1.mlir 2>&1 | filecheck %s --check-prefix=UTF8
// RUN: not vyre-compile %t.latin1.mlir -o %t.vkb 2>&1 | filecheck %s --check-prefix=UTF8
// Parse errors name the mistake and its fix, located where the mistake is.

// EMPTY: <stdin>:1:1: error: empty input: expected a 'vyre.program' (e.g. 'vyre.program @main workgroup_size [64, 1, 1] { ... }')
// UTF8: latin1.mlir:2:9: error: invalid UTF-8 (byte 0xe9 at byte offset 51); vyre source files must be UTF-8 text
// UTF8-NOT: Traceback

// CHECK: parse-errors.mlir:[[# @LINE + 1]]:17: error: expected 'workgroup_size [X, Y, Z]' after @p, e.g. 'vyre.program @p workgroup_size [64, 1, 1] { ... }'
vyre.program @p {
  vyre.buffer @x binding 0 read_write : ui32[64]
}

// -----

vyre.program @p workgroup_size [64, 1, 1] {
// CHECK: parse-errors.mlir:[[# @LINE + 1]]:41: error: unknown type 'u32'; vyre element types are ui8, ui16, ui32, ui64, si8, si16, si32, si64, f16, bf16, f32, f64, i1, vector<2xui32>, vector<4xui32>, vector<4xf32>
  vyre.buffer @x binding 0 read_write : u32[64]
}

// -----

vyre.program @p workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_write : ui32[64]
  %i = vyre.invocation_id x
// CHECK: parse-errors.mlir:[[# @LINE + 1]]:23: error: use of undefined value %zz: define it before this use
  vyre.store @x[%i] = %zz : ui32
}

// -----

vyre.program @p workgroup_size [64, 1, 1] {
  %i = vyre.invocation_id x
// CHECK: parse-errors.mlir:[[# @LINE + 1]]:8: error: unknown op 'vyre.mull'; did you mean 'vyre.mul'?
  %m = vyre.mull %i, %i : ui32
// CHECK-NEXT: {{^}}  %m = vyre.mull %i, %i : ui32
// CHECK-NEXT: {{^}}       ^^^^^^^^^{{$}}
}

// -----

vyre.program @p workgroup_size [64, 1, 1] {
// CHECK: parse-errors.mlir:[[# @LINE + 1]]:15: error: unterminated string literal: close it with '"' on the same line
  vyre.region "gen {
  }
}

// -----

vyre.program @p workgroup_size [64, 1, 1] {
  %i = vyre.invocation_id x
// CHECK: parse-errors.mlir:[[# @LINE + 1]]:3: error: expected an operation or the '}' that closes the '{' at [[# @LINE - 2]]:43, got '42'
  42
}

// -----

// A type an op's format constrains, checked while parsing.
vyre.program @p workgroup_size [64, 1, 1] {
  %a = vyre.const 1.5 : f32
// CHECK: parse-errors.mlir:[[# @LINE + 1]]:17: error: operand is used with type i1, but has been previously used or defined with type f32
  %r = vyre.fma %a, %a, %a : i1
}

// -----

// CHECK: parse-errors.mlir:[[# @LINE + 1]]:43: error: missing '}': the '{' at [[# @LINE + 1]]:43 is never closed
vyre.program @p workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_write : ui32[64]
  %i = vyre.invocation_id x
  vyre.store @x[%i] = %i : ui32
