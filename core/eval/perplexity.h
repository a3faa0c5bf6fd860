// Perplexity of a model on a token stream, chunked: the stream is cut into non-overlapping windows of
// seq_len + 1 tokens (stride seq_len); in each window tokens 2..seq_len+1 are predicted from the
// tokens before them inside the window. Every token but the first of the stream is scored exactly
// once; context restarts at window boundaries (so this is an upper bound on the sliding-window value).
//   loss = mean NLL per predicted token (nats); ppl = exp(loss);
//   bpb  = total NLL / (ln 2 * text bytes) when the byte count is known (tokenizer-independent; when
//          only a prefix is scored, its bytes are pro-rated by token share).
//   entropy = mean over predicted tokens of the model's own predictive entropy -sum_v p(v) log p(v)
//          (nats). Beside loss it reads calibration: a model whose probabilities match the text's
//          frequencies has entropy ~ loss on average; entropy well below loss means overconfident.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "core/data/shards/token_source.h"
#include "core/engine/form.h"
#include "core/model/transformer.h"

namespace moxlab {

struct PerplexityResult {
  double nll_sum = 0.0;    // nats
  std::int64_t tokens = 0; // predicted tokens
  std::int64_t bytes = 0;  // text bytes covered (0: unknown)
  double entropy_sum = 0.0;  // nats, summed predictive entropy (0 when skipped)
  double loss() const { return tokens ? nll_sum / tokens : 0.0; }
  double entropy() const { return tokens ? entropy_sum / tokens : 0.0; }
  double ppl() const;
  double bpb() const;  // 0 when bytes unknown
};

// Whether a pass also sums the predictive entropy: a further pass over every logit (exp, product, sum),
// costing more than the log-softmax itself, so a caller that only reads the loss skips it.
enum class Entropy { computed, skipped };

// The tokens evaluate_perplexity scores of domain d with this max_tokens (0: all).
std::int64_t perplexity_tokens(const TokenSource& src, int domain, std::int64_t max_tokens);

// Scores the first max_tokens tokens of domain d (0: all). Runs in eval mode without gradients.
// progress: called after each batch with the tokens of the domain read so far.
// form: the MoHD / MoH compute form (a run's execution.form).
PerplexityResult evaluate_perplexity(Transformer& model, const TokenSource& src, int domain, int seq_len,
                                     std::int64_t max_tokens, int batch_size,
                                     const std::function<void(std::int64_t tokens_done)>& progress = {},
                                     Form form = Form::automatic, Entropy entropy = Entropy::computed);

// The same windows scored with the model's logits divided by each temperature before the softmax (1:
// the model as it is; above 1 spreads its probability), one result per temperature in their order. Loss
// against temperature is the calibration reading behind entropy; a temperature only rescales logits, so
// one forward pass serves them all.
std::vector<PerplexityResult> evaluate_perplexity_at_temperatures(
    Transformer& model, const TokenSource& src, int domain, int seq_len, std::int64_t max_tokens, int batch_size,
    const std::vector<double>& temperatures, const std::function<void(std::int64_t tokens_done)>& progress = {},
    Form form = Form::automatic, Entropy entropy = Entropy::computed);

}  // namespace moxlab
