#include "core/store/metric_log.h"

#include <algorithm>

#include "core/store/store_retry.h"

namespace moxlab {

namespace {
RunStoreOptions short_wait(int timeout_ms) {
  RunStoreOptions o;
  o.busy_timeout_ms = timeout_ms;
  return o;
}
}  // namespace

MetricLog::MetricLog(const std::string& store_path, std::int64_t run, MetricLogOptions options)
    : store_(store_path, short_wait(options.try_timeout_ms)), run_(run), options_(options) {}

void MetricLog::add(std::int64_t step, const std::vector<std::pair<std::string, double>>& values) {
  const double now = unix_now();
  for (const auto& [key, value] : values) rows_.push_back({step, key, value, now});
  if (std::chrono::steady_clock::now() >= next_try_) try_write();
}

void MetricLog::try_write() {
  if (rows_.empty()) return;
  try {
    store_.log_metric_rows(run_, rows_);
  } catch (const RunStoreBusy&) {
    if (backoff_s_ == 0 && note)
      note("run store " + store_.path() + " is locked by another process; metrics are kept in memory until it frees");
    backoff_s_ = backoff_s_ == 0 ? options_.first_backoff_s : std::min(2 * backoff_s_, options_.max_backoff_s);
    next_try_ = std::chrono::steady_clock::now() +
                std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(backoff_s_));
    return;
  }
  written();
}

void MetricLog::flush(double wait_s, const std::function<void()>& on_wait) {
  if (rows_.empty()) return;
  retry_while_busy([&] { store_.log_metric_rows(run_, rows_); }, wait_s, on_wait);
  written();
}

void MetricLog::written() {
  if (backoff_s_ != 0 && note) note("run store free again: " + std::to_string(rows_.size()) + " buffered metric values written");
  rows_.clear();
  backoff_s_ = 0;
  next_try_ = {};
}

}  // namespace moxlab
