#include "core/eval/unigram_baseline.h"

#include <algorithm>
#include <cmath>

namespace moxlab {

UnigramBaseline::UnigramBaseline(const TokenSource& train, int vocab_size) {
  std::vector<double> counts(vocab_size, 1.0);  // add-one
  double total = vocab_size;
  std::vector<std::int32_t> buf(1 << 16);
  for (int d = 0; d < train.num_domains(); ++d)
    for (std::int64_t s = 0; s < train.size(d); s += static_cast<std::int64_t>(buf.size())) {
      const std::int64_t n = std::min<std::int64_t>(static_cast<std::int64_t>(buf.size()), train.size(d) - s);
      train.read(d, s, n, buf.data());
      for (std::int64_t i = 0; i < n; ++i) counts[buf[i]] += 1.0;
      total += static_cast<double>(n);
    }
  log_probs_.resize(vocab_size);
  for (int t = 0; t < vocab_size; ++t) {
    log_probs_[t] = std::log(counts[t] / total);
    entropy_ -= std::exp(log_probs_[t]) * log_probs_[t];
  }
}

PerplexityResult UnigramBaseline::evaluate(const TokenSource& src, int domain, std::int64_t max_tokens) const {
  const std::int64_t n = max_tokens > 0 ? std::min(max_tokens, src.size(domain)) : src.size(domain);
  std::vector<std::int32_t> tokens(static_cast<std::size_t>(n));
  if (n > 0) src.read(domain, 0, n, tokens.data());
  PerplexityResult r;
  for (std::int64_t i = 1; i < n; ++i) r.nll_sum -= log_probs_[tokens[i]];
  r.tokens = std::max<std::int64_t>(0, n - 1);
  r.entropy_sum = static_cast<double>(r.tokens) * entropy_;  // the same distribution at every position
  const std::int64_t total = src.size(domain);
  if (src.text_bytes(domain) > 0 && total > 0)
    r.bytes = static_cast<std::int64_t>(std::llround(static_cast<double>(src.text_bytes(domain)) * n / total));
  return r;
}

}  // namespace moxlab
