// What the panels share: the run catalog, which runs are selected (the Runs panel's checkboxes; the
// Curves panel overlays them) and which one is in focus (the last clicked; Observations and Routing
// show it), the run files they read (cached), and the messages of this frame.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/observe/tomoe_conversion_file.h"
#include "viewer/model/capture_files.h"
#include "viewer/model/run_catalog.h"

namespace moxlab::viewer {

struct ViewerContext {
  explicit ViewerContext(const std::string& db_path) : catalog(db_path) {}

  RunCatalog catalog;
  std::set<std::int64_t> selected;
  std::int64_t focus = 0;           // 0: none
  std::string tables_dir;           // where the Tables panel lists specs
  std::map<std::string, std::string> args;  // headless options for panels (e.g. "table" -> spec name)
  int generation = 0;               // bumped whenever the catalog changes

  // The newest artifact of `kind` of a run ("" when none); reads the store.
  std::string artifact(std::int64_t run, const std::string& kind);
  // The run's observation / routing / ToMoE conversion file, read once; nullptr with *why set when the
  // run has none or it cannot be read (the message names the file and the problem).
  const ObservationFile* observations(std::int64_t run, std::string* why);
  const RoutingFile* routing(std::int64_t run, std::string* why);
  const TomoeConversionRecord* tomoe_conversion(std::int64_t run, std::string* why);
  // A run's metric keys and curves, cached until the catalog changes (running runs keep logging).
  const std::vector<std::string>& metric_keys(std::int64_t run);
  const std::vector<MetricPoint>& metric(std::int64_t run, const std::string& key);

  // A headless option (--arg key=value) as an integer; fallback (and a note) when absent or not a number.
  int int_arg(const std::string& key, int fallback);
  // A message shown in the status bar and reported by the headless mode; cleared each frame.
  void note(const std::string& message);
  std::vector<std::string> notes;
  std::string last_export;  // the last plot export (or its error)

 private:
  template <class File>
  struct Cached {
    std::unique_ptr<File> file;
    std::string error;
  };
  std::map<std::string, Cached<ObservationFile>> observation_cache_;
  std::map<std::string, Cached<RoutingFile>> routing_cache_;
  std::map<std::string, Cached<TomoeConversionRecord>> tomoe_cache_;
  int metrics_generation_ = -1;
  std::map<std::int64_t, std::vector<std::string>> metric_keys_;
  std::map<std::pair<std::int64_t, std::string>, std::vector<MetricPoint>> metrics_;
  void drop_stale_metrics();
};

// Shows `message` as a wrapped, highlighted line in the current window and notes it.
void show_message(ViewerContext& ctx, const std::string& message);

// The focused run's file as `load` (a ViewerContext reader such as &ViewerContext::routing) reads it, or
// nullptr after showing why (no run in focus, or the reader's reason).
template <class T>
const T* focused_file(ViewerContext& ctx, const T* (ViewerContext::*load)(std::int64_t, std::string*)) {
  if (!ctx.focus) {
    show_message(ctx, "No run in focus: click a run's id in the Runs panel (or pass --run ID).");
    return nullptr;
  }
  std::string why;
  const T* file = (ctx.*load)(ctx.focus, &why);
  if (!file) show_message(ctx, why);
  return file;
}

}  // namespace moxlab::viewer
