// Every bad input gives one clear message on stderr, exit status 1, no traceback
// and no output file.

// RUN: %python -c "import numpy as np; np.save('%t.a.npy', np.arange(8, dtype=np.int32)); np.save('%t.b.npy', np.array([1, 2, 3, 0, 5, 0, 7, 8], np.int32)); np.save('%t.b1.npy', np.ones(8, np.int32)); np.save('%t.f.npy', np.ones(8, np.float32)); np.save('%t.short.npy', np.ones(3, np.int32)); open('%t.txt', 'w').write('not an array')"

// RUN: not vyre-run %s --backend reference --input a=%t.a.npy 2>&1 | filecheck %s --check-prefix=MISSING
// MISSING: vyre-run: error: missing input for buffer 'b': expected 8 int32 elements (si32)
// MISSING-NOT: Traceback

// RUN: not vyre-run %s --backend reference --input a=%t.a.npy --input b=%t.f.npy 2>&1 | filecheck %s --check-prefix=DTYPE
// DTYPE: vyre-run: error: input for buffer 'b' has dtype float32; expected 8 int32 elements (si32)

// RUN: not vyre-run %s --backend reference --input a=%t.a.npy --input b=%t.short.npy 2>&1 | filecheck %s --check-prefix=SHAPE
// SHAPE: vyre-run: error: input for buffer 'b' has 3 elements; expected 8 int32 elements (si32)

// RUN: not vyre-run %s --backend reference --input a=%t.a.npy --input b=%t.b1.npy --input zz=%t.a.npy 2>&1 | filecheck %s --check-prefix=UNKNOWN
// UNKNOWN: vyre-run: error: unknown buffer 'zz'; the module's buffers are a, b, q

// RUN: not vyre-run %s --backend reference --input a=%t.a.npy --input b=%t.b1.npy --input q=%t.a.npy 2>&1 | filecheck %s --check-prefix=UNEXPECTED
// UNEXPECTED: vyre-run: error: buffer 'q' takes no input

// RUN: not vyre-run %s --backend reference --input a 2>&1 | filecheck %s --check-prefix=SPEC
// SPEC: vyre-run: error: --input expects NAME=FILE.npy, got 'a'

// RUN: not vyre-run %s --backend reference --input a=%t.a.npy --input a=%t.a.npy 2>&1 | filecheck %s --check-prefix=TWICE
// TWICE: vyre-run: error: --input gives buffer 'a' twice

// RUN: not vyre-run %s --backend reference --input a=%t.nope.npy 2>&1 | filecheck %s --check-prefix=NOFILE
// NOFILE: vyre-run: error: cannot read input for buffer 'a' from {{.*}}nope.npy: No such file or directory

// RUN: not vyre-run %s --backend reference --input a=%t.txt 2>&1 | filecheck %s --check-prefix=NOTNPY
// NOTNPY: vyre-run: error: input for buffer 'a': {{.*}}.txt is not a valid .npy array

// RUN: not vyre-run %t.missing.mlir --backend reference 2>&1 | filecheck %s --check-prefix=NOMODULE
// NOMODULE: vyre-run: error: cannot read {{.*}}missing.mlir: No such file or directory

// RUN: not vyre-run %s --random-inputs seven 2>&1 | filecheck %s --check-prefix=USAGE
// USAGE: vyre-run: error: argument --random-inputs: invalid int value: 'seven'
// RUN: %python -c "import subprocess, sys; sys.exit(subprocess.run(['vyre-run', '%s', '--bogus']).returncode != 1)"

// RUN: not vyre-run %s --backend cuda 2>&1 | filecheck %s --check-prefix=BACKEND
// BACKEND: vyre-run: error: unknown backend 'cuda'; choose from reference, wgpu

// A trap: lane 3 divides by zero first. No output directory appears.
// RUN: rm -rf %t.outdir
// RUN: not vyre-run %s --backend reference --input a=%t.a.npy --input b=%t.b.npy --output-dir %t.outdir 2>&1 | filecheck %s --check-prefix=TRAP
// TRAP: vyre-run: error: trap 'si32.div' at address 0 in invocation 3 in program @quotient
// RUN: %python -c "import os; assert not os.path.exists('%t.outdir'), os.listdir('%t.outdir')"

// An output directory that cannot be created.
// RUN: not vyre-run %s --backend reference --input a=%t.a.npy --input b=%t.b1.npy --output-dir %t.txt/sub 2>&1 | filecheck %s --check-prefix=OUTDIR
// OUTDIR: vyre-run: error: cannot create output directory {{.*}}.txt/sub: Not a directory

// Parse and verifier errors point at the source.
// RUN: %python -c "open('%t.bad.mlir', 'w').write('vyre.program @p workgroup_size [1, 1, 1] {\n  vyre.buffer @o binding 0 write_only : ui32[1]\n  %%z = vyre.const 0 : ui32\n  %%f = vyre.const 1.0 : f32\n  vyre.store @o[%%z] = %%f : f32\n}\n')"
// RUN: not vyre-run %t.bad.mlir --backend reference 2>&1 | filecheck %s --check-prefix=VERIFY
// VERIFY: bad.mlir:5:3: error: buffer @o holds ui32, but a f32 is stored
// VERIFY-NEXT: vyre.store @o[%z] = %f : f32
// VERIFY-NEXT: ^
// RUN: %python -c "open('%t.bad2.mlir', 'w').write('vyre.program @p workgroup_size [1, 1, 1] {\n  vyre.buffer @o binding 0 bogus : ui32[1]\n}\n')"
// RUN: not vyre-run %t.bad2.mlir --backend reference 2>&1 | filecheck %s --check-prefix=PARSE
// PARSE: bad2.mlir:2:{{[0-9]+}}
// PARSE: expected access mode

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
