#version 450
// NonMaxSuppression's greedy selection (nms_select, codegen/lower_nms.cpp): one workgroup per
// (batch, class) row, grid-stride over the rows. The row's ranks (positions in its order by
// descending score) are dealt out to the invocations, rank r to invocation r % KILN_LOCAL_SIZE,
// which keeps whether each of its ranks is still a candidate in the row's output element r
// (the rank's box, or -1). Each step keeps the lowest candidate rank (kiln_next, an atomic
// minimum in shared memory; the kept box goes to the row's next output element, one at or
// below that rank, which no invocation reads again, written by that element's owner), and
// every invocation drops its candidates above it that the kept box overlaps and offers its
// lowest remaining one for the next step: ranks / KILN_LOCAL_SIZE checks per invocation a step.
// Every output element is written and read by its owner alone. Codegen supplies kiln_extensions.glsl and
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
