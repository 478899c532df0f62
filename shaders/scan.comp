#version 450
// CumSum as a linear-work scan: the lines along the axis are split among teams of KILN_TEAM
// invocations (KILN_LOCAL_SIZE / KILN_TEAM lines per workgroup, grid-stride over groups of
// lines). A team walks its line in chunks of KILN_TEAM * KILN_PER positions: each invocation
// loads KILN_PER consecutive ones and scans them in registers, a Hillis-Steele scan of the
// invocations' sums in shared memory (ping-pong buffers, one barrier a step) gives each
// invocation the sum of the team's positions before its own, and the chunk's total moves the
// line's running carry. Positions run along the axis, or against it (KILN_REVERSE). A team of
// one invocation (short lines) scans its line alone, without shared memory or barriers.
// The chunk loop is the only loop that grows with the line (Kernel::loop_trips): the
// per-invocation steps and the scan steps are written out by codegen, since lavapipe ends an
// invocation's loops after 65535 iterations in total (docs/ops.md, "Loop limit").
// Codegen supplies kiln_extensions.glsl and kiln_kernel.glsl with the bindings and
//   ACC_T kiln_load(uint line, uint r)            element r along the axis of line `line`
//                                                 (the fused prologue), in the accumulator type
//   void kiln_store(uint line, uint r, ACC_T v)   stores the output element
//   KILN_LOAD_STEP, KILN_LOCAL_SCAN, KILN_STORE_STEP, KILN_TEAM_SCAN  the written-out steps
// and the macros KILN_LOCAL_SIZE, KILN_TEAM, KILN_PER, KILN_LINES, KILN_LEN, KILN_REVERSE,
// ACC_T, KILN_ADD(a, b) (ACC_T's sum), KILN_SHARED_SCAN (1 when KILN_TEAM > 1).
#extension GL_GOOGLE_include_directive : require
#include "kiln_extensions.glsl"
#include "common/kiln_common.glsl"

layout(local_size_x = KILN_LOCAL_SIZE) in;

#include "kiln_kernel.glsl"

#if KILN_SHARED_SCAN
shared ACC_T s_scan[2][KILN_LOCAL_SIZE];
#endif

// The axis index of scan position p.
uint kiln_axis_index(uint p) {
#if KILN_REVERSE
  return KILN_LEN - 1u - p;
#else
  return p;
#endif
}

void main() {
  const uint lid = gl_LocalInvocationID.x;
  const uint t = lid % KILN_TEAM;  // the invocation's place in its team
  const uint first = lid - t;      // the team's first invocation
  const uint len = KILN_LEN;
  const uint lines = KILN_LINES;
  const uint per_group = KILN_LOCAL_SIZE / KILN_TEAM;  // lines per workgroup
  const uint groups = lines / per_group + (lines % per_group != 0u ? 1u : 0u);
  const uint chunk = KILN_TEAM * KILN_PER;
  const uint chunks = len / chunk + (len % chunk != 0u ? 1u : 0u);
  for (uint lg = gl_WorkGroupID.x; lg < groups; lg += gl_NumWorkGroups.x) {
    const uint line = lg * per_group + lid / KILN_TEAM;
    const bool live = line < lines;  // the last group's spare teams still join the barriers
    ACC_T carry = ACC_T(0);
    for (uint c = 0u; c < chunks; ++c) {
      const uint c0 = c * chunk + t * KILN_PER;  // this invocation's first position
      KILN_LOAD_STEP
      ACC_T s = ACC_T(0);
      KILN_LOCAL_SCAN
#if KILN_SHARED_SCAN
      s_scan[0][lid] = s;
      barrier();
      KILN_TEAM_SCAN
#else
      const ACC_T before = ACC_T(0);
      const ACC_T total = s;
#endif
      const ACC_T base = KILN_ADD(carry, before);
      KILN_STORE_STEP
      carry = KILN_ADD(carry, total);
    }
  }
}
