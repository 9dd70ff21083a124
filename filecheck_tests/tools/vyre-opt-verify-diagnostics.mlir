// MLIR's -verify-diagnostics: the expected-* annotations of each chunk must match the
// diagnostics it produces exactly; then the status is 0 and only the chunks that
// succeeded are printed. (Inputs/verify-diagnostics-wrong.mlir: the failures.) Both
// cases run in one process (vyre_xdsl.testing.cli_batch).
// RUN: %python -m vyre_xdsl.testing.cli_batch %s %t > %t.out
// RUN: filecheck %s < %t.out

// CASE wrong: vyre-opt %S/Inputs/verify-diagnostics-wrong.mlir --split-input-file --verify-diagnostics
// CHECK-LABEL: == wrong: exit 1
// CHECK-NEXT: -- stderr
// CHECK-NEXT: verify-diagnostics-wrong.mlir:4: error: expected error "this error never comes" was not produced at line 5
// CHECK-NEXT: verify-diagnostics-wrong.mlir:14:3: error: unexpected error: store to read_only buffer @x
// CHECK-NEXT: verify-diagnostics-wrong.mlir:24:3: error: mismatched error: expected "store to write_only buffer", got error "store to read_only buffer @x"
// CHECK-NEXT: verify-diagnostics-wrong.mlir:33:3: error: 'error' diagnostic emitted when expecting a 'warning'
// CHECK-NEXT: verify-diagnostics-wrong.mlir:43:3: error: unexpected error: store to read_only buffer @x
// CHECK-NEXT: verify-diagnostics-wrong.mlir:42: error: expected error "store to read_only buffer @x" was not produced at line 44
// CHECK-NOT: {{.}}

// CASE good: vyre-opt %s --split-input-file --verify-diagnostics
// CHECK-LABEL: == good: exit 0

// A chunk without annotations must produce no diagnostic; its output is printed.
// CHECK: vyre.program @fine
// CHECK-NOT: error
vyre.program @fine workgroup_size [1, 1, 1] {
  vyre.buffer @o binding 0 write_only : ui32[1]
}

// -----

// Same line, @+N, @-N, @above, @below, and two diagnostics from one chunk.
vyre.program @p workgroup_size [1, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[4]
  %i = vyre.invocation_id x
  %v = vyre.const 1.0 : f32
  vyre.store @x[%i] = %v : f32 // expected-error {{store to read_only buffer @x}}
  // expected-error @+2 {{store to read_only buffer @x}}
  // a comment between the annotation and its line
  vyre.store @x[%i] = %v : f32
  vyre.store @x[%i] = %v : f32
  // expected-error @-1 {{read_only buffer}}
  vyre.store @x[%i] = %v : f32
  // expected-error@above {{store to read_only}}
  // expected-error@below {{store to read_only}}
  vyre.store @x[%i] = %v : f32
}

// -----

// A regular expression in {{...}} with expected-error-re; a parse error.
vyre.program @q workgroup_size [1, 1, 1] {
  // expected-error-re @+1 {{unknown op 'vyre.{{[a-z]+}}'; the vyre dialect has no such op}}
  "vyre.frobnicate"() : () -> ()
}

// -----

// Chunk order is kept: one separator per chunk, the diagnosed chunks print nothing.
// CHECK: {{^}}// {{-----}}
// CHECK-NEXT: {{^}}// {{-----}}
// CHECK-NEXT: {{^}}// {{-----}}
// CHECK-NEXT: builtin.module {
// CHECK-NEXT: vyre.program @last
vyre.program @last workgroup_size [64, 1, 1] {
  vyre.buffer @t binding 0 write_only : ui32[64]
  %i = vyre.invocation_id x
  vyre.store @t[%i] = %i : ui32
}
