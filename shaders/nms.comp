#version 450
// NonMaxSuppression's greedy selection (nms_select, codegen/lower_nms.cpp): one workgroup per
// (batch, class) row, grid-stride over the rows. The row's ranks (positions in its order by
// descending score) are dealt out to the invocations, rank r to invocation r % KILN_LOCAL_SIZE,
// which keeps whether each of its ranks is still a candidate as bits in private memory. Each
// step keeps the lowest candidate rank (kiln_next, an atomic minimum in shared memory), and
// every invocation drops its candidates that the kept box overlaps and offers its lowest
// remaining one for the next step, so a step costs ranks / KILN_LOCAL_SIZE checks per
// invocation and no invocation reads another's bits. Codegen supplies kiln_extensions.glsl and
// kiln_kernel.glsl with the bindings and
//   void kiln_row(uint row)   selects row `row`'s boxes (in uniform control flow: barriers)
// and the macros KILN_LOCAL_SIZE and KILN_ROWS.
#extension GL_GOOGLE_include_directive : require
#include "kiln_extensions.glsl"
#include "common/kiln_common.glsl"

layout(local_size_x = KILN_LOCAL_SIZE) in;

shared uint kiln_next;

#include "kiln_kernel.glsl"

void main() {
  for (uint row = gl_WorkGroupID.x; row < KILN_ROWS; row += gl_NumWorkGroups.x) kiln_row(row);
}
