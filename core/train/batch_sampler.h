// Deterministic training data order. The windows of optimiser step s, micro-batch m are a pure
// function of (seed, s, m): a resumed run sees exactly the batches the uninterrupted run would have,
// with no sampler state to save. Windows of seq_len + 1 tokens are drawn uniformly over all valid
// start positions of all domains' train splits (so domains are mixed in proportion to their size).
#pragma once
#include <cstdint>
#include <vector>

namespace moxlab {

struct WindowRef {
  int domain = 0;
  std::int64_t start = 0;
};

class BatchSampler {
 public:
  // domain_tokens[d] = number of train tokens of domain d; window = seq_len + 1 tokens.
  BatchSampler(std::vector<std::int64_t> domain_tokens, int window, std::uint64_t seed);
  // Rows [first, first + batch_size) of the micro-batch: a data-parallel rank r with micro-batch B takes
  // first = r * B, so N ranks together draw the rows of one process with micro-batch N * B.
  std::vector<WindowRef> windows(std::int64_t step, int micro, int batch_size, int first = 0) const;
  std::int64_t valid_starts() const { return total_; }

 private:
  std::vector<std::int64_t> starts_;  // prefix sums of valid starts per domain
  std::vector<std::int64_t> valid_;
  std::int64_t total_ = 0;
  int window_;
  std::uint64_t seed_;
};

// One splitmix64 output for seed x (core/data/splitmix64.h): a stateless hash for data order.
std::uint64_t splitmix64(std::uint64_t x);

}  // namespace moxlab
