#version 450
// Reduction kernel skeleton: out[o] = finish(combine over r < KILN_R of load(o, r)).
// Codegen supplies kiln_extensions.glsl, and kiln_kernel.glsl with the bindings,
//   ACC_T kiln_load(uint o, uint r)     the fused prologue, read at output o, reduced index r
//   void kiln_store(uint o, ACC_T acc)  finishing (e.g. mean's division) and the store
// and the macros KILN_LOCAL_SIZE, KILN_OUTPUTS, KILN_R, ACC_T, KILN_INIT, KILN_COMBINE(a, b),
// KILN_STEPS (loads per loop iteration of a workgroup reduce) and KILN_MORE_STEPS (the loads
// after the first).
// KILN_WORKGROUP_REDUCE: one workgroup per output with a shared-memory tree; otherwise one
// invocation per output.
#extension GL_GOOGLE_include_directive : require
#include "kiln_extensions.glsl"
#include "common/kiln_common.glsl"

layout(local_size_x = KILN_LOCAL_SIZE) in;

#include "kiln_kernel.glsl"

#if KILN_WORKGROUP_REDUCE
shared ACC_T kiln_partial[KILN_LOCAL_SIZE];

void main() {
  const uint lid = gl_LocalInvocationID.x;
  for (uint o = gl_WorkGroupID.x; o < KILN_OUTPUTS; o += gl_NumWorkGroups.x) {
    ACC_T acc = KILN_INIT;
    for (uint r = lid; r < KILN_R; r += KILN_LOCAL_SIZE * KILN_STEPS) {
      acc = KILN_COMBINE(acc, kiln_load(o, r));
      // KILN_STEPS > 1: the further loads of the iteration, written out (the loop limit
      // counts every loop's iterations).
      KILN_MORE_STEPS
    }
    kiln_partial[lid] = acc;
    barrier();
    for (uint s = KILN_LOCAL_SIZE / 2; s > 0; s >>= 1) {
      if (lid < s) kiln_partial[lid] = KILN_COMBINE(kiln_partial[lid], kiln_partial[lid + s]);
      barrier();
    }
    if (lid == 0) kiln_store(o, kiln_partial[0]);
    barrier();
  }
}
#else
void main() {
  const uint stride = gl_NumWorkGroups.x * KILN_LOCAL_SIZE;
  for (uint o = gl_GlobalInvocationID.x; o < KILN_OUTPUTS; o += stride) {
    ACC_T acc = KILN_INIT;
    for (uint r = 0; r < KILN_R; ++r) {
      acc = KILN_COMBINE(acc, kiln_load(o, r));
    }
    kiln_store(o, acc);
  }
}
#endif
