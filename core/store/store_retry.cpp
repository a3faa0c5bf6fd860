#include "core/store/store_retry.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "core/store/run_store.h"

namespace moxlab {

void retry_while_busy(const std::function<void()>& write, double wait_s, const std::function<void()>& on_wait) {
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(wait_s));
  auto pause = std::chrono::milliseconds(50);
  for (bool first = true;; first = false) {
    try {
      write();
      return;
    } catch (const RunStoreBusy&) {
      if (clock::now() + pause > deadline) throw;
    }
    if (first && on_wait) on_wait();
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(2000));
  }
}

}  // namespace moxlab
