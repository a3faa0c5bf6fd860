#include "viewer/model/run_catalog.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>

#include "core/common/error.h"
#include "core/store/run_liveness.h"
#include "core/store/run_store.h"

namespace moxlab::viewer {

namespace {

// Whether two records differ in anything a results reload depends on.
bool same_state(const RunRecord& a, const RunRecord& b) {
  return a.status == b.status && a.started_at == b.started_at && a.finished_at == b.finished_at && a.error == b.error &&
         a.tags == b.tags;
}

std::string join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

std::string filter_text(const RunRow& row) {
  return row.run.name + " " + row.run.kind + " " + row.status + " " + row.variant + " " + join(row.run.tags, " ") + " " +
         row.sweep_name;
}

}  // namespace

std::string config_value_text(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_float()) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", value.get<double>());
    return buf;
  }
  return value.dump();
}

RunCatalog::RunCatalog(std::string db_path) : path_(std::move(db_path)) {}

std::string RunCatalog::disk_stamp() const {
  std::string stamp;
  for (const std::string suffix : {"", "-wal"}) {
    struct stat st {};
    if (::stat((path_ + suffix).c_str(), &st) == 0)
      stamp += std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
               std::to_string(st.st_mtim.tv_nsec) + ";";
    else
      stamp += "-;";
  }
  return stamp;
}

bool RunCatalog::refresh(bool force) {
  const std::string stamp = disk_stamp();
  if (!force && stamp == disk_stamp_ && error_.empty()) return recheck_running();
  // Stamped before reading, so a commit that lands during the read is seen next time. (Closing the
  // last connection may checkpoint and remove the WAL file: that costs one extra, cheap re-read.)
  disk_stamp_ = stamp;
  read(force);
  return true;
}

void RunCatalog::read(bool force) {
  try {
    require(std::filesystem::exists(path_), "no run store at " + path_);
    RunStoreOptions options;
    options.read_only = true;
    RunStore store(path_, options);
    // Phase 1, everything that can throw: read from the store without touching the snapshot.
    auto sweeps = store.list_sweeps();
    auto runs = store.list_runs();
    const double now = unix_now();
    std::map<std::int64_t, const RunRow*> old;
    for (const auto& row : runs_) old.emplace(row.run.id, &row);
    std::map<std::int64_t, std::map<std::string, double>> fresh;  // results re-read, by run
    for (const auto& run : runs) {
      auto prev = old.find(run.id);
      // A finished run's results are reused unless its record changed, or it finished recently:
      // evaluation and routing add results to a run after it is marked finished (sweep members, moxlab
      // eval), so results of runs finished in the last kResultsSettle seconds are re-read.
      const bool recent = run.finished_at && now - *run.finished_at < kResultsSettleSeconds;
      const bool reuse = !force && prev != old.end() && same_state(prev->second->run, run) && is_terminal(run.status) && !recent;
      if (!reuse) {
        auto& r = fresh[run.id];
        for (const auto& res : store.results(run.id)) r[res.key] = res.value;
      }
    }
    // Phase 2, no throws: assemble the new snapshot, moving reused rows out of the old one.
    std::map<std::int64_t, std::string> sweep_names;
    for (const auto& s : sweeps) sweep_names[s.id] = s.name;
    std::map<std::int64_t, RunRow*> reusable;
    for (auto& row : runs_) reusable.emplace(row.run.id, &row);
    std::vector<RunRow> rows;
    for (auto& run : runs) {
      RunRow row;
      auto f = fresh.find(run.id);
      if (f == fresh.end()) {
        row = std::move(*reusable.at(run.id));
        row.run = std::move(run);
      } else {
        row.run = std::move(run);
        row.config = nlohmann::json::parse(row.run.config_json, nullptr, false);
        if (!row.config.is_object()) row.config = nlohmann::json::object();
        row.results = std::move(f->second);
      }
      row.sweep_name = row.run.sweep_id ? sweep_names[*row.run.sweep_id] : "";
      auto v = row.config.find("run.variant");
      row.variant = v != row.config.end() && v->is_string() ? v->get<std::string>() : "";
      row.status = shown_status(row.run, now);
      row.text = filter_text(row);
      rows.push_back(std::move(row));
    }
    sweeps_ = std::move(sweeps);
    runs_ = std::move(rows);
    error_.clear();
  } catch (const std::exception& e) {
    error_ = e.what();  // the previous snapshot stays as it was
  }
}

bool RunCatalog::recheck_running() {
  const double now = unix_now();
  bool changed = false;
  for (auto& row : runs_) {
    if (row.run.status != RunStatus::running) continue;
    std::string status = shown_status(row.run, now);
    if (status == row.status) continue;
    row.status = std::move(status);
    row.text = filter_text(row);
    changed = true;
  }
  return changed;
}

const RunRow* RunCatalog::find(std::int64_t id) const {
  for (const auto& row : runs_)
    if (row.run.id == id) return &row;
  return nullptr;
}

std::optional<std::string> RunCatalog::field(const RunRow& row, const std::string& name) {
  const RunRecord& r = row.run;
  if (name == "id") return std::to_string(r.id);
  if (name == "name") return r.name;
  if (name == "kind") return r.kind;
  if (name == "status") return row.status;
  if (name == "seed") return std::to_string(r.seed);
  if (name == "sweep") return row.sweep_name;
  if (name == "variant") return row.variant;
  if (name == "tag" || name == "tags") return join(r.tags, ",");
  if (name == "host") return r.host;
  if (name == "error") return r.error;
  auto c = row.config.find(name);
  if (c != row.config.end()) return config_value_text(*c);
  auto res = row.results.find(name);
  if (res != row.results.end()) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.10g", res->second);
    return std::string(buf);
  }
  return std::nullopt;
}

std::vector<std::string> RunCatalog::varying_config_keys(const std::vector<const RunRow*>& rows) {
  std::map<std::string, std::set<std::string>> values;
  for (const RunRow* row : rows)
    for (auto it = row->config.begin(); it != row->config.end(); ++it) values[it.key()].insert(it.value().dump());
  std::vector<std::string> keys;
  bool variant = false;
  for (const auto& [key, seen] : values) {
    if (key == "run.variant") {
      variant = true;
      continue;
    }
    if (key.rfind("run.", 0) == 0 || key == "train.threads") continue;
    // A key some runs lack also varies.
    std::size_t have = 0;
    for (const RunRow* row : rows) have += row->config.contains(key);
    if (seen.size() > 1 || have != rows.size()) keys.push_back(key);
  }
  if (variant) keys.insert(keys.begin(), "run.variant");
  return keys;
}

void RunCatalog::set_tags(std::int64_t run, const std::vector<std::string>& tags) {
  RunStore(path_).set_tags(run, tags);
  refresh(true);
}

}  // namespace moxlab::viewer
