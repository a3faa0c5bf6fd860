// Several small row-range products as one parallel region: each job's rows cut into one part per thread,
// the parts ordered part-major so the region's static split hands thread p part p of every job (equal
// rows per thread), and each product runs single-threaded inside it (OpenBLAS and ATen's nested
// parallel_for do inside an OpenMP region). One fork and join for all of a layer's routed groups or
// experts instead of a multi-threaded BLAS call each, whose thread hand-offs are what the machine's slow
// phase makes expensive (docs/performance.md). Callers run it without autograd.
#pragma once
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace moxlab {

// jobs: (first row, rows) each; product(first row, rows, job index) for every non-empty part. Defined in
// moxlab_sparse, which is compiled with OpenMP (ATen's parallel_for is an inline OpenMP pragma).
void row_parts_in_one_region(const std::vector<std::pair<std::int64_t, std::int64_t>>& jobs,
                             const std::function<void(std::int64_t, std::int64_t, std::size_t)>& product);

}  // namespace moxlab
