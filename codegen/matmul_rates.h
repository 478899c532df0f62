/// \file matmul_rates.h
/// The speeds of the kernels a matmul's kernel choice weighs, as measured on one device
/// (runtime/exec/calibration.h). Part of TargetCaps, hence of every compiled-graph key.
#pragma once

#include <cstdint>

namespace kiln {

struct MatmulRates {
  double rowblock_flops_per_ms = 0;  // the row-block matmul kernel (0: the device lacks it)
  double tiled_flops_per_ms = 0;     // the shared-memory tiled kernel at full tiles
  double copy_bytes_per_ms = 0;      // an elementwise copy, bytes read plus bytes written
  /// False: nothing was measured (TargetCaps::generic(), KILN_CALIBRATE=0, a graph without a
  /// matmul) and the choice follows the structural rule of codegen/matmul_choice.h.
  bool measured = false;
  /// Internal, for calibration only: every matmul the row-block kernel can run runs on it
  /// (kRowBlock, storing A where that makes it apply), or every matmul runs on the tiled kernel.
  enum class Force : uint8_t { kNone, kRowBlock, kTiled };
  Force force = Force::kNone;
  /// The device's maxStorageBufferRange (0: unknown). The tiled kernel binds A, B and C whole;
  /// a product with an operand or output larger than this at the traced sizes runs on the
  /// row-block kernel, which splits its rows over several dispatches, whatever the rates or a
  /// forced kernel say.
  uint64_t max_binding_bytes = 0;
};

}  // namespace kiln
