// KL(reference || model) on a token stream: at every predicted position of evaluate_perplexity's windows,
// sum_v p_ref(v) (log p_ref(v) - log p_model(v)) in nats, both models reading the same context; the mean
// over predicted positions. What ToMoE's distillation and every conversion, pruning or continue-tuning of a
// dense model move away from: paired by construction, and it moves when accuracy at chance cannot.
#pragma once
#include <cstdint>

#include "core/data/shards/token_source.h"
#include "core/engine/form.h"
#include "core/model/transformer.h"

namespace moxlab {

struct KlResult {
  double kl_sum = 0.0;     // nats
  std::int64_t tokens = 0;  // predicted positions
  double mean() const { return tokens ? kl_sum / tokens : 0.0; }
};

// The first max_tokens tokens of domain d (0: all); both models in eval mode without gradients, each in
// its run's form. An Error when the vocabularies differ.
KlResult evaluate_kl(Transformer& model, Transformer& reference, const TokenSource& src, int domain, int seq_len,
                     std::int64_t max_tokens, int batch_size, Form model_form = Form::automatic,
                     Form reference_form = Form::automatic);

}  // namespace moxlab
