#include "kernels/sparse/row_parts.h"

#include <algorithm>

#include <ATen/Parallel.h>

namespace moxlab {

void row_parts_in_one_region(const std::vector<std::pair<std::int64_t, std::int64_t>>& jobs,
                             const std::function<void(std::int64_t, std::int64_t, std::size_t)>& product) {
  const std::int64_t parts = std::max(1, at::get_num_threads()), n = static_cast<std::int64_t>(jobs.size());
  at::parallel_for(0, parts * n, 1, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t c = begin; c < end; ++c) {
      const auto [start, count] = jobs[static_cast<std::size_t>(c % n)];
      const std::int64_t p = c / n, lo = start + count * p / parts, hi = start + count * (p + 1) / parts;
      if (hi > lo) product(lo, hi - lo, static_cast<std::size_t>(c % n));
    }
  });
}

}  // namespace moxlab
