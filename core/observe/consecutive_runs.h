// Runs of consecutive tokens in a capture, for the observations that follow dimensions across
// neighbouring tokens (MoHD Fig. 3 right, Fig. 5). Rows t and t+1 are consecutive when they come from
// the same window and position[t+1] = position[t] + 1 (capture layout: /window, /position); a window
// boundary or a gap breaks the run.
#pragma once
#include <cstdint>
#include <vector>

namespace moxlab {

// length[t] = the largest L such that rows t, t+1, ..., t+L-1 are pairwise consecutive (>= 1).
// A run of k consecutive tokens starts at t exactly when length[t] >= k.
std::vector<std::int32_t> consecutive_run_lengths(const std::vector<std::int32_t>& window,
                                                  const std::vector<std::int32_t>& position);

}  // namespace moxlab
