#include "core/observe/magnitude_summary.h"

#include <algorithm>
#include <vector>

namespace moxlab {

MagnitudeSummary magnitude_summary(const ActivationMatrix& x) {
  require_nonempty(x, "magnitude summary");
  const std::size_t n = static_cast<std::size_t>(x.rows) * static_cast<std::size_t>(x.cols);
  std::vector<float> m(n);
  double sum = 0;
  for (std::size_t e = 0; e < n; ++e) {
    const double v = static_cast<double>(x.data[e]) * x.data[e];
    sum += v;
    m[e] = static_cast<float>(v);
  }
  MagnitudeSummary s;
  s.elements = static_cast<std::int64_t>(n);
  s.mean = sum / static_cast<double>(n);
  const auto mid = m.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(m.begin(), mid, m.end());
  s.median = *mid;  // upper middle; for an even count average it with the largest value below it
  if (n % 2 == 0) s.median = (s.median + static_cast<double>(*std::max_element(m.begin(), mid))) / 2.0;
  return s;
}

}  // namespace moxlab
