#version 450
// Row normalisation: softmax, log_softmax or layer_norm over KILN_R elements of each of
// KILN_ROWS rows, one workgroup per row (grid-stride over rows). Codegen supplies
// kiln_extensions.glsl and kiln_kernel.glsl with the bindings and
//   float kiln_load(uint row, uint r)            the input (with its fused prologue)
//   void kiln_store(uint row, uint r, float v)   the store (layer_norm: scale and shift)
// and the macros KILN_LOCAL_SIZE (a power of two), KILN_ROWS, KILN_R, KILN_MODE
// (0 softmax, 1 log_softmax, 2 layer_norm), KILN_THREAD_ROWS: 1 runs one row per invocation
// with no shared memory or barriers (short rows), 0 one row per workgroup, and for layer_norm
// KILN_SQUARE(d) (a centred value's square), KILN_SHIFT(v) (the variance plus eps) and
// KILN_NORMALIZE(d, t) (a centred value over sqrt(t)): exactly the graph's expressions when
// the norm was spelled out as ops (FusionRule::kLayerNorm).
#extension GL_GOOGLE_include_directive : require
#include "kiln_extensions.glsl"
#include "common/kiln_common.glsl"

layout(local_size_x = KILN_LOCAL_SIZE) in;

#include "kiln_kernel.glsl"

shared float kiln_partial[KILN_LOCAL_SIZE];

// Workgroup-wide max / sum of one value per invocation; every invocation gets the result.
float kiln_wg_max(float v) {
  const uint lid = gl_LocalInvocationID.x;
  kiln_partial[lid] = v;
  barrier();
  for (uint s = KILN_LOCAL_SIZE / 2; s > 0; s >>= 1) {
    if (lid < s) kiln_partial[lid] = kiln_maximum(kiln_partial[lid], kiln_partial[lid + s]);
    barrier();
  }
  const float r = kiln_partial[0];
  barrier();
  return r;
}

float kiln_wg_sum(float v) {
  const uint lid = gl_LocalInvocationID.x;
  kiln_partial[lid] = v;
  barrier();
  for (uint s = KILN_LOCAL_SIZE / 2; s > 0; s >>= 1) {
    if (lid < s) kiln_partial[lid] += kiln_partial[lid + s];
    barrier();
  }
  const float r = kiln_partial[0];
  barrier();
  return r;
}

#if KILN_THREAD_ROWS
#define KILN_FIRST_ROW gl_GlobalInvocationID.x
#define KILN_ROW_STEP (gl_NumWorkGroups.x * KILN_LOCAL_SIZE)
#define KILN_LANE 0u
#define KILN_LANES 1u
#define kiln_row_max(v) (v)
#define kiln_row_sum(v) (v)
#else
#define KILN_FIRST_ROW gl_WorkGroupID.x
#define KILN_ROW_STEP gl_NumWorkGroups.x
#define KILN_LANE gl_LocalInvocationID.x
#define KILN_LANES KILN_LOCAL_SIZE
#define kiln_row_max(v) kiln_wg_max(v)
#define kiln_row_sum(v) kiln_wg_sum(v)
#endif

void main() {
  const uint lid = KILN_LANE;
  for (uint row = KILN_FIRST_ROW; row < KILN_ROWS; row += KILN_ROW_STEP) {
#if KILN_MODE == 2
    float s = 0.0;
    for (uint r = lid; r < KILN_R; r += KILN_LANES) s += kiln_load(row, r);
    const float mean = kiln_row_sum(s) / float(KILN_R);
    float q = 0.0;
    for (uint r = lid; r < KILN_R; r += KILN_LANES) {
      const float d = kiln_load(row, r) - mean;
      q += KILN_SQUARE(d);
    }
    const float t = KILN_SHIFT(kiln_row_sum(q) / float(KILN_R));
    for (uint r = lid; r < KILN_R; r += KILN_LANES)
      kiln_store(row, r, KILN_NORMALIZE(kiln_load(row, r) - mean, t));
#else
    float m = -KILN_INF;
    for (uint r = lid; r < KILN_R; r += KILN_LANES) m = kiln_maximum(m, kiln_load(row, r));
    m = kiln_row_max(m);
    float s = 0.0;
    for (uint r = lid; r < KILN_R; r += KILN_LANES) s += kiln_exp_nan(kiln_load(row, r) - m);
    s = kiln_row_sum(s);
#if KILN_MODE == 0
    const float inv = 1.0 / s;
    for (uint r = lid; r < KILN_R; r += KILN_LANES)
      kiln_store(row, r, kiln_exp_mul(kiln_load(row, r) - m, inv));
#else
    const float log_s = log(s);
    for (uint r = lid; r < KILN_R; r += KILN_LANES)
      kiln_store(row, r, kiln_load(row, r) - m - log_s);
#endif
#endif
  }
}
