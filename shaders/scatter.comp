#version 450
// ScatterElements and ScatterND as a gather (one invocation per output element, grid-stride):
// the element starts as data's value, then combines, in the updates' row-major order, every
// update whose index lands on it, so duplicates resolve as in the interpreter (the last one
// wins with no reduction) and no atomics are needed. An index outside [-size, size) matches
// no element (the update is ignored; the interpreter reports it as an error). Codegen supplies
// kiln_extensions.glsl and kiln_kernel.glsl with the bindings and
//   void kiln_element(uint o)   computes and stores output element o
// and the macros KILN_LOCAL_SIZE and KILN_OUTPUTS.
#extension GL_GOOGLE_include_directive : require
#include "kiln_extensions.glsl"
#include "common/kiln_common.glsl"

layout(local_size_x = KILN_LOCAL_SIZE) in;

#include "kiln_kernel.glsl"

void main() {
  const uint stride = gl_NumWorkGroups.x * KILN_LOCAL_SIZE;
  for (uint o = gl_GlobalInvocationID.x; o < KILN_OUTPUTS; o += stride) kiln_element(o);
}
