#version 450
// Flash-style attention: O = softmax(chain(Q·Kᵀ))·V over the last two dims, batched over the
// leading ones, the scores and probabilities never stored. One invocation per query row keeps
// its row of Q and its row of the output accumulator in registers and walks the keys in blocks
// with an online softmax (running max and sum; the accumulator is rescaled once per block).
// Rows of K and V are shared across a subgroup: lane l loads elements l, l + L, ... of a row and
// every lane takes element d with subgroupShuffle(.., d % L), L = 8 (4 on devices whose subgroups
// are 4 wide: codegen/lower_attention.cpp), which costs a fraction of a load
// on lavapipe (docs/perf.md). Every lane of a workgroup has the same batch index and key, so the
// shuffles never read an inactive lane. A key block whose scores are -inf for every row of the
// subgroup (the future half of a causal mask) skips the V half of the work (subgroupAll).
//
// Codegen supplies kiln_extensions.glsl and kiln_kernel.glsl (bindings, the loads kiln_q,
// kiln_k, kiln_v with their fused producers, kiln_score with the fused chain, kiln_store, and
//   void kiln_attention(uint batch, uint row)
// ) and the macros KILN_LOCAL_SIZE, KILN_BATCHES and KILN_ROW_BLOCKS.
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_vote : require
#include "kiln_extensions.glsl"
#include "common/kiln_common.glsl"

layout(local_size_x = KILN_LOCAL_SIZE) in;

#include "kiln_kernel.glsl"

void main() {
  for (uint bt = gl_WorkGroupID.y; bt < KILN_BATCHES; bt += gl_NumWorkGroups.y) {
    for (uint rb = gl_WorkGroupID.x; rb < KILN_ROW_BLOCKS; rb += gl_NumWorkGroups.x) {
      kiln_attention(bt, rb * KILN_LOCAL_SIZE + gl_LocalInvocationID.x);
    }
  }
}
