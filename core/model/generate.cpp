#include "core/model/generate.h"

#include <algorithm>

#include "core/common/error.h"

namespace moxlab {

std::vector<std::int32_t> generate(Transformer& model, const std::vector<std::int32_t>& prompt,
                                   const GenerateOptions& opt) {
  require(!prompt.empty(), "generation needs at least one prompt token");
  torch::NoGradGuard ng;
  model.eval();
  torch::Generator gen = at::detail::createCPUGenerator(opt.seed);
  std::vector<std::int64_t> seq(prompt.begin(), prompt.end());
  std::vector<std::int32_t> out;
  const int max_len = model.options().max_seq_len;
  for (int i = 0; i < opt.max_new_tokens; ++i) {
    const long start = std::max<long>(0, static_cast<long>(seq.size()) - max_len);
    auto x = torch::from_blob(seq.data() + start, {1, static_cast<long>(seq.size()) - start}, torch::kInt64).clone();
    auto logits = model.forward(x).select(1, -1).squeeze(0).to(torch::kFloat32);
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
  }
  return out;
}

}  // namespace moxlab
