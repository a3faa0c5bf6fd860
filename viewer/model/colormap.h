// Colours of the viewer's plots: a perceptually ordered map for heat maps (viridis, sampled at 9
// anchors and interpolated linearly), a blue -> red ramp for ordered families of curves (Fig. 3 right:
// k = 2..20), and a qualitative palette for unordered series.
#pragma once
#include <cstdint>

namespace moxlab::viewer {

struct Rgb {
  float r = 0, g = 0, b = 0;
};

Rgb viridis(double t);        // t in [0, 1], clamped
Rgb blue_to_red(double t);    // t in [0, 1], clamped
Rgb palette(int index);       // 10 distinct colours, cycling

// 0xAABBGGRR as ImGui's IM_COL32 packs it.
std::uint32_t pack_rgba(Rgb c, float alpha = 1.0f);

}  // namespace moxlab::viewer
