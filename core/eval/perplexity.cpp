#include "core/eval/perplexity.h"

#include <algorithm>
#include <cmath>

#include "core/engine/inference_plan.h"

namespace moxlab {

double PerplexityResult::ppl() const { return std::exp(loss()); }

double PerplexityResult::bpb() const {
  return bytes > 0 ? nll_sum / (std::log(2.0) * static_cast<double>(bytes)) : 0.0;
}

std::int64_t perplexity_tokens(const TokenSource& src, int domain, std::int64_t max_tokens) {
  return max_tokens > 0 ? std::min(max_tokens, src.size(domain)) : src.size(domain);
}

PerplexityResult evaluate_perplexity(Transformer& model, const TokenSource& src, int domain, int seq_len,
                                     std::int64_t max_tokens, int batch_size,
                                     const std::function<void(std::int64_t)>& progress, Form form) {
  torch::NoGradGuard ng;
  const bool was_training = model.is_training();
  model.eval();
  InferencePlan plan(model, form);
  const std::int64_t n = perplexity_tokens(src, domain, max_tokens);
  PerplexityResult r;
  // Window starts 0, T, 2T, ...; the last window may be shorter (at least 2 tokens).
  std::vector<std::int64_t> starts;
  for (std::int64_t s = 0; s + 1 < n; s += seq_len) starts.push_back(s);
  const auto device = model.tok_embeddings->weight.device();
  for (std::size_t i = 0; i < starts.size();) {
    const std::size_t nb = std::min<std::size_t>(batch_size, starts.size() - i);
    const std::int64_t len = std::min<std::int64_t>(seq_len + 1, n - starts[i]);
    // Windows in a batch share a length; a shorter final window goes alone.
    std::size_t take = 0;
    std::vector<std::int32_t> buf;
    for (; take < nb; ++take) {
      const std::int64_t l = std::min<std::int64_t>(seq_len + 1, n - starts[i + take]);
      if (l != len) break;
      const std::size_t off = buf.size();
      buf.resize(off + l);
      src.read(domain, starts[i + take], l, buf.data() + off);
    }
    auto t = torch::from_blob(buf.data(), {static_cast<long>(take), len}, torch::kInt32).to(torch::kLong).to(device);
    auto logits = plan.forward(t.narrow(1, 0, len - 1));
    auto logp = torch::log_softmax(logits.to(torch::kFloat32), -1);
    auto nll = -logp.gather(-1, t.narrow(1, 1, len - 1).unsqueeze(-1)).squeeze(-1);
    r.nll_sum += nll.sum().to(torch::kFloat64).item<double>();
    r.tokens += take * (len - 1);
    i += take;
    if (progress) progress(i < starts.size() ? starts[i] : n);
  }
  const std::int64_t total = src.size(domain);
  if (src.text_bytes(domain) > 0 && total > 0)
    r.bytes = static_cast<std::int64_t>(std::llround(static_cast<double>(src.text_bytes(domain)) * n / total));
  if (was_training) model.train();
  return r;
}

}  // namespace moxlab
