// Row-parallel inference without a BLAS region per small product: f(first, end) over contiguous row
// ranges of [0, rows) split evenly over the threads, in one parallel region; products inside run
// single-threaded (OpenBLAS and ATen's nested parallel_for do inside an OpenMP region), and each thread's
// products, activations and passes stay on its own rows, in its own cache. A layer's many small products
// (MoHD's routed groups, ToMoE's experts) then cost one fork and join instead of one each, and no row
// moves between the two cores: both are what the machine's slow phase makes expensive
// (docs/decisions/2026-11-25-row-local-parallel-regions.md). Defined in moxlab_kernels, which is compiled
// with OpenMP (ATen's parallel_for is an inline OpenMP pragma: in moxlab_core it would run serially). The
// caller's grad mode holds in every thread.
#pragma once
#include <cstdint>
#include <functional>

namespace moxlab {

// The grain of the row-parallel products: at least this many rows per thread (fewer run on the calling
// thread), four AVX-512 tiles of 8 rows, so a thread's share amortises the region's fork and join.
constexpr std::int64_t kRowGrain = 32;

// Ranges of at least `grain` rows (fewer rows run on the calling thread).
void parallel_row_ranges(std::int64_t rows, std::int64_t grain, const std::function<void(std::int64_t, std::int64_t)>& f);

}  // namespace moxlab
