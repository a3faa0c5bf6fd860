// Axis ticks for the viewer's plots: "nice" steps (1, 2, 5 x 10^k) on linear axes and powers of ten
// (with 2 and 5 in between when the range is short) on log axes, labelled with just enough digits to
// tell neighbouring ticks apart.
#pragma once
#include <string>
#include <vector>

namespace moxlab::viewer {

struct Tick {
  double value = 0;
  std::string label;
};

// Ticks inside [lo, hi] with a step of 1, 2 or 5 x 10^k giving at most max_ticks ticks (at least 2
// when the range is not empty). lo == hi gives the single tick lo.
std::vector<Tick> linear_ticks(double lo, double hi, int max_ticks);

// Ticks inside [lo, hi] (both > 0) for a log axis: 10^k, plus 2 and 5 x 10^k when the range spans
// less than max_ticks / 3 decades; every n-th decade when there are more decades than max_ticks.
std::vector<Tick> log_ticks(double lo, double hi, int max_ticks);

// A tick label: fixed notation with the decimals the step needs ("0.25", "1200"), scientific for very
// large or small magnitudes ("1e-05", "3e+07").
std::string tick_label(double value, double step);

}  // namespace moxlab::viewer
