#version 450
// Conv as an implicit GEMM, for f32 convolutions without groups: C[co, p] = sum over k of
// W[co, k] * X[k, p], where p runs over the output positions (n, o0, o1, o2), k over the
// (input channel, window offset) pairs, and X[k, p] is the input element under window offset k
// at position p (0 in the padding), gathered where it is read: the im2col matrix is never
// stored. The same register blocking as the row-block matmul (matmul_rowblock.comp): each
// invocation computes 32 output channels (rows) at KILN_COLS positions; lane l of each subgroup
// loads the weights of channels i0 + l, i0 + 8 + l, i0 + 16 + l, i0 + 24 + l and every lane takes
// channel r's weight with subgroupShuffle(.., r % 8), so one gathered input value feeds 32 FMAs
// and one weight load feeds 8 lanes' worth of them. Row blocks run along x (the axis drivers
// walk first), so workgroups running together read the same input positions.
//
// Codegen supplies kiln_extensions.glsl, and kiln_kernel.glsl with the bindings, the functions
// of window.comp (kiln_x, kiln_w, kiln_bias, kiln_store) and
//   void kiln_conv_block(uint row_block, uint col_block)
// and the macros KILN_LOCAL_SIZE, KILN_ROW_BLOCKS, KILN_COL_BLOCKS and those of window.comp.
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#include "kiln_extensions.glsl"
#include "common/kiln_common.glsl"

layout(local_size_x = KILN_LOCAL_SIZE) in;

#include "kiln_kernel.glsl"

void main() {
  for (uint rb = gl_WorkGroupID.x; rb < KILN_ROW_BLOCKS; rb += gl_NumWorkGroups.x) {
    for (uint cb = gl_WorkGroupID.y; cb < KILN_COL_BLOCKS; cb += gl_NumWorkGroups.y) {
      kiln_conv_block(rb, cb);
    }
  }
}
