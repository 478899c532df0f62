#include "eager/cpu_features.h"

#include <cstdlib>
#include <string_view>

namespace kiln::eager {

bool cpu_has_avx512() {
#if KILN_AVX512_KERNELS
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") != 0;
  }();
  return yes;
#else
  return false;
#endif
}

bool avx512_kernels_enabled(const char* off_switch) {
  const char* v = std::getenv(off_switch);
  if (v != nullptr && std::string_view(v) == "0") return false;
  return cpu_has_avx512();
}

}  // namespace kiln::eager
