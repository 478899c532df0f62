#version 450
// Elementwise kernel skeleton. Codegen supplies:
//   kiln_extensions.glsl  #extension lines the fused body needs (16/8-bit storage, int64)
//   kiln_kernel.glsl      buffer bindings and `void kiln_element(uint g)`, which computes and
//                         stores element (or vec4 lane group) g
// and the macros KILN_LOCAL_SIZE and KILN_TOTAL (number of elements or vec4 groups).
#extension GL_GOOGLE_include_directive : require
#include "kiln_extensions.glsl"
#include "common/kiln_common.glsl"

layout(local_size_x = KILN_LOCAL_SIZE) in;

#include "kiln_kernel.glsl"

void main() {
  const uint stride = gl_NumWorkGroups.x * KILN_LOCAL_SIZE;
  for (uint g = gl_GlobalInvocationID.x; g < KILN_TOTAL; g += stride) {
    kiln_element(g);
  }
}
