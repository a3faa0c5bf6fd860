#include "kernels/runtime/row_parallel.h"

#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>

namespace moxlab {

void parallel_row_ranges(std::int64_t rows, std::int64_t grain, const std::function<void(std::int64_t, std::int64_t)>& f) {
  const bool grad = at::GradMode::is_enabled();
  at::parallel_for(0, rows, grain, [&](std::int64_t begin, std::int64_t end) {
    const at::AutoGradMode same_as_caller(grad);  // grad mode is thread-local: OpenMP workers start with it on
    f(begin, end);
  });
}

}  // namespace moxlab
