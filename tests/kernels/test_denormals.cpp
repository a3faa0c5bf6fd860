// set_flush_denormals sets flush-to-zero and denormals-are-zero on the caller and every LibTorch worker,
// and clears them again; threads started later inherit the mode.
#include "tests/torch_catch.h"

#include <thread>
#include <vector>

#include "kernels/runtime/denormals.h"
#include "kernels/runtime/row_parallel.h"
#include "kernels/runtime/torch_threads.h"

using namespace moxlab;

namespace {
// 1e-39 is denormal (below 1.18e-38): read as zero under denormals-are-zero. 1e-20 * 1e-20 = 1e-40 is a
// denormal result: written as zero under flush-to-zero. Volatile, so the compiler cannot fold them.
bool this_thread_flushes() {
  volatile float denormal = 1e-39f, one = 1.0f, small = 1e-20f;
  const bool daz = denormal * one == 0.0f;
  const bool ftz = small * small == 0.0f;
  REQUIRE(daz == ftz);  // set and cleared together
  return daz;
}

// Whether each of `threads` LibTorch workers (row i runs on thread i) flushes.
std::vector<bool> workers_flush(int threads) {
  std::vector<char> seen(static_cast<std::size_t>(threads), 2);
  parallel_row_ranges(threads, 1, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) seen[static_cast<std::size_t>(i)] = this_thread_flushes();
  });
  return {seen.begin(), seen.end()};
}
}  // namespace

TEST_CASE("set_flush_denormals reaches the caller, every worker and threads started later, and clears again", "[threads]") {
  const int before = at::get_num_threads();
  REQUIRE(set_torch_threads(2) == 2);
  const torch::Tensor x = torch::full({1 << 17}, 1e-39f);  // made before flushing, which would write zeros
  REQUIRE(x.count_nonzero().item<std::int64_t>() == (1 << 17));
  if (!set_flush_denormals(true)) {
    WARN("skipped: this CPU has no flush-to-zero mode");
    set_torch_threads(before);
    return;
  }
  CHECK(this_thread_flushes());
  CHECK(workers_flush(2) == std::vector<bool>{true, true});
  // A LibTorch op split over both workers: every denormal input reads as zero.
  CHECK((x * 1.0f).count_nonzero().item<std::int64_t>() == 0);
  bool later = false;
  std::thread([&] { later = this_thread_flushes(); }).join();
  CHECK(later);

  REQUIRE(set_flush_denormals(false));
  CHECK_FALSE(this_thread_flushes());
  CHECK(workers_flush(2) == std::vector<bool>{false, false});
  CHECK((x * 1.0f).count_nonzero().item<std::int64_t>() == (1 << 17));
  std::thread([&] { later = this_thread_flushes(); }).join();
  CHECK_FALSE(later);
  set_torch_threads(before);
}
