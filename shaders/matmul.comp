#version 450
// Tiled batched matmul skeleton: C[batch, i, j] = sum over k < KILN_K of A(b, i, k) * B(b, k, j).
// Codegen supplies kiln_extensions.glsl, and kiln_kernel.glsl with the bindings and
//   ACC_T kiln_load_a(uint batch, uint i, uint k)  A's fused prologue (transpose, batch broadcast)
//   ACC_T kiln_load_b(uint batch, uint k, uint j)  B's fused prologue
//   void kiln_store(uint batch, uint i, uint j, ACC_T v)
// (KILN_MAD(acc, a, b), when defined, is acc + a * b for an ACC_T without operators: int64
// pairs) and the macros KILN_LOCAL_SIZE, KILN_M, KILN_N, KILN_K, KILN_BATCH, ACC_T, TILE_M, TILE_N,
// TILE_K, THREAD_M, THREAD_N, KILN_A_K_FAST, KILN_B_J_FAST.
//
// Each workgroup computes a TILE_M x TILE_N tile of C for one batch index (grid-stride over tiles
// and batches when the grid is capped). Per TILE_K step it stages TILE_M x TILE_K of A and
// TILE_K x TILE_N of B in shared memory, zero-filled outside the matrices, so odd sizes need no
// special casing in the inner loop. Invocation (tx, ty) accumulates a THREAD_M x THREAD_N
// register block: rows ty + r * (TILE_M / THREAD_M), columns tx + c * (TILE_N / THREAD_N).
// KILN_A_K_FAST / KILN_B_J_FAST: which tile index consecutive invocations load, so that they
// read consecutive addresses of the operand's memory layout.
#extension GL_GOOGLE_include_directive : require
#include "kiln_extensions.glsl"
#include "common/kiln_common.glsl"

layout(local_size_x = KILN_LOCAL_SIZE) in;

#include "kiln_kernel.glsl"

#define KILN_THREADS_N (TILE_N / THREAD_N)
#define KILN_THREADS_M (TILE_M / THREAD_M)
#define KILN_TILES_N ((KILN_N + TILE_N - 1u) / TILE_N)
#define KILN_TILES_M ((KILN_M + TILE_M - 1u) / TILE_M)
#define KILN_A_STRIDE (TILE_M + 1u)  // padded rows of the k-major A tile

shared ACC_T kiln_a_tile[TILE_K * KILN_A_STRIDE];  // [kk][ii]
shared ACC_T kiln_b_tile[TILE_K * TILE_N];         // [kk][jj]

void kiln_stage(uint batch, uint i0, uint j0, uint k0, uint lid) {
  for (uint e = lid; e < TILE_M * TILE_K; e += KILN_LOCAL_SIZE) {
#if KILN_A_K_FAST
    const uint kk = e % TILE_K, ii = e / TILE_K;
#else
    const uint ii = e % TILE_M, kk = e / TILE_M;
#endif
    const uint i = i0 + ii, k = k0 + kk;
    ACC_T v = ACC_T(0);
    if (i < KILN_M && k < KILN_K) v = kiln_load_a(batch, i, k);
    kiln_a_tile[kk * KILN_A_STRIDE + ii] = v;
  }
  for (uint e = lid; e < TILE_K * TILE_N; e += KILN_LOCAL_SIZE) {
#if KILN_B_J_FAST
    const uint jj = e % TILE_N, kk = e / TILE_N;
#else
    const uint kk = e % TILE_K, jj = e / TILE_K;
#endif
    const uint j = j0 + jj, k = k0 + kk;
    ACC_T v = ACC_T(0);
    if (j < KILN_N && k < KILN_K) v = kiln_load_b(batch, k, j);
    kiln_b_tile[kk * TILE_N + jj] = v;
  }
}

void main() {
  const uint lid = gl_LocalInvocationID.x;
  const uint tx = lid % KILN_THREADS_N, ty = lid / KILN_THREADS_N;
  for (uint batch = gl_WorkGroupID.z; batch < KILN_BATCH; batch += gl_NumWorkGroups.z) {
    for (uint tm = gl_WorkGroupID.y; tm < KILN_TILES_M; tm += gl_NumWorkGroups.y) {
      for (uint tn = gl_WorkGroupID.x; tn < KILN_TILES_N; tn += gl_NumWorkGroups.x) {
        const uint i0 = tm * TILE_M, j0 = tn * TILE_N;
        ACC_T acc[THREAD_M][THREAD_N];
        for (uint r = 0u; r < THREAD_M; ++r)
          for (uint c = 0u; c < THREAD_N; ++c) acc[r][c] = ACC_T(0);
        for (uint k0 = 0u; k0 < KILN_K; k0 += TILE_K) {
          kiln_stage(batch, i0, j0, k0, lid);
          barrier();
          for (uint kk = 0u; kk < TILE_K; ++kk) {
            ACC_T a[THREAD_M];
            ACC_T b[THREAD_N];
            for (uint r = 0u; r < THREAD_M; ++r)
              a[r] = kiln_a_tile[kk * KILN_A_STRIDE + ty + r * KILN_THREADS_M];
            for (uint c = 0u; c < THREAD_N; ++c)
              b[c] = kiln_b_tile[kk * TILE_N + tx + c * KILN_THREADS_N];
            for (uint r = 0u; r < THREAD_M; ++r)
#ifdef KILN_MAD
              for (uint c = 0u; c < THREAD_N; ++c) acc[r][c] = KILN_MAD(acc[r][c], a[r], b[c]);
#else
              for (uint c = 0u; c < THREAD_N; ++c) acc[r][c] += a[r] * b[c];
#endif
          }
          barrier();
        }
        for (uint r = 0u; r < THREAD_M; ++r) {
          const uint i = i0 + ty + r * KILN_THREADS_M;
          for (uint c = 0u; c < THREAD_N; ++c) {
            const uint j = j0 + tx + c * KILN_THREADS_N;
            if (i < KILN_M && j < KILN_N) kiln_store(batch, i, j, acc[r][c]);
          }
        }
      }
    }
  }
}
