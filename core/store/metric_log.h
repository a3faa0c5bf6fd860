// A run's metric rows on their way to the run store, so that a store locked by another process delays
// them instead of failing the run. add() buffers a step's values and writes everything buffered in one
// transaction, waiting only briefly for the lock; while the store stays busy the rows are kept in
// memory and the next try waits for a backoff that doubles up to max_backoff_s. flush() writes
// everything, waiting as long as it is told (a training flushes before each checkpoint: a resume redoes
// only the steps after it, so the rows up to it must be stored by then). Rows keep their order and
// wall times, and a batch is written whole or not at all: no row is lost or written twice.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/store/run_store.h"

namespace moxlab {

struct MetricLogOptions {
  int try_timeout_ms = 50;  // how long one try from add() waits for the lock
  double first_backoff_s = 0.5;
  double max_backoff_s = 30;
};

class MetricLog {
 public:
  // Opens its own connection to the store (with the short busy timeout).
  MetricLog(const std::string& store_path, std::int64_t run, MetricLogOptions options = MetricLogOptions());

  // Buffers the values of one step (stamped now) and writes the buffer unless backing off.
  void add(std::int64_t step, const std::vector<std::pair<std::string, double>>& values);
  // Writes the buffer, waiting up to wait_s for a busy store (retry_while_busy); RunStoreBusy after.
  void flush(double wait_s, const std::function<void()>& on_wait = {});
  std::size_t pending_rows() const { return rows_.size(); }

  // Told one line when rows start waiting in memory for a busy store, and one when they are written.
  std::function<void(const std::string&)> note;

 private:
  void try_write();
  void written();  // the buffer is in the store

  RunStore store_;
  std::int64_t run_;
  MetricLogOptions options_;
  std::vector<MetricRow> rows_;
  double backoff_s_ = 0;  // 0: not backing off
  std::chrono::steady_clock::time_point next_try_{};
};

}  // namespace moxlab
