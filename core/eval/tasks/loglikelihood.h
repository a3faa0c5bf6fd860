// The one question every zero-shot task asks the model, as in lm-evaluation-harness:
// "what is log p(continuation | context), and is the continuation the greedy decode?"
// Task code (torch-free) builds requests; the model-side scorer (core/eval/scorer.h) answers them.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

namespace moxlab {

// Requests built by the task code (encode_pair.h) never have an empty context: an empty context
// text becomes the single prefix token (BOS, else EOS), as in lm-evaluation-harness, so the
// scorer always has a token to predict the first continuation token from.
struct LoglikelihoodRequest {
  std::vector<std::int32_t> context;       // conditioning tokens (may start with BOS)
  std::vector<std::int32_t> continuation;  // tokens whose log-probabilities are summed (non-empty)
};

struct LoglikelihoodResult {
  double logprob = 0.0;  // sum over continuation tokens of log p(token | everything before it)
  bool greedy = false;   // every continuation token is the argmax of its predictive distribution
};

// Answers a batch of requests, one result per request, in order.
using LoglikelihoodFn =
    std::function<std::vector<LoglikelihoodResult>(const std::vector<LoglikelihoodRequest>&)>;

}  // namespace moxlab
