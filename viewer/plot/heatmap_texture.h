// GL textures for heat maps: a 4096 x 1024 map is 4M cells, far too many rectangles for ImDrawList,
// so the colour-mapped cells are uploaded once as an RGBA texture (nearest filtering) and drawn as one
// image. Textures are cached by content key and freed when unused for a few frames.
#pragma once
#include <cstdint>
#include <string>

#include <imgui.h>

namespace moxlab::viewer {

// The texture of values [rows, cols] mapped through viridis over [vmin, vmax] (NaN grey). key
// identifies the content: the same key returns the cached texture without reading values.
ImTextureID heatmap_texture(const std::string& key, const float* values, int rows, int cols, double vmin, double vmax);
// Frees textures not used since the last call (the app calls it once per frame).
void collect_heatmap_textures();

}  // namespace moxlab::viewer
