// Terminal progress for long loops: one self-rewriting line on a TTY
// ("[#####.....] step 120/1000  loss 3.412  5,321 tok/s  ETA 02:41"), and a plain line every 5% of
// the work otherwise (so CI logs and redirected output stay readable).
#pragma once
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace moxlab::cli {

class ProgressBar {
 public:
  explicit ProgressBar(std::string label);
  // done/total units; extra: pre-formatted fields (loss etc.); rate in units or tokens per second.
  void update(std::int64_t done, std::int64_t total, const std::string& extra, double eta_s);
  // The same with the ETA extrapolated from the wall time since the first update, so it covers
  // everything the loop does between updates (validation passes, checkpoints), not only its steps.
  void update(std::int64_t done, std::int64_t total, const std::string& extra);
  void finish();

 private:
  struct Mark {
    std::chrono::steady_clock::time_point time;
    std::int64_t done;
  };
  std::optional<Mark> first_;
  std::string label_;
  bool tty_;
  int last_bucket_ = -1;
  bool open_line_ = false;
};

std::string format_duration(double seconds);

}  // namespace moxlab::cli
