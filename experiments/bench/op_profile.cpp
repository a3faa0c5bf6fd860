#include "experiments/bench/op_profile.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include <torch/csrc/autograd/profiler_legacy.h>

namespace moxlab {

namespace {
// " [1024x384] [384x1024]": an op's tensor inputs (scalars and lists print nothing).
std::string shapes_text(const std::vector<std::vector<std::int64_t>>& shapes) {
  std::string out;
  for (const auto& shape : shapes) {
    if (shape.empty()) continue;
    out += " [";
    for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? "x" : "") + std::to_string(shape[i]);
    out += "]";
  }
  return out;
}
}  // namespace

std::vector<OpTime> profile_ops(const std::function<void()>& f, int calls) {
  using namespace torch::autograd::profiler;
  thread_event_lists events;
  {
    TLSLegacyProfilerGuard guard(torch::profiler::impl::ProfilerConfig(torch::profiler::impl::ProfilerState::CPU, /*report_input_shapes=*/true),
                                 [&](const thread_event_lists& e) { events = e; });
    for (int i = 0; i < calls; ++i) f();
  }
  std::map<std::string, OpTime> by_name;
  for (const auto& thread : events) {
    // Ranges nest per thread: a pop closes the innermost open push; its time less its children's is its own.
    struct Open {
      const LegacyEvent* push;
      double children_us;
    };
    std::vector<Open> open;
    for (const auto& e : thread) {
      if (e.kind() == EventKind::PushRange) {
        open.push_back({&e, 0});
      } else if (e.kind() == EventKind::PopRange && !open.empty()) {
        const Open o = open.back();
        open.pop_back();
        const double us = o.push->cpuElapsedUs(e);
        const std::string key = o.push->name() + shapes_text(o.push->shapes());
        OpTime& t = by_name[key];
        t.name = key;
        t.total_ms += us / 1000.0;
        t.self_ms += (us - o.children_us) / 1000.0;
        t.calls += 1;
        if (!open.empty()) open.back().children_us += us;
      }
    }
  }
  std::vector<OpTime> ops;
  for (auto& [name, t] : by_name) {
    t.self_ms /= calls;
    t.total_ms /= calls;
    t.calls /= calls;
    ops.push_back(t);
  }
  std::sort(ops.begin(), ops.end(), [](const OpTime& a, const OpTime& b) { return a.self_ms > b.self_ms; });
  return ops;
}

std::string format_op_profile(const std::vector<OpTime>& ops, int top) {
  double sum = 0;
  for (const auto& t : ops) sum += t.self_ms;
  std::string out = "| op | self ms | share | total ms | calls |\n|---|---|---|---|---|\n";
  char buf[256];
  for (int i = 0; i < top && i < static_cast<int>(ops.size()); ++i) {
    const auto& t = ops[i];
    std::snprintf(buf, sizeof buf, "| %s | %.3f | %.1f%% | %.3f | %.0f |\n", t.name.c_str(), t.self_ms, sum > 0 ? 100 * t.self_ms / sum : 0.0,
                  t.total_ms, t.calls);
    out += buf;
  }
  std::snprintf(buf, sizeof buf, "| (all %zu ops) | %.3f | 100%% | | |\n", ops.size(), sum);
  return out + buf;
}

}  // namespace moxlab
