// Per-token ranking of hidden dimensions by magnitude x_i^2 (MoHD Eq. 1), shared by the "which
// dimensions are high" observations (Fig. 3 right, Fig. 5). A dimension is in a token's top-p% when
// its rank is below K = ceil(p/100 * d): rank 0 is the largest magnitude and ties go to the lower
// dimension index, so exactly K dimensions are "high" in every token.
#pragma once
#include <cstdint>
#include <vector>

#include "core/observe/activation_matrix.h"

namespace moxlab {

struct DimRanks {
  std::vector<std::int32_t> ranks;  // [rows, cols] row-major: ranks[t*cols + i] = rank of dim i in token t
  std::int64_t rows = 0, cols = 0;

  const std::int32_t* row(std::int64_t t) const { return ranks.data() + t * cols; }
};

// O(N d log d); the values must be finite (NaN has no order).
DimRanks rank_dimensions(const ActivationMatrix& x);

// K = ceil(percent/100 * d), the number of dimensions in the top percent% (percent in (0, 100]).
std::int64_t top_count(double percent, std::int64_t d);

}  // namespace moxlab
