#include "core/train/batch_sampler.h"

#include <algorithm>

#include "core/common/error.h"
#include "core/data/splitmix64.h"

namespace moxlab {

std::uint64_t splitmix64(std::uint64_t x) { return SplitMix64(x).next(); }

BatchSampler::BatchSampler(std::vector<std::int64_t> domain_tokens, int window, std::uint64_t seed)
    : window_(window), seed_(seed) {
  for (auto n : domain_tokens) {
    const std::int64_t v = std::max<std::int64_t>(0, n - window + 1);
    starts_.push_back(total_);
    valid_.push_back(v);
    total_ += v;
  }
  require(total_ > 0, "training data is shorter than one window of " + std::to_string(window) + " tokens");
}

std::vector<WindowRef> BatchSampler::windows(std::int64_t step, int micro, int batch_size, int first) const {
  std::vector<WindowRef> out;
  out.reserve(batch_size);
  const std::uint64_t base = splitmix64(seed_ ^ splitmix64(static_cast<std::uint64_t>(step) * 1000003ULL + micro));
  for (int b = first; b < first + batch_size; ++b) {
    const std::int64_t g = static_cast<std::int64_t>(splitmix64(base + static_cast<std::uint64_t>(b)) % static_cast<std::uint64_t>(total_));
    // Domain d owns global starts [starts_[d], starts_[d] + valid_[d]).
    auto it = std::upper_bound(starts_.begin(), starts_.end(), g);
    int d = static_cast<int>(it - starts_.begin()) - 1;
    while (valid_[d] == 0 || g >= starts_[d] + valid_[d]) ++d;  // skip empty domains
    out.push_back({d, g - starts_[d]});
  }
  return out;
}

}  // namespace moxlab
