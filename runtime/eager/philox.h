/// \file philox.h
/// Philox 4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011), the
/// counter-based generator of random_uniform: the interpreter calls it here, the kernel
/// (codegen/lower_random.cpp) runs the same integer rounds in GLSL, so both give the same bits.
#pragma once

#include <array>
#include <cstdint>

namespace kiln::eager {

inline std::array<uint32_t, 4> philox4x32_10(std::array<uint32_t, 4> c, std::array<uint32_t, 2> k) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = uint64_t{kM0} * c[0], p1 = uint64_t{kM1} * c[2];
    const auto hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
    const auto hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
    c = {hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0};
    k[0] += kW0;
    k[1] += kW1;
  }
  return c;
}

/// random_uniform's element i of stream `stream` under `seed`: 24 random bits / 2^24.
inline float philox_uniform(uint64_t seed, uint32_t stream, uint64_t i) {
  const std::array<uint32_t, 4> r =
      philox4x32_10({static_cast<uint32_t>(i), static_cast<uint32_t>(i >> 32), stream, 0u},
                    {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)});
  return static_cast<float>(r[0] >> 8) * 0x1p-24f;
}

}  // namespace kiln::eager
