#include "eager/phase_planes.h"

#include <algorithm>
#include <cmath>

#include "eager/vector_loops.h"

namespace kiln::eager {

bool plain_2d_window(const Geometry& g, int64_t max_stride) {
  if (g.in[0] != 1 || g.out[0] != 1 || g.kernel[0] != 1 || g.pad[0] != 0 || g.pad_end[0] != 0)
    return false;
  for (size_t d = 1; d < 3; ++d) {
    if (g.stride[d] < 1 || g.stride[d] > max_stride || g.pad[d] < 0 || g.pad_end[d] < 0 ||
        g.dil[d] < 1 || g.out[d] < 1 || g.kernel[d] < 1)
      return false;
    const double padded = double(g.in[d]) + double(g.pad[d]) + double(g.pad_end[d]);
    const double reach = double(g.kernel[d] - 1) * double(g.dil[d]);
    if (!(reach < padded) ||
        double(g.out[d]) != std::floor((padded - reach - 1.0) / double(g.stride[d])) + 1.0)
      return false;
  }
  return true;
}

PhaseLayout phase_layout(const Geometry& g) {
  PhaseLayout l;
  l.sy = g.stride[1];
  l.sx = g.stride[2];
  const int64_t padded_rows = g.in[1] + g.pad[1] + g.pad_end[1];
  const int64_t padded_cols = g.in[2] + g.pad[2] + g.pad_end[2];
  l.rows = (padded_rows + l.sy - 1) / l.sy;
  l.pitch = (padded_cols + l.sx - 1) / l.sx;
  l.positions = g.out[1] * l.pitch;
  const int64_t overhang = (g.kernel[2] - 1) * g.dil[2] / l.sx;
  l.direct_out = l.pitch == g.out[2];
  const bool unpadded = g.pad[1] == 0 && g.pad_end[1] == 0 && g.pad[2] == 0 && g.pad_end[2] == 0;
  l.in_place = unpadded && overhang == 0 && l.sy == 1 && l.sx == 1;
  l.plane = l.in_place ? g.in[1] * g.in[2] : unaliased(l.rows * l.pitch + overhang);
  return l;
}

void copy_phases(const Geometry& g, const PhaseLayout& l, const float* src, float* dst) {
  for (int64_t py = 0; py < l.sy; ++py)
    for (int64_t px = 0; px < l.sx; ++px) {
      bool read = false;  // whether some tap reads phase (py, px)
      for (int64_t ky = 0; ky < g.kernel[1] && !read; ++ky)
        for (int64_t kx = 0; kx < g.kernel[2] && !read; ++kx)
          read = ky * g.dil[1] % l.sy == py && kx * g.dil[2] % l.sx == px;
      if (!read) continue;
      float* phase = dst + (py * l.sx + px) * l.plane;
      std::fill(phase, phase + l.plane, 0.0f);
      // Input rows iy and columns ix with (iy + pad) % stride the phase's, from the first.
      const int64_t iy0 = ((py - g.pad[1]) % l.sy + l.sy) % l.sy;
      const int64_t ix0 = ((px - g.pad[2]) % l.sx + l.sx) % l.sx;
      if (ix0 >= g.in[2]) continue;
      const int64_t count = (g.in[2] - ix0 + l.sx - 1) / l.sx;
      for (int64_t iy = iy0; iy < g.in[1]; iy += l.sy) {
        float* drow = phase + (iy + g.pad[1]) / l.sy * l.pitch + (ix0 + g.pad[2]) / l.sx;
        const float* row = src + iy * g.in[2] + ix0;
        if (l.sx == 1)
          std::copy(row, row + count, drow);
        else
          copy_strided(drow, row, count, l.sx);
      }
    }
}

}  // namespace kiln::eager
