#include "experiments/cli/progress_bar.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>

namespace moxlab::cli {

std::string format_duration(double s) {
  if (!std::isfinite(s) || s < 0) return "--:--";
  const long t = std::lround(s);
  char buf[32];
  if (t >= 3600) std::snprintf(buf, sizeof(buf), "%ld:%02ld:%02ld", t / 3600, (t / 60) % 60, t % 60);
  else std::snprintf(buf, sizeof(buf), "%02ld:%02ld", t / 60, t % 60);
  return buf;
}

ProgressBar::ProgressBar(std::string label) : label_(std::move(label)), tty_(::isatty(STDERR_FILENO)) {}

void ProgressBar::update(std::int64_t done, std::int64_t total, const std::string& extra, double eta_s) {
  const double frac = total > 0 ? static_cast<double>(done) / total : 1.0;
  if (tty_) {
    const int width = 24, filled = static_cast<int>(frac * width);
    std::string bar(filled, '#');
    bar += std::string(width - filled, '.');
    std::fprintf(stderr, "\r%s [%s] %lld/%lld  %s  ETA %s\033[K", label_.c_str(), bar.c_str(),
                 static_cast<long long>(done), static_cast<long long>(total), extra.c_str(), format_duration(eta_s).c_str());
    std::fflush(stderr);
    open_line_ = true;
  } else {
    const int bucket = static_cast<int>(frac * 20);  // every 5%
    if (bucket == last_bucket_) return;
    last_bucket_ = bucket;
    std::fprintf(stderr, "%s %lld/%lld  %s  ETA %s\n", label_.c_str(), static_cast<long long>(done),
                 static_cast<long long>(total), extra.c_str(), format_duration(eta_s).c_str());
  }
}

void ProgressBar::update(std::int64_t done, std::int64_t total, const std::string& extra) {
  const auto now = std::chrono::steady_clock::now();
  if (!first_) first_ = Mark{now, done};
  double eta = NAN;
  if (done > first_->done) {
    const double seconds = std::chrono::duration<double>(now - first_->time).count();
    eta = seconds / static_cast<double>(done - first_->done) * static_cast<double>(total - done);
  }
  update(done, total, extra, eta);
}

void ProgressBar::finish() {
  if (open_line_) std::fprintf(stderr, "\n");
  open_line_ = false;
}

}  // namespace moxlab::cli
