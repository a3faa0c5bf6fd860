// A heartbeat thread: calls beat() at once and then every period_s until destroyed (the destructor
// wakes and joins it without waiting out the period). beat() runs on the thread, so it must open its
// own store connection, and should swallow a busy store (a missed beat is harmless; ten are stale).
#pragma once
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace moxlab {

class Heartbeat {
 public:
  Heartbeat(double period_s, std::function<void()> beat);
  ~Heartbeat();
  Heartbeat(const Heartbeat&) = delete;
  Heartbeat& operator=(const Heartbeat&) = delete;

 private:
  std::mutex mutex_;
  std::condition_variable wake_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace moxlab
