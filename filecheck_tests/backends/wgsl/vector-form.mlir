// RUN: %python -m vyre_xdsl.testing.cli_batch \
// RUN:   --run "vyre-opt %examples/axpy.mlir --lower -t wgsl > %t.scalar" \
// RUN:   --run "vyre-opt %examples/axpy.mlir --lower -p kernel-vectorize -t wgsl > %t.vec4" \
// RUN:   --run "vyre-opt %examples/axpy.mlir -p vyre-to-wgsl -t wgsl > %t.pipeline"
// RUN: filecheck %s --check-prefix=SCALAR < %t.scalar
// RUN: filecheck %s --check-prefix=VEC4 < %t.vec4
// RUN: filecheck %s --check-prefix=VEC4 < %t.pipeline
// The printer decides no vector form itself: plain vyre-lower leaves the kernel
// scalar (one element per invocation, the grid of 16 workgroups), and
// kernel-vectorize (which the vyre-to-wgsl pipeline runs) records the vec4 form
// and its launch grid of 4 workgroups, which the printer then prints.

// SCALAR:      // program workgroup [64, 1, 1], kernel workgroup [64, 1, 1], grid [16, 1, 1], count [@y]
// SCALAR-NOT:  vec4
// SCALAR:      @group(0) @binding(0) var<storage, read> b_x: array<f32>;
// SCALAR-NEXT: @group(0) @binding(1) var<storage, read_write> b_y: array<f32>;
// SCALAR:      b_y[v_i] = v_s;

// VEC4:      // program workgroup [64, 1, 1], kernel workgroup [64, 1, 1], grid [16, 1, 1], count [@y]
// VEC4-NEXT: // vec4 form: invocation i runs logical invocations 4i .. 4i+3; launch grid [4, 1, 1]
// VEC4-NEXT: @group(0) @binding(0) var<storage, read> b_x: array<vec4<f32>>;
// VEC4-NEXT: @group(0) @binding(1) var<storage, read_write> b_y: array<vec4<f32>>;
// VEC4:      b_y[vyre_invocation] = vec4<f32>(v_s, v_s_{{[0-9]+}}, v_s_{{[0-9]+}}, v_s_{{[0-9]+}});
