// The row-parallel loop (kernels/runtime/row_parallel.h): ranges that tile the rows, of at least the grain,
// one region on the caller's thread for few rows, and the caller's grad mode in every thread.
#include <ATen/Parallel.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <vector>

#include "kernels/runtime/row_parallel.h"
#include "tests/torch_catch.h"

using namespace moxlab;

TEST_CASE("parallel_row_ranges tiles the rows in ranges of at least the grain, in the caller's grad mode", "[kernels]") {
  const int before = at::get_num_threads();
  at::set_num_threads(2);
  for (const std::int64_t rows : {0, 1, 31, 32, 64, 65, 1000}) {
    INFO("rows " << rows);
    for (const bool grad : {true, false}) {
      const torch::AutoGradMode mode(grad);
      std::mutex m;
      std::vector<std::pair<std::int64_t, std::int64_t>> ranges;
      std::atomic<bool> same_mode{true};
      parallel_row_ranges(rows, kRowGrain, [&](std::int64_t a, std::int64_t e) {
        if (torch::GradMode::is_enabled() != grad) same_mode = false;
        const std::lock_guard<std::mutex> lock(m);
        ranges.emplace_back(a, e);
      });
      CHECK(same_mode);
      std::sort(ranges.begin(), ranges.end());
      std::int64_t next = 0;
      for (const auto& [a, e] : ranges) {
        CHECK(a == next);
        CHECK(e > a);
        if (ranges.size() > 1) CHECK(e - a >= kRowGrain / 2);  // split evenly; never tiny slivers
        next = e;
      }
      CHECK(next == rows);
      if (rows < 2 * kRowGrain) CHECK(ranges.size() <= 1);  // too few rows for two threads' grain
    }
  }
  at::set_num_threads(before);
}
