#version 450
// Window ops (conv, max_pool, avg_pool) over NC[D]HW tensors: one invocation per output element
// (grid-stride), looping over its window; spatial dims are always three here, the missing
// leading ones of a 1-D or 2-D op having size 1 and a trivial window. Codegen supplies
// kiln_extensions.glsl and kiln_kernel.glsl with the bindings and
//   ACC_T kiln_x(uint n, uint c, uint p0, uint p1, uint p2)  the input (fused prologue)
//   float kiln_w(uint co, uint ci, uint k0, uint k1, uint k2)  conv: the weight
//   float kiln_bias(uint co)                                   conv: the bias (or 0)
//   void kiln_store(uint o, ACC_T v)                           the store
// and the macros KILN_LOCAL_SIZE, KILN_OUTPUTS, KILN_C_OUT (output channels), KILN_I0..2 and
// KILN_O0..2 (input and output spatial sizes; KILN_DIV_O0(t) / KILN_MOD_O0(t) .. divide by
// them, as KILN_DIV_C_OUT / KILN_MOD_C_OUT and the conv's _W_BLOCKS, _CO_BLOCKS and _GROUPS
// do), KILN_K0..2, KILN_S0..2, KILN_P0..2 (begin pads), KILN_PE0..2 (end pads), KILN_D0..2
// (dilations), KILN_MODE (0 conv, 1 max, 2 avg, 3 the max's flat input index), ACC_T,
// KILN_LOWEST (max: the empty window's value), KILN_MAX(a, b), KILN_TAKE(a, v) (index: v
// replaces the maximum a), KILN_COLUMN_MAJOR (index: storage_order), KILN_CG / KILN_OG (conv:
// input and output channels per group) and KILN_COUNT_INCLUDE_PAD (avg), KILN_SEG (conv: the inputs a position block's windows span along the last dim, when
// loading them once takes fewer loads than one per tap and position; else 0). Mode 3's
// kiln_store takes the int64 index, KILN_INDEX(uint).
#extension GL_GOOGLE_include_directive : require
#include "kiln_extensions.glsl"
#include "common/kiln_common.glsl"

layout(local_size_x = KILN_LOCAL_SIZE) in;

#include "kiln_kernel.glsl"

// Window positions of one dim inside [lo, hi) (avg_pool's padded count).
int kiln_count(int base, int k, int dil, int lo, int hi) {
  int c = 0;
  for (int i = 0; i < k; ++i) {
    const int p = base + i * dil;
    c += (p >= lo && p < hi) ? 1 : 0;
  }
  return c;
}

#if KILN_MODE == 0
// Conv: each invocation computes KILN_CO_BLOCK output channels of one group at KILN_W_BLOCK
// consecutive positions of the last spatial dim, so one input load feeds KILN_CO_BLOCK FMAs and
// one weight load KILN_W_BLOCK (storage-buffer loads are what costs on lavapipe).
#define KILN_CO_BLOCKS ((KILN_OG + (KILN_CO_BLOCK - 1u)) / KILN_CO_BLOCK)
#define KILN_W_BLOCKS ((KILN_O2 + (KILN_W_BLOCK - 1u)) / KILN_W_BLOCK)
void main() {
  const uint stride = gl_NumWorkGroups.x * KILN_LOCAL_SIZE;
  const int i0 = int(KILN_I0), i1 = int(KILN_I1), i2 = int(KILN_I2);
  const uint groups = KILN_C_OUT / KILN_OG;
  const uint items = KILN_N * groups * KILN_CO_BLOCKS * KILN_O0 * KILN_O1 * KILN_W_BLOCKS;
  for (uint it = gl_GlobalInvocationID.x; it < items; it += stride) {
    uint t = it;
    const uint wb = KILN_MOD_W_BLOCKS(t);
    t = KILN_DIV_W_BLOCKS(t);
    const uint q1 = KILN_MOD_O1(t);
    t = KILN_DIV_O1(t);
    const uint q0 = KILN_MOD_O0(t);
    t = KILN_DIV_O0(t);
    const uint cb = KILN_MOD_CO_BLOCKS(t);
    t = KILN_DIV_CO_BLOCKS(t);
    const uint g = KILN_MOD_GROUPS(t);
    const uint n = KILN_DIV_GROUPS(t);
    const uint co0 = g * KILN_OG + cb * KILN_CO_BLOCK;
    const uint nco = min(KILN_CO_BLOCK, KILN_OG - cb * KILN_CO_BLOCK);
    const uint q20 = wb * KILN_W_BLOCK;
    const int b0 = int(q0 * KILN_S0) - KILN_P0;
    const int b1 = int(q1 * KILN_S1) - KILN_P1;
    const uint ci0 = g * KILN_CG;
    float acc[KILN_CO_BLOCK][KILN_W_BLOCK];
    for (uint j = 0u; j < KILN_CO_BLOCK; ++j)
      for (uint q = 0u; q < KILN_W_BLOCK; ++q) acc[j][q] = 0.0;
    for (uint ci = 0u; ci < KILN_CG; ++ci) {
      for (int k0 = 0; k0 < KILN_K0; ++k0) {
        const int p0 = b0 + k0 * KILN_D0;
        if (p0 < 0 || p0 >= i0) continue;
        for (int k1 = 0; k1 < KILN_K1; ++k1) {
          const int p1 = b1 + k1 * KILN_D1;
          if (p1 < 0 || p1 >= i1) continue;
#if KILN_SEG > 0
          // The row's inputs under the block's windows, loaded once: window k2 of position q
          // reads element q * S2 + k2 * D2 (fewer loads than a load per tap and position).
          float xs[KILN_SEG];
          const int s0 = int(q20 * KILN_S2) - KILN_P2;
          for (int s = 0; s < KILN_SEG; ++s) {
            const int p2 = s0 + s;
            xs[s] = (p2 >= 0 && p2 < i2) ? kiln_x(n, ci0 + ci, uint(p0), uint(p1), uint(p2))
                                         : 0.0;
          }
          for (int k2 = 0; k2 < KILN_K2; ++k2) {
            for (uint j = 0u; j < KILN_CO_BLOCK; ++j) {
              const float wv = j < nco ? kiln_w(co0 + j, ci, uint(k0), uint(k1), uint(k2)) : 0.0;
              for (uint q = 0u; q < KILN_W_BLOCK; ++q)
                acc[j][q] += xs[int(q * KILN_S2) + k2 * KILN_D2] * wv;
            }
          }
#else
          for (int k2 = 0; k2 < KILN_K2; ++k2) {
            float xv[KILN_W_BLOCK];
            for (uint q = 0u; q < KILN_W_BLOCK; ++q) {
              const int p2 = int((q20 + q) * KILN_S2) - KILN_P2 + k2 * KILN_D2;
              xv[q] = (p2 >= 0 && p2 < i2) ? kiln_x(n, ci0 + ci, uint(p0), uint(p1), uint(p2))
                                           : 0.0;
            }
            for (uint j = 0u; j < KILN_CO_BLOCK; ++j) {
              const float wv = j < nco ? kiln_w(co0 + j, ci, uint(k0), uint(k1), uint(k2)) : 0.0;
              for (uint q = 0u; q < KILN_W_BLOCK; ++q) acc[j][q] += xv[q] * wv;
            }
          }
#endif
        }
      }
    }
    for (uint j = 0u; j < nco; ++j) {
      const uint co = co0 + j;
      const float bias = kiln_bias(co);
      const uint row = ((n * KILN_C_OUT + co) * KILN_O0 + q0) * KILN_O1 + q1;
      for (uint q = 0u; q < KILN_W_BLOCK; ++q)
        if (q20 + q < KILN_O2) kiln_store(row * KILN_O2 + q20 + q, acc[j][q] + bias);
    }
  }
}
#else
void main() {
  const uint stride = gl_NumWorkGroups.x * KILN_LOCAL_SIZE;
  const int i0 = int(KILN_I0), i1 = int(KILN_I1), i2 = int(KILN_I2);
  for (uint o = gl_GlobalInvocationID.x; o < KILN_OUTPUTS; o += stride) {
    uint t = o;
    const uint q2 = KILN_MOD_O2(t);
    t = KILN_DIV_O2(t);
    const uint q1 = KILN_MOD_O1(t);
    t = KILN_DIV_O1(t);
    const uint q0 = KILN_MOD_O0(t);
    t = KILN_DIV_O0(t);
    const uint c = KILN_MOD_C_OUT(t);
    const uint n = KILN_DIV_C_OUT(t);
    const int b0 = int(q0 * KILN_S0) - KILN_P0;
    const int b1 = int(q1 * KILN_S1) - KILN_P1;
    const int b2 = int(q2 * KILN_S2) - KILN_P2;
#if KILN_MODE == 1 || KILN_MODE == 3
    ACC_T acc = KILN_LOWEST;
    uint arg = 0xffffffffu;  // max_pool_indices: the spatial offset of the maximum
#else
    ACC_T acc = ACC_T(0);
    int count = 0;
#endif
    for (int k0 = 0; k0 < KILN_K0; ++k0) {
      const int p0 = b0 + k0 * KILN_D0;
      if (p0 < 0 || p0 >= i0) continue;
      for (int k1 = 0; k1 < KILN_K1; ++k1) {
        const int p1 = b1 + k1 * KILN_D1;
        if (p1 < 0 || p1 >= i1) continue;
        for (int k2 = 0; k2 < KILN_K2; ++k2) {
          const int p2 = b2 + k2 * KILN_D2;
          if (p2 < 0 || p2 >= i2) continue;
          const ACC_T v = kiln_x(n, c, uint(p0), uint(p1), uint(p2));
#if KILN_MODE == 1
          acc = KILN_MAX(acc, v);
#elif KILN_MODE == 3
          if (KILN_TAKE(acc, v) || arg == 0xffffffffu) {
            acc = v;
#if KILN_COLUMN_MAJOR
            arg = (uint(p2) * uint(i1) + uint(p1)) * uint(i0) + uint(p0);
#else
            arg = (uint(p0) * uint(i1) + uint(p1)) * uint(i2) + uint(p2);
#endif
          }
#else
          acc += v;
          ++count;
#endif
        }
      }
    }
#if KILN_MODE == 2
#if KILN_COUNT_INCLUDE_PAD
    count = kiln_count(b0, KILN_K0, KILN_D0, -KILN_P0, i0 + KILN_PE0) *
            kiln_count(b1, KILN_K1, KILN_D1, -KILN_P1, i1 + KILN_PE1) *
            kiln_count(b2, KILN_K2, KILN_D2, -KILN_P2, i2 + KILN_PE2);
#endif
    acc /= float(count);
#endif
#if KILN_MODE == 3
    const uint plane = uint(i0) * uint(i1) * uint(i2);
    kiln_store(o, KILN_INDEX((n * KILN_C_OUT + c) * plane + (arg == 0xffffffffu ? 0u : arg)));
#else
    kiln_store(o, acc);
#endif
  }
}
#endif
