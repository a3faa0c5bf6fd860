#include "core/eval/perplexity.h"

#include <algorithm>
#include <cmath>

#include "core/engine/inference_plan.h"
#include "core/eval/eval_windows.h"

namespace moxlab {

double PerplexityResult::ppl() const { return std::exp(loss()); }

double PerplexityResult::bpb() const {
  return bytes > 0 ? nll_sum / (std::log(2.0) * static_cast<double>(bytes)) : 0.0;
}

std::int64_t perplexity_tokens(const TokenSource& src, int domain, std::int64_t max_tokens) {
  return max_tokens > 0 ? std::min(max_tokens, src.size(domain)) : src.size(domain);
}

std::vector<PerplexityResult> evaluate_perplexity_at_temperatures(
    Transformer& model, const TokenSource& src, int domain, int seq_len, std::int64_t max_tokens, int batch_size,
    const std::vector<double>& temperatures, const std::function<void(std::int64_t)>& progress, Form form,
    Entropy entropy) {
  torch::NoGradGuard ng;
  const bool was_training = model.is_training();
  model.eval();
  InferencePlan plan(model, form);
  const std::int64_t n = perplexity_tokens(src, domain, max_tokens);
  std::vector<PerplexityResult> results(temperatures.size());
  for_each_window_batch(src, domain, seq_len, n, batch_size, model.tok_embeddings->weight.device(),
                        [&](const torch::Tensor& t, std::int64_t next) {
                          const auto len = t.size(1);
                          const auto logits = plan.forward(t.narrow(1, 0, len - 1)).to(torch::kFloat32);
                          const auto targets = t.narrow(1, 1, len - 1).unsqueeze(-1);
                          for (std::size_t i = 0; i < temperatures.size(); ++i) {
                            auto logp = torch::log_softmax(temperatures[i] == 1.0 ? logits : logits / temperatures[i], -1);
                            auto nll = -logp.gather(-1, targets).squeeze(-1);
                            PerplexityResult& r = results[i];
                            r.nll_sum += nll.sum().to(torch::kFloat64).item<double>();
                            if (entropy == Entropy::computed)
                              r.entropy_sum -= (logp.exp() * logp).sum().to(torch::kFloat64).item<double>();
                            r.tokens += t.size(0) * (len - 1);
                          }
                          if (progress) progress(next);
                        });
  const std::int64_t total = src.size(domain);
  if (src.text_bytes(domain) > 0 && total > 0)
    for (PerplexityResult& r : results)
      r.bytes = static_cast<std::int64_t>(std::llround(static_cast<double>(src.text_bytes(domain)) * n / total));
  if (was_training) model.train();
  return results;
}

PerplexityResult evaluate_perplexity(Transformer& model, const TokenSource& src, int domain, int seq_len,
                                     std::int64_t max_tokens, int batch_size,
                                     const std::function<void(std::int64_t)>& progress, Form form, Entropy entropy) {
  return evaluate_perplexity_at_temperatures(model, src, domain, seq_len, max_tokens, batch_size, {1.0}, progress, form,
                                             entropy)[0];
}

}  // namespace moxlab
