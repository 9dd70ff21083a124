// Every bad input gives one clear message on stderr, exit status 1, no traceback
// and no output file. The cases run in one process (vyre_xdsl.testing.cli_batch);
// the last RUN lines launch the real executable.

// RUN: %python -c "import numpy as np; np.save('%t.a.npy', np.arange(8, dtype=np.int32)); np.save('%t.b.npy', np.array([1, 2, 3, 0, 5, 0, 7, 8], np.int32)); np.save('%t.b1.npy', np.ones(8, np.int32)); np.save('%t.f.npy', np.ones(8, np.float32)); np.save('%t.short.npy', np.ones(3, np.int32)); open('%t.txt', 'w').write('not an array'); open('%t.bad.mlir', 'w').write('vyre.program @p workgroup_size [1, 1, 1] {\n  vyre.buffer @o binding 0 write_only : ui32[1]\n  %%z = vyre.const 0 : ui32\n  %%f = vyre.const 1.0 : f32\n  vyre.store @o[%%z] = %%f : f32\n}\n'); open('%t.bad2.mlir', 'w').write('vyre.program @p workgroup_size [1, 1, 1] {\n  vyre.buffer @o binding 0 bogus : ui32[1]\n}\n')"
// RUN: rm -rf %t.outdir
// RUN: %python -m vyre_xdsl.testing.cli_batch %s %t > %t.out
// RUN: filecheck %s < %t.out
// RUN: not grep Traceback %t.out
// A trap leaves no output directory behind.
// RUN: not ls %t.outdir

// CASE missing: vyre-run %s --backend reference --input a=%t.a.npy
// CHECK-LABEL: == missing: exit 1
// CHECK-NEXT: -- stderr
// CHECK-NEXT: vyre-run: error: missing input for buffer 'b': expected 8 int32 elements (si32)

// CASE dtype: vyre-run %s --backend reference --input a=%t.a.npy --input b=%t.f.npy
// CHECK-LABEL: == dtype: exit 1
// CHECK-NEXT: -- stderr
// CHECK-NEXT: vyre-run: error: input for buffer 'b' has dtype float32; expected 8 int32 elements (si32)

// CASE shape: vyre-run %s --backend reference --input a=%t.a.npy --input b=%t.short.npy
// CHECK-LABEL: == shape: exit 1
// CHECK-NEXT: -- stderr
// CHECK-NEXT: vyre-run: error: input for buffer 'b' has 3 elements; expected 8 int32 elements (si32)

// CASE unknown: vyre-run %s --backend reference --input a=%t.a.npy --input b=%t.b1.npy --input zz=%t.a.npy
// CHECK-LABEL: == unknown: exit 1
// CHECK-NEXT: -- stderr
// CHECK-NEXT: vyre-run: error: unknown buffer 'zz'; the module's buffers are a, b, q

// CASE unexpected: vyre-run %s --backend reference --input a=%t.a.npy --input b=%t.b1.npy --input q=%t.a.npy
// CHECK-LABEL: == unexpected: exit 1
// CHECK-NEXT: -- stderr
// CHECK-NEXT: vyre-run: error: buffer 'q' takes no input

// CASE spec: vyre-run %s --backend reference --input a
// CHECK-LABEL: == spec: exit 1
// CHECK-NEXT: -- stderr
// CHECK-NEXT: vyre-run: error: --input expects NAME=FILE.npy, got 'a'

// CASE twice: vyre-run %s --backend reference --input a=%t.a.npy --input a=%t.a.npy
// CHECK-LABEL: == twice: exit 1
// CHECK-NEXT: -- stderr
// CHECK-NEXT: vyre-run: error: --input gives buffer 'a' twice

// CASE nofile: vyre-run %s --backend reference --input a=%t.nope.npy
// CHECK-LABEL: == nofile: exit 1
// CHECK-NEXT: -- stderr
// CHECK-NEXT: vyre-run: error: cannot read input for buffer 'a' from {{.*}}nope.npy: No such file or directory

// CASE notnpy: vyre-run %s --backend reference --input a=%t.txt
// CHECK-LABEL: == notnpy: exit 1
// CHECK-NEXT: -- stderr
// CHECK-NEXT: vyre-run: error: input for buffer 'a': {{.*}}.txt is not a valid .npy array

// CASE nomodule: vyre-run %t.missing.mlir --backend reference
// CHECK-LABEL: == nomodule: exit 1
// CHECK-NEXT: -- stderr
// CHECK-NEXT: vyre-run: error: cannot read {{.*}}missing.mlir: No such file or directory

// CASE usage: vyre-run %s --random-inputs seven
// CHECK-LABEL: == usage: exit 1
// CHECK-NEXT: -- stderr
// CHECK: vyre-run: error: argument --random-inputs: invalid int value: 'seven'

// CASE bogus: vyre-run %s --bogus
// CHECK-LABEL: == bogus: exit 1
// CHECK-NEXT: -- stderr
// CHECK: vyre-run: error: unrecognized arguments: --bogus

// CASE backend: vyre-run %s --backend cuda
// CHECK-LABEL: == backend: exit 1
// CHECK-NEXT: -- stderr
// CHECK-NEXT: vyre-run: error: unknown backend 'cuda'; choose from reference, wgpu

// A trap: lane 3 divides by zero first.
// CASE trap: vyre-run %s --backend reference --input a=%t.a.npy --input b=%t.b.npy --output-dir %t.outdir
// CHECK-LABEL: == trap: exit 1
// CHECK-NEXT: -- stderr
// CHECK-NEXT: vyre-run: error: trap 'si32.div' at address 0 in invocation 3 in program @quotient

// An output directory that cannot be created.
// CASE outdir: vyre-run %s --backend reference --input a=%t.a.npy --input b=%t.b1.npy --output-dir %t.txt/sub
// CHECK-LABEL: == outdir: exit 1
// CHECK-NEXT: -- stderr
// CHECK-NEXT: vyre-run: error: cannot create output directory {{.*}}.txt/sub: Not a directory

// Parse and verifier errors point at the source.
// CASE verify: vyre-run %t.bad.mlir --backend reference
// CHECK-LABEL: == verify: exit 1
// CHECK-NEXT: -- stderr
// CHECK-NEXT: bad.mlir:5:3: error: buffer @o holds ui32, but a f32 is stored
// CHECK-NEXT: vyre.store @o[%z] = %f : f32
// CHECK-NEXT: ^
// CASE parse: vyre-run %t.bad2.mlir --backend reference
// CHECK-LABEL: == parse: exit 1
// CHECK-NEXT: -- stderr
// CHECK-NEXT: bad2.mlir:2:{{[0-9]+}}
// CHECK: expected access mode

// The real executable: a usage error and a trap, status 1 and one message.
// RUN: %python -c "import subprocess, sys; sys.exit(subprocess.run(['vyre-run', '%s', '--bogus']).returncode != 1)"
// RUN: not vyre-run %s --backend reference --input a=%t.a.npy --input b=%t.b.npy 2>&1 | filecheck %s --check-prefix=TRAP
// TRAP: vyre-run: error: trap 'si32.div' at address 0 in invocation 3 in program @quotient

vyre.program @quotient workgroup_size [4, 1, 1] {
  vyre.buffer @a binding 0 read_only : si32[8]
  vyre.buffer @b binding 1 read_only : si32[8]
  vyre.buffer @q binding 2 write_only : si32[8]
  %i = vyre.invocation_id x
  %x = vyre.load @a[%i] : si32
  %y = vyre.load @b[%i] : si32
  %r = vyre.div %x, %y : si32
  vyre.store @q[%i] = %r : si32
}
