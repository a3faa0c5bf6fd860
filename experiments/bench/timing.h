// Timing helpers every benchmark here shares: the median of repeats, and the wall time per call of a
// function called until a minimum time has passed (short calls are averaged over many).
#pragma once
#include <functional>
#include <vector>

namespace moxlab {

double median(std::vector<double> values);  // 0 for none

// Seconds per call of f, calling it at least once and until min_seconds have passed.
double seconds_per_call(const std::function<void()>& f, double min_seconds);

}  // namespace moxlab
