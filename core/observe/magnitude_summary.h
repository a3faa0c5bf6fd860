// Fig. 4 of the MoHD paper ("activation flow"): the typical magnitude x^2 at each tap of a block,
// shown relative to the block's attention input (100%). The paper quotes medians ("median > 1" at
// the inputs, "< 0.5" at the outputs, W_O "reduced to 6.7%"), so the exact median over all
// (token, dimension) elements is kept, with the mean next to it:
//   median = median_{t,i} x_{t,i}^2 (even count: mean of the two middle values),
//   mean   = (1/(N d)) sum_{t,i} x_{t,i}^2.
#pragma once
#include <cstdint>

#include "core/observe/activation_matrix.h"

namespace moxlab {

struct MagnitudeSummary {
  double median = 0;
  double mean = 0;
  std::int64_t elements = 0;  // N d
};

// Exact median via std::nth_element on a copy of the N d magnitudes (float32, 4 N d bytes).
MagnitudeSummary magnitude_summary(const ActivationMatrix& x);

}  // namespace moxlab
