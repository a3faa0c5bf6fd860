#include "core/eval/scorer.h"

#include <algorithm>
#include <numeric>

#include "core/common/error.h"
#include "core/engine/inference_plan.h"

namespace moxlab {

LoglikelihoodFn make_model_scorer(Transformer& model, int max_len, int batch_size, Form form) {
  return [&model, max_len, batch_size, form](const std::vector<LoglikelihoodRequest>& reqs) {
    torch::NoGradGuard ng;
    const bool was_training = model.is_training();
    model.eval();
    InferencePlan plan(model, form);
    std::vector<LoglikelihoodResult> out(reqs.size());
    // Inputs: all tokens but the last, left-truncated to max_len (harness: whole[-(max_len+1):][:-1]).
    std::vector<std::vector<std::int32_t>> inputs(reqs.size());
    for (std::size_t i = 0; i < reqs.size(); ++i) {
      const auto& r = reqs[i];
      require(!r.continuation.empty(), "loglikelihood request with an empty continuation");
      std::vector<std::int32_t> whole(r.context);
      whole.insert(whole.end(), r.continuation.begin(), r.continuation.end());
      require(whole.size() >= 2, "loglikelihood request needs at least one context token (add BOS)");
      const std::size_t keep = std::min<std::size_t>(whole.size(), static_cast<std::size_t>(max_len) + 1);
      inputs[i].assign(whole.end() - keep, whole.end());
    }
    std::vector<std::size_t> order(reqs.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return inputs[a].size() > inputs[b].size(); });
    const auto device = model.tok_embeddings->weight.device();
    for (std::size_t s = 0; s < order.size(); s += batch_size) {
      const std::size_t nb = std::min<std::size_t>(batch_size, order.size() - s);
      const long len = static_cast<long>(inputs[order[s]].size()) - 1;  // longest in batch
      std::vector<std::int64_t> buf(nb * len, 0);  // right padding: causal, so it never affects real positions
      for (std::size_t b = 0; b < nb; ++b) {
        const auto& w = inputs[order[s + b]];
        std::copy(w.begin(), w.end() - 1, buf.begin() + b * len);
      }
      auto x = torch::from_blob(buf.data(), {static_cast<long>(nb), len}, torch::kInt64).to(device);
      auto logp = torch::log_softmax(plan.forward(x).to(torch::kFloat32), -1).cpu();
      for (std::size_t b = 0; b < nb; ++b) {
        const std::size_t idx = order[s + b];
        const auto& w = inputs[idx];
        const long n_in = static_cast<long>(w.size()) - 1;
        const long n_cont = std::min<long>(static_cast<long>(reqs[idx].continuation.size()), n_in);
        auto rows = logp[b].narrow(0, n_in - n_cont, n_cont);  // positions predicting the continuation
        auto target = torch::from_blob(const_cast<std::int32_t*>(w.data()) + (w.size() - n_cont), {n_cont},
                                       torch::kInt32).to(torch::kLong);
        out[idx].logprob = rows.gather(1, target.unsqueeze(1)).sum().item<double>();
        out[idx].greedy = rows.argmax(1).equal(target);
      }
    }
    if (was_training) model.train();
    return out;
  };
}

}  // namespace moxlab
