#include "core/eval/kl_divergence.h"

#include "core/common/error.h"
#include "core/engine/inference_plan.h"
#include "core/eval/eval_windows.h"
#include "core/eval/perplexity.h"

namespace moxlab {

KlResult evaluate_kl(Transformer& model, Transformer& reference, const TokenSource& src, int domain, int seq_len,
                     std::int64_t max_tokens, int batch_size, Form model_form, Form reference_form) {
  require(model.options().vocab_size == reference.options().vocab_size,
          "KL to a reference: vocabularies differ (" + std::to_string(model.options().vocab_size) + " vs " +
              std::to_string(reference.options().vocab_size) + " tokens)");
  torch::NoGradGuard ng;
  const bool model_training = model.is_training(), reference_training = reference.is_training();
  model.eval();
  reference.eval();
  InferencePlan plan(model, model_form), reference_plan(reference, reference_form);
  KlResult r;
  for_each_window_batch(src, domain, seq_len, perplexity_tokens(src, domain, max_tokens), batch_size,
                        model.tok_embeddings->weight.device(), [&](const torch::Tensor& t, std::int64_t) {
                          const auto context = t.narrow(1, 0, t.size(1) - 1);
                          const auto logq = torch::log_softmax(plan.forward(context).to(torch::kFloat64), -1);
                          const auto logp = torch::log_softmax(reference_plan.forward(context).to(torch::kFloat64), -1);
                          r.kl_sum += (logp.exp() * (logp - logq)).sum().item<double>();
                          r.tokens += context.size(0) * context.size(1);
                        });
  if (model_training) model.train();
  if (reference_training) reference.train();
  return r;
}

}  // namespace moxlab
