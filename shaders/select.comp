#version 450
// MaskedSelect as one workgroup's stream compaction, in row-major order and without atomics,
// so the result is the interpreter's on every device. The workgroup walks the input in chunks
// of KILN_LOCAL_SIZE * KILN_PER_INVOCATION elements: each invocation counts the selected
// elements of its KILN_PER_INVOCATION consecutive ones, a scan in shared memory gives each
// invocation its first output position, and the chunk's total moves the base. After the last
// chunk the count goes to the element after the largest possible result (the runtime reads it
// back to learn the result's length). The chunk loop is the only loop: the per-invocation and
// scan steps are written out by codegen, since lavapipe ends an invocation's loops after 65535
// iterations in total (KILN_MAX_CHUNKS; beyond it the count reads as ~0u, an error at run time).
// Codegen supplies kiln_extensions.glsl and kiln_kernel.glsl with the bindings and
//   bool kiln_mask(uint i)          the mask at flat index i
//   void kiln_copy(uint i, uint p)  stores element i of the data at output position p
//   void kiln_count(uint c)         stores the count
//   KILN_COUNT_STEP, KILN_COPY_STEP, KILN_SCAN  the written-out steps
// and the macros KILN_LOCAL_SIZE, KILN_PER_INVOCATION, KILN_INPUTS, KILN_MAX_CHUNKS.
#extension GL_GOOGLE_include_directive : require
#include "kiln_extensions.glsl"
#include "common/kiln_common.glsl"

layout(local_size_x = KILN_LOCAL_SIZE) in;

shared uint s_scan[KILN_LOCAL_SIZE];

#include "kiln_kernel.glsl"

void main() {
  const uint lid = gl_LocalInvocationID.x;
  const uint n = KILN_INPUTS;
  const uint chunk = KILN_LOCAL_SIZE * KILN_PER_INVOCATION;
  if ((n + chunk - 1u) / chunk > KILN_MAX_CHUNKS) {
    if (lid == 0u) kiln_count(~0u);
    return;
  }
  uint base = 0u;
  for (uint c0 = 0u; c0 < n; c0 += chunk) {
    const uint first = c0 + lid * KILN_PER_INVOCATION;
    uint mine = 0u;
    KILN_COUNT_STEP
    s_scan[lid] = mine;
    barrier();
    KILN_SCAN
    uint p = base + s_scan[lid] - mine;  // inclusive scan minus this invocation's count
    KILN_COPY_STEP
    base += s_scan[KILN_LOCAL_SIZE - 1u];
    barrier();  // every invocation has read s_scan before the next chunk writes it
  }
  if (lid == 0u) kiln_count(base);
}
