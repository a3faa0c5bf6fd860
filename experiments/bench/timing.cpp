#include "experiments/bench/timing.h"

#include <algorithm>
#include <chrono>

namespace moxlab {

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

double seconds_per_call(const std::function<void()>& f, double min_seconds) {
  int calls = 0;
  const auto t0 = std::chrono::steady_clock::now();
  double elapsed = 0;
  do {
    f();
    ++calls;
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  } while (elapsed < min_seconds);
  return elapsed / calls;
}

}  // namespace moxlab
