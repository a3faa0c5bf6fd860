// PNG files from the viewer's framebuffer: the whole window (headless screenshots) or one plot's
// rectangle (a plot's "Export PNG" menu). Regions are queued while the frame is built and read back
// after it is rendered, before the buffers are swapped. Files are written atomically.
#pragma once
#include <string>
#include <vector>

#include <imgui.h>

namespace moxlab::viewer {

// Queues the screen rectangle [min, max) (ImGui coordinates) to be written after this frame to
// export_path(name); the path is resolved then, so a failure is reported, not thrown mid-frame.
void request_png(ImVec2 min, ImVec2 max, const std::string& name);
// Reads the queued rectangles from the current GL framebuffer and writes them. Returns the written
// paths; failures become "error: ..." entries.
std::vector<std::string> flush_png_requests(int framebuffer_height, float scale);
// Reads the whole framebuffer (width x height pixels) and writes it to path; throws moxlab::Error.
void write_framebuffer_png(int width, int height, const std::string& path);
// Where a plot export goes: <dir>/<sanitised name>-<n>.png, dir created when missing.
std::string export_path(const std::string& name);
void set_export_dir(const std::string& dir);
// While on, every plot drawn requests its own export (the headless --export-plots option).
void set_export_every_plot(bool on);
bool export_every_plot();

}  // namespace moxlab::viewer
