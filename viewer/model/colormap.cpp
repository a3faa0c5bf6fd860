#include "viewer/model/colormap.h"

#include <algorithm>
#include <cmath>

namespace moxlab::viewer {

namespace {

Rgb lerp_anchors(const Rgb* anchors, int count, double t) {
  t = std::clamp(t, 0.0, 1.0);
  if (std::isnan(t)) t = 0;
  const double pos = t * (count - 1);
  const int i = std::min(count - 2, static_cast<int>(pos));
  const float f = static_cast<float>(pos - i);
  const Rgb a = anchors[i], b = anchors[i + 1];
  return {a.r + (b.r - a.r) * f, a.g + (b.g - a.g) * f, a.b + (b.b - a.b) * f};
}

}  // namespace

Rgb viridis(double t) {
  static const Rgb anchors[] = {{0.267f, 0.005f, 0.329f}, {0.283f, 0.141f, 0.458f}, {0.254f, 0.265f, 0.530f},
                                {0.207f, 0.372f, 0.553f}, {0.164f, 0.471f, 0.558f}, {0.128f, 0.567f, 0.551f},
                                {0.135f, 0.659f, 0.518f}, {0.478f, 0.821f, 0.318f}, {0.993f, 0.906f, 0.144f}};
  return lerp_anchors(anchors, 9, t);
}

Rgb blue_to_red(double t) {
  static const Rgb anchors[] = {{0.19f, 0.39f, 0.85f}, {0.55f, 0.35f, 0.70f}, {0.86f, 0.20f, 0.18f}};
  return lerp_anchors(anchors, 3, t);
}

Rgb palette(int index) {
  static const Rgb colours[] = {{0.12f, 0.47f, 0.71f}, {1.00f, 0.50f, 0.05f}, {0.17f, 0.63f, 0.17f},
                                {0.84f, 0.15f, 0.16f}, {0.58f, 0.40f, 0.74f}, {0.55f, 0.34f, 0.29f},
                                {0.89f, 0.47f, 0.76f}, {0.50f, 0.50f, 0.50f}, {0.74f, 0.74f, 0.13f},
                                {0.09f, 0.75f, 0.81f}};
  return colours[((index % 10) + 10) % 10];
}

std::uint32_t pack_rgba(Rgb c, float alpha) {
  auto byte = [](float v) { return static_cast<std::uint32_t>(std::lround(std::clamp(v, 0.0f, 1.0f) * 255.0f)); };
  return byte(c.r) | (byte(c.g) << 8) | (byte(c.b) << 16) | (byte(alpha) << 24);
}

}  // namespace moxlab::viewer
