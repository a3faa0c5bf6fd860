// Where a forward's time goes, op by op: LibTorch's own profiler (the legacy CPU event recorder) around
// some calls of a function, folded into a table of ops (by name and input shapes) by self time (an op's
// time minus the ops it called). The profiler's own cost inflates the times of small ops: read the table
// for where time goes, the benchmark's timings for how much.
// `moxlab bench infer --profile N` prints the N costliest ops of each variant's prefill.
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace moxlab {

struct OpTime {
  std::string name;  // op name and input shapes, e.g. "aten::mm [1024x384] [384x1024]"
  double self_ms = 0, total_ms = 0;  // per call of the profiled function
  double calls = 0;                  // per call of the profiled function
};

// The ops f ran, costliest self time first, averaged over `calls` calls.
std::vector<OpTime> profile_ops(const std::function<void()>& f, int calls);

// A markdown table of the first `top` rows, with each row's share of the summed self time.
std::string format_op_profile(const std::vector<OpTime>& ops, int top);

}  // namespace moxlab
