/// \file phase_planes.h
/// Private to runtime/eager: the layout the direct conv kernels read an image in
/// (conv_direct.h). With strides (sy, sx), the zero-padded image is stored as sy * sx phase
/// planes per channel, phase (py, px) holding padded rows a * sy + py and columns b * sx + px at
/// (a, b); tap (ky, kx) of output (r, j) then reads phase (ky * dy % sy, kx * dx % sx) at
/// (r + ky * dy / sy, j + kx * dx / sx). Each tap's inputs for consecutive output columns are
/// consecutive floats, whatever the strides (with unit strides: one phase, the padded image).
#pragma once

#include <cstdint>

#include "eager/window_geometry.h"

namespace kiln::eager {

/// A plane or row length that is not a multiple of 256 floats: rows a multiple of 1 KiB apart
/// fall into the same few L1 sets (and OpenBLAS's packing reads down the rows of an im2col
/// matrix).
inline int64_t unaliased(int64_t floats) {
  return floats % 256 == 0 ? floats + 16 : floats;
}

/// Where a direct kernel reads one image of a 1-D or 2-D window op: its phase planes, or the
/// input itself.
struct PhaseLayout {
  int64_t sy = 1, sx = 1;       // strides: phases per channel, sy * sx
  int64_t rows = 0, pitch = 0;  // rows of a phase plane, and floats from one row to the next
  int64_t plane = 0;            // floats from one phase plane (or input channel) to the next
  int64_t positions = 0;        // out rows x pitch: outputs and the dropped row ends
  bool in_place = false;        // the input serves as it is (no padding, 1-wide window rows)
  bool direct_out = false;      // positions are the output's own indices (no dropped ends)

  /// Floats per channel: its phase planes (or the input plane).
  int64_t channel() const { return (in_place ? 1 : sy * sx) * plane; }
  /// Where tap (ky, kx) of output position q = r * pitch + j reads, from the channel's start.
  int64_t tap(const Geometry& g, int64_t ky, int64_t kx) const {
    const int64_t dy = ky * g.dil[1], dx = kx * g.dil[2];
    return (dy % sy * sx + dx % sx) * plane + dy / sy * pitch + dx / sx;
  }
};

/// Whether `g` is a window the direct kernels can read as phase planes: 1-D or 2-D (depth 1, no
/// depth padding: a 3-D window of depth 1 with depth padding reads only padding), strides 1 to
/// `max_stride`, pads >= 0, dilations >= 1, and output sizes that follow from the geometry
/// (checked in double: absurd pads or dilations must not wrap).
bool plain_2d_window(const Geometry& g, int64_t max_stride);

/// The layout of `g` (plain_2d_window), whose output sizes follow from its geometry.
/// Planes are long enough for the overhang: the taps of a row's last positions read past it.
PhaseLayout phase_layout(const Geometry& g);

/// Writes channel `src` (an [in[1], in[2]] plane) of `g` as laid out by `l` into `dst`
/// (l.channel() floats): zeros in the padding and past each plane, only the phases some tap
/// reads (a 1x1 window with stride 2 reads one).
void copy_phases(const Geometry& g, const PhaseLayout& l, const float* src, float* dst);

}  // namespace kiln::eager
