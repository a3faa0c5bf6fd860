#include "core/engine/generate.h"

#include <algorithm>

#include "core/common/error.h"
#include "core/engine/kv_cache.h"

namespace moxlab {

std::vector<std::int32_t> generate(InferencePlan& plan, const std::vector<std::int32_t>& prompt,
                                   const GenerateOptions& opt) {
  require(!prompt.empty(), "generation needs at least one prompt token");
  torch::NoGradGuard ng;
  plan.model().eval();
  torch::Generator gen = at::detail::createCPUGenerator(opt.seed);
  std::vector<std::int64_t> seq(prompt.begin(), prompt.end());
  std::vector<std::int32_t> out;
  const long max_len = plan.options().max_seq_len;
  KvCache cache;
  // Logits after tokens [from, end) of seq: with the cache while the whole sequence fits the context
  // (only the new tokens run), otherwise over the last max_seq_len tokens from scratch.
  auto next_logits = [&](std::size_t from) {
    const long n = static_cast<long>(seq.size());
    ExecOptions exec;
    exec.last_logits_only = true;
    long start = static_cast<long>(from);
    if (n <= max_len) {
      exec.cache = &cache;
    } else {
      start = n - max_len;
    }
    auto x = torch::from_blob(seq.data() + start, {1, n - start}, torch::kInt64).clone();
    return plan.forward(x, exec).view({-1}).to(torch::kFloat32);
  };
  auto logits = next_logits(0);
  for (int i = 0; i < opt.max_new_tokens; ++i) {
    std::int32_t next;
    if (opt.temperature <= 0) {
      next = static_cast<std::int32_t>(logits.argmax().item<std::int64_t>());
    } else {
      auto probs = torch::softmax(logits / opt.temperature, -1);
      next = static_cast<std::int32_t>(torch::multinomial(probs, 1, false, gen).item<std::int64_t>());
    }
    if (std::find(opt.stop_ids.begin(), opt.stop_ids.end(), next) != opt.stop_ids.end()) break;
    out.push_back(next);
    seq.push_back(next);
    if (i + 1 < opt.max_new_tokens) logits = next_logits(seq.size() - 1);
  }
  return out;
}

}  // namespace moxlab
