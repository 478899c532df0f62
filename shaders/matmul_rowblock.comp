#version 450
// Row-block matmul skeleton for f32 C = A·B or A·Bᵀ when A and B are stored row-major buffers
// (no fused prologue). Codegen supplies kiln_extensions.glsl, and kiln_kernel.glsl with the
// bindings (b0 = C, b1 = A, b2 = B; vec4 views) and
//   void kiln_rowblock(uint row_block, uint col_block)
// which computes one workgroup tile of C; macros KILN_LOCAL_SIZE, KILN_ROW_BLOCKS,
// KILN_COL_BLOCKS and KILN_ROWS_ON_X.
//
// Why this shape (measured on lavapipe, docs/perf.md): loads from storage buffers cost tens of
// FMAs there while subgroupShuffle with a constant lane costs about one, so each invocation keeps
// a 32-row register block: lane l of every subgroup loads rows i0 + l, i0 + 8 + l, i0 + 16 + l
// and i0 + 24 + l of A as vec4 along K, and every lane takes row r's value with
// subgroupShuffle(.., r % 8). A product of at most 16 rows gets a block of 1, 2, 4, 8 or 16 rows
// instead (codegen/matmul_choice.h, rowblock_rows). No shared memory and no barriers. Grid-stride loops over tiles
// cover a capped grid. Row blocks run along x (KILN_ROWS_ON_X, the axis drivers walk first)
// when a workgroup's column panel of B (K rows x its columns) fits in a core's cache: workgroups
// that run at the same time then read the same panel and B leaves memory about once (the
// [512, 30000] vocabulary head: A·B 1.9-2.0x, A·Bᵀ 1.2x faster than with column blocks along
// x, which streams all of B once per row block). Larger panels put column blocks along x, so
// that A's row block is the data shared (docs/perf.md).
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#include "kiln_extensions.glsl"
#include "common/kiln_common.glsl"

layout(local_size_x = KILN_LOCAL_SIZE) in;

#include "kiln_kernel.glsl"

void main() {
#if KILN_ROWS_ON_X
  for (uint rb = gl_WorkGroupID.x; rb < KILN_ROW_BLOCKS; rb += gl_NumWorkGroups.x) {
    for (uint cb = gl_WorkGroupID.y; cb < KILN_COL_BLOCKS; cb += gl_NumWorkGroups.y) {
#else
  for (uint rb = gl_WorkGroupID.y; rb < KILN_ROW_BLOCKS; rb += gl_NumWorkGroups.y) {
    for (uint cb = gl_WorkGroupID.x; cb < KILN_COL_BLOCKS; cb += gl_NumWorkGroups.x) {
#endif
      kiln_rowblock(rb, cb);
    }
  }
}
