/// \file sha256.h
/// SHA-256 (FIPS 180-4) of a byte string: the strong digest behind structural cache keys
/// (graph/graph_key.h) and the names of persisted records. Pure functions; thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace kiln {

using Sha256Digest = std::array<uint8_t, 32>;

/// SHA-256 of `data`.
Sha256Digest sha256(std::string_view data);

/// Lower-case hex of the first `bytes` bytes of `digest` (at most 32).
std::string digest_hex(const Sha256Digest& digest, size_t bytes = 32);

}  // namespace kiln
