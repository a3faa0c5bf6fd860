// The reference a trained LM must beat: a unigram model p(t) = (count_train(t) + 1) / (N + V)
// (add-one smoothing) fitted on all train tokens, scored on a domain's validation tokens with the
// same accounting as evaluate_perplexity (every token but the first of the stream).
#pragma once
#include <cstdint>
#include <vector>

#include "core/data/shards/token_source.h"
#include "core/eval/perplexity.h"

namespace moxlab {

class UnigramBaseline {
 public:
  UnigramBaseline(const TokenSource& train, int vocab_size);
  PerplexityResult evaluate(const TokenSource& src, int domain, std::int64_t max_tokens) const;
  double log_prob(std::int32_t token) const { return log_probs_[token]; }

 private:
  std::vector<double> log_probs_;
  double entropy_ = 0.0;  // nats
};

}  // namespace moxlab
