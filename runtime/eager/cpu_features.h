/// \file cpu_features.h
/// Private to runtime/eager: which of the interpreter's hand-vectorised kernels this CPU runs.
#pragma once

// KILN_AVX512_KERNELS: this compiler builds the AVX-512 kernels (x86-64, GCC or Clang; the
// intrinsics come with it), which run where cpu_has_avx512().
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define KILN_AVX512_KERNELS 1
#else
#define KILN_AVX512_KERNELS 0
#endif

namespace kiln::eager {

/// Whether the CPU has AVX-512 F (x86-64 with GCC or Clang; false elsewhere). Checked once.
bool cpu_has_avx512();

/// Whether AVX-512 kernels whose switch is the environment variable `off_switch` run: the CPU
/// has AVX-512 and the variable is not "0". Read at each call: callers keep the answer.
bool avx512_kernels_enabled(const char* off_switch);

}  // namespace kiln::eager
