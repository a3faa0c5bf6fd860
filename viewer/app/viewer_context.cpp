#include "viewer/app/viewer_context.h"

#include <imgui.h>

#include <algorithm>
#include <cstdlib>

#include "core/store/run_store.h"

namespace moxlab::viewer {

std::string ViewerContext::artifact(std::int64_t run, const std::string& kind) {
  try {
    RunStoreOptions options;
    options.read_only = true;
    const auto arts = RunStore(catalog.path(), options).artifacts(run, kind);
    return arts.empty() ? "" : arts.back().path;
  } catch (const std::exception& e) {
    note(e.what());
    return "";
  }
}

namespace {

template <class File, class Cache, class Read>
const File* cached_file(ViewerContext& ctx, Cache& cache, std::int64_t run, const std::string& kind, const char* how,
                        Read read, std::string* why) {
  const std::string path = ctx.artifact(run, kind);
  if (path.empty()) {
    *why = "run " + std::to_string(run) + " has no " + kind + " file yet (" + how + ")";
    return nullptr;
  }
  auto& entry = cache[path];
  if (!entry.file && entry.error.empty()) {
    try {
      entry.file = std::make_unique<File>(read(path));
    } catch (const std::exception& e) {
      entry.error = e.what();
    }
  }
  if (!entry.file) *why = "cannot read " + kind + " of run " + std::to_string(run) + ": " + entry.error;
  return entry.file.get();
}

}  // namespace

const ObservationFile* ViewerContext::observations(std::int64_t run, std::string* why) {
  return cached_file<ObservationFile>(*this, observation_cache_, run, "observations",
                                      "moxlab capture --run N, then moxlab observe --run N", read_observation_file, why);
}

const RoutingFile* ViewerContext::routing(std::int64_t run, std::string* why) {
  return cached_file<RoutingFile>(*this, routing_cache_, run, "routing", "moxlab route --run N; MoHD, MoH and ToMoE runs",
                                  read_routing_file, why);
}

const TomoeConversionRecord* ViewerContext::tomoe_conversion(std::int64_t run, std::string* why) {
  return cached_file<TomoeConversionRecord>(*this, tomoe_cache_, run, "tomoe_conversion",
                                            "written by moxlab convert tomoe --checkpoint P --active p", read_tomoe_conversion,
                                            why);
}

void ViewerContext::drop_stale_metrics() {
  if (metrics_generation_ == generation) return;
  metric_keys_.clear();
  metrics_.clear();
  metrics_generation_ = generation;
}

const std::vector<std::string>& ViewerContext::metric_keys(std::int64_t run) {
  drop_stale_metrics();
  auto it = metric_keys_.find(run);
  if (it != metric_keys_.end()) return it->second;
  std::vector<std::string> keys;
  try {
    RunStoreOptions options;
    options.read_only = true;
    keys = RunStore(catalog.path(), options).metric_keys(run);
  } catch (const std::exception& e) {
    note(e.what());
  }
  return metric_keys_[run] = std::move(keys);
}

const std::vector<MetricPoint>& ViewerContext::metric(std::int64_t run, const std::string& key) {
  drop_stale_metrics();
  auto it = metrics_.find({run, key});
  if (it != metrics_.end()) return it->second;
  std::vector<MetricPoint> points;
  try {
    RunStoreOptions options;
    options.read_only = true;
    points = RunStore(catalog.path(), options).metrics(run, key);
  } catch (const std::exception& e) {
    note(e.what());
  }
  return metrics_[{run, key}] = std::move(points);
}

int ViewerContext::int_arg(const std::string& key, int fallback) {
  auto it = args.find(key);
  if (it == args.end()) return fallback;
  char* end = nullptr;
  const long v = std::strtol(it->second.c_str(), &end, 10);
  if (it->second.empty() || *end != 0) {
    note("--arg " + key + "=" + it->second + " is not an integer; using " + std::to_string(fallback));
    return fallback;
  }
  return static_cast<int>(v);
}

void ViewerContext::note(const std::string& message) {
  if (std::find(notes.begin(), notes.end(), message) == notes.end()) notes.push_back(message);
}

void show_message(ViewerContext& ctx, const std::string& message) {
  ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(255, 200, 90, 255));
  ImGui::TextWrapped("%s", message.c_str());
  ImGui::PopStyleColor();
  ctx.note(message);
}

}  // namespace moxlab::viewer
