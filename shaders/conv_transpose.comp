#version 450
// ConvTranspose over NC[D]HW tensors as a gather: each invocation computes KILN_CO_BLOCK output
// channels of one group at one output position, summing, for every window tap whose source
// (o + pad - k * dilation) / stride is an exact input position, the group's input channels
// times the weight. Spatial dims are always three here, the missing leading ones of a 1-D or
// 2-D op having size 1 and a trivial window. Codegen supplies kiln_extensions.glsl and
// kiln_kernel.glsl with the bindings and
//   float kiln_x(uint n, uint c, uint p0, uint p1, uint p2)   the input (fused prologue)
//   float kiln_w(uint c, uint j, uint k0, uint k1, uint k2)   the weight [C, C_out / groups, K..]
//   float kiln_bias(uint co)                                  the bias (or 0)
//   void kiln_store(uint o, float v)                          the store
// and the macros KILN_LOCAL_SIZE, KILN_N, KILN_C_OUT, KILN_CG / KILN_OG (input and output
// channels per group), KILN_CO_BLOCK, KILN_I0..2 and KILN_O0..2 (input and output spatial
// sizes), KILN_K0..2, KILN_S0..2, KILN_P0..2 (begin pads, possibly negative), KILN_D0..2 and
// KILN_DIV_<d>(t) / KILN_MOD_<d>(t) for d = O0..2, CO_BLOCKS and GROUPS (t / d and t % d).
#extension GL_GOOGLE_include_directive : require
#include "kiln_extensions.glsl"
#include "common/kiln_common.glsl"

layout(local_size_x = KILN_LOCAL_SIZE) in;

#include "kiln_kernel.glsl"

#define KILN_CO_BLOCKS ((KILN_OG + (KILN_CO_BLOCK - 1u)) / KILN_CO_BLOCK)

// The input position tap k of output position o reads: (o + p - k * d) / s when that is an
// exact quotient in [0, n), else -1.
int kiln_source(int o, int k, int s, int p, int d, int n) {
  const int q = o + p - k * d;
  if (q < 0) return -1;
  const int i = q / s;
  return (i * s == q && i < n) ? i : -1;
}

void main() {
  const uint stride = gl_NumWorkGroups.x * KILN_LOCAL_SIZE;
  const int i0 = int(KILN_I0), i1 = int(KILN_I1), i2 = int(KILN_I2);
  const uint groups = KILN_C_OUT / KILN_OG;
  const uint items = KILN_N * groups * KILN_CO_BLOCKS * KILN_O0 * KILN_O1 * KILN_O2;
  for (uint it = gl_GlobalInvocationID.x; it < items; it += stride) {
    uint t = it;
    const uint q2 = KILN_MOD_O2(t);
    t = KILN_DIV_O2(t);
    const uint q1 = KILN_MOD_O1(t);
    t = KILN_DIV_O1(t);
    const uint q0 = KILN_MOD_O0(t);
    t = KILN_DIV_O0(t);
    const uint cb = KILN_MOD_CO_BLOCKS(t);
    t = KILN_DIV_CO_BLOCKS(t);
    const uint g = KILN_MOD_GROUPS(t);
    const uint n = KILN_DIV_GROUPS(t);
    const uint j0 = cb * KILN_CO_BLOCK;  // first output channel within the group
    const uint nco = min(KILN_CO_BLOCK, KILN_OG - j0);
    float acc[KILN_CO_BLOCK];
    for (uint j = 0u; j < KILN_CO_BLOCK; ++j) acc[j] = 0.0;
    for (int k0 = 0; k0 < KILN_K0; ++k0) {
      const int p0 = kiln_source(int(q0), k0, KILN_S0, KILN_P0, KILN_D0, i0);
      if (p0 < 0) continue;
      for (int k1 = 0; k1 < KILN_K1; ++k1) {
        const int p1 = kiln_source(int(q1), k1, KILN_S1, KILN_P1, KILN_D1, i1);
        if (p1 < 0) continue;
        for (int k2 = 0; k2 < KILN_K2; ++k2) {
          const int p2 = kiln_source(int(q2), k2, KILN_S2, KILN_P2, KILN_D2, i2);
          if (p2 < 0) continue;
          for (uint ci = 0u; ci < KILN_CG; ++ci) {
            const uint c = g * KILN_CG + ci;
            const float xv = kiln_x(n, c, uint(p0), uint(p1), uint(p2));
            for (uint j = 0u; j < KILN_CO_BLOCK; ++j)
              if (j < nco) acc[j] += xv * kiln_w(c, j0 + j, uint(k0), uint(k1), uint(k2));
          }
        }
      }
    }
    for (uint j = 0u; j < nco; ++j) {
      const uint co = g * KILN_OG + j0 + j;
      const uint row = ((n * KILN_C_OUT + co) * KILN_O0 + q0) * KILN_O1 + q1;
      kiln_store(row * KILN_O2 + q2, acc[j] + kiln_bias(co));
    }
  }
}
