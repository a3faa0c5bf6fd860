#include "viewer/plot/heatmap_texture.h"

#include <GL/gl.h>

#include <cmath>
#include <map>
#include <vector>

#include "viewer/model/colormap.h"

namespace moxlab::viewer {

namespace {

struct CachedTexture {
  GLuint id = 0;
  bool used = true;
};

std::map<std::string, CachedTexture>& cache() {
  static std::map<std::string, CachedTexture> c;
  return c;
}

}  // namespace

ImTextureID heatmap_texture(const std::string& key, const float* values, int rows, int cols, double vmin, double vmax) {
  auto& c = cache();
  auto it = c.find(key);
  if (it != c.end()) {
    it->second.used = true;
    return reinterpret_cast<ImTextureID>(static_cast<std::uintptr_t>(it->second.id));
  }
  std::vector<std::uint32_t> rgba(static_cast<std::size_t>(rows) * cols);
  const double span = vmax > vmin ? vmax - vmin : 1.0;
  const std::uint32_t grey = pack_rgba({0.5f, 0.5f, 0.5f});
  for (std::size_t i = 0; i < rgba.size(); ++i)
    rgba[i] = std::isnan(values[i]) ? grey : pack_rgba(viridis((values[i] - vmin) / span));
  GLuint id = 0;
  glGenTextures(1, &id);
  glBindTexture(GL_TEXTURE_2D, id);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA, cols, rows, 0, GL_RGBA, GL_UNSIGNED_BYTE, rgba.data());
  c[key] = {id, true};
  return reinterpret_cast<ImTextureID>(static_cast<std::uintptr_t>(id));
}

void collect_heatmap_textures() {
  auto& c = cache();
  for (auto it = c.begin(); it != c.end();) {
    if (!it->second.used) {
      glDeleteTextures(1, &it->second.id);
      it = c.erase(it);
    } else {
      it->second.used = false;
      ++it;
    }
  }
}

}  // namespace moxlab::viewer
