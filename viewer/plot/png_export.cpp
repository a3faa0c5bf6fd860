#include "viewer/plot/png_export.h"

#include <GL/gl.h>
#include <stb_image_write.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>

#include "core/common/atomic_file.h"
#include "core/common/error.h"

namespace moxlab::viewer {

namespace {

struct Request {
  ImVec2 min, max;
  std::string name;
};

std::vector<Request>& queue() {
  static std::vector<Request> q;
  return q;
}

std::string& export_dir() {
  static std::string dir = "viewer-exports";
  return dir;
}

// Reads [x, x+w) x [y, y+h) of the framebuffer (GL origin bottom left) and writes it top row first.
void write_region(int x, int y, int w, int h, const std::string& path) {
  require(w > 0 && h > 0, "cannot export an empty region to " + path);
  std::vector<std::uint8_t> rgba(static_cast<std::size_t>(w) * h * 4);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadBuffer(GL_BACK);
  glReadPixels(x, y, w, h, GL_RGBA, GL_UNSIGNED_BYTE, rgba.data());
  std::vector<std::uint8_t> flipped(rgba.size());
  const std::size_t row = static_cast<std::size_t>(w) * 4;
  for (int r = 0; r < h; ++r) std::copy_n(&rgba[(h - 1 - r) * row], row, &flipped[r * row]);
  for (std::size_t i = 3; i < flipped.size(); i += 4) flipped[i] = 255;  // opaque, whatever GL's alpha holds
  write_file_atomically(path, [&](const std::string& tmp) {
    require(stbi_write_png(tmp.c_str(), w, h, 4, flipped.data(), static_cast<int>(row)) != 0, "cannot write PNG " + path);
  });
}

}  // namespace

void request_png(ImVec2 min, ImVec2 max, const std::string& name) { queue().push_back({min, max, name}); }

std::vector<std::string> flush_png_requests(int framebuffer_height, float scale) {
  std::vector<std::string> done;
  for (const auto& r : queue()) {
    try {
      const int x = static_cast<int>(r.min.x * scale), y0 = static_cast<int>(r.min.y * scale);
      const int w = static_cast<int>((r.max.x - r.min.x) * scale), h = static_cast<int>((r.max.y - r.min.y) * scale);
      const std::string path = export_path(r.name);
      write_region(x, framebuffer_height - y0 - h, w, h, path);
      done.push_back(path);
    } catch (const std::exception& e) {
      done.push_back(std::string("error: ") + e.what());
    }
  }
  queue().clear();
  return done;
}

void write_framebuffer_png(int width, int height, const std::string& path) { write_region(0, 0, width, height, path); }

void set_export_dir(const std::string& dir) { export_dir() = dir; }

namespace {
bool every_plot = false;
}  // namespace

void set_export_every_plot(bool on) { every_plot = on; }
bool export_every_plot() { return every_plot; }

std::string export_path(const std::string& name) {
  std::string clean;
  for (char c : name) clean += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ? c : '_';
  if (clean.empty()) clean = "plot";
  make_dirs(export_dir());
  for (int n = 1;; ++n) {
    const std::string path = export_dir() + "/" + clean + "-" + std::to_string(n) + ".png";
    if (!std::filesystem::exists(path)) return path;
  }
}

}  // namespace moxlab::viewer
