// A non-owning, row-major view of one tap's activations: rows are tokens, cols are hidden dimensions
// (the capture layout /probes/<tap> float32 [N, F], core/capture/capture.h). Every statistic in
// core/observe reads activations through this view; none of them owns or copies the whole matrix
// unless it says so.
#pragma once
#include <cstdint>
#include <string>

#include "core/common/error.h"

namespace moxlab {

struct ActivationMatrix {
  const float* data = nullptr;
  std::int64_t rows = 0;  // tokens
  std::int64_t cols = 0;  // hidden dimensions d

  const float* row(std::int64_t t) const { return data + t * cols; }
  // The paper's magnitude of dimension i of token t: m_i = x_i^2 (MoHD Eq. 1).
  double magnitude(std::int64_t t, std::int64_t i) const {
    const double x = row(t)[i];
    return x * x;
  }
};

// The statistics need at least one token and one dimension; `what` names the caller in the message.
inline void require_nonempty(const ActivationMatrix& x, const std::string& what) {
  require(x.data != nullptr && x.rows > 0 && x.cols > 0, what + ": empty activation matrix");
}

}  // namespace moxlab
