#include "experiments/runner/heartbeat.h"

#include <chrono>

namespace moxlab {

Heartbeat::Heartbeat(double period_s, std::function<void()> beat)
    : thread_([this, period_s, beat = std::move(beat)] {
        std::unique_lock<std::mutex> lock(mutex_);
        do {
          lock.unlock();
          beat();
          lock.lock();
        } while (!wake_.wait_for(lock, std::chrono::duration<double>(period_s), [&] { return done_; }));
      }) {}

Heartbeat::~Heartbeat() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

}  // namespace moxlab
