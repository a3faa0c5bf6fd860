// Terminal progress for long loops: one self-rewriting line on a TTY
// ("[#####.....] step 120/1000  loss 3.412  5,321 tok/s  ETA 02:41"), and a plain line every 5% of
// the work otherwise (so CI logs and redirected output stay readable).
#pragma once
#include <cstdint>
#include <string>

namespace moxlab::cli {

class ProgressBar {
 public:
  explicit ProgressBar(std::string label);
  // done/total units; extra: pre-formatted fields (loss etc.); rate in units or tokens per second.
  void update(std::int64_t done, std::int64_t total, const std::string& extra, double eta_s);
  void finish();

 private:
  std::string label_;
  bool tty_;
  int last_bucket_ = -1;
  bool open_line_ = false;
};

std::string format_duration(double seconds);

}  // namespace moxlab::cli
