#include "core/capture/capture.h"

#include <algorithm>

#include "core/common/error.h"
#include "core/engine/inference_plan.h"
#include "core/observe/layout_check.h"

namespace moxlab {

namespace {
struct Window {
  int domain;
  std::int64_t start, len;
};
}  // namespace

CaptureSummary capture_activations(Transformer& model, const Tokenizer& tok, const TokenSource& src,
                                   const CaptureOptions& opt, TensorLogWriter& out) {
  require(opt.tokens > 0 || opt.tokens_per_domain > 0, "capture needs a positive token budget");
  require(opt.seq_len >= 1 && opt.seq_len <= model.options().max_seq_len,
          "capture seq_len must be in [1, model.max_seq_len]");
  std::vector<int> domains;
  for (int d = 0; d < src.num_domains(); ++d)
    if (opt.domains.empty() || std::find(opt.domains.begin(), opt.domains.end(), src.domain_name(d)) != opt.domains.end())
      domains.push_back(d);
  require(!domains.empty(), "no domain of the data matches the requested capture domains");

  // Even split of the budget; each domain's share as contiguous windows from its split's start.
  std::vector<Window> windows;
  const std::int64_t share = opt.tokens_per_domain > 0
                                 ? opt.tokens_per_domain
                                 : std::max<std::int64_t>(1, opt.tokens / static_cast<std::int64_t>(domains.size()));
  for (int d : domains) {
    const std::int64_t n = std::min(share, src.size(d));
    for (std::int64_t s = 0; s < n; s += opt.seq_len) windows.push_back({d, s, std::min<std::int64_t>(opt.seq_len, n - s)});
  }

  CaptureSummary summary;
  std::vector<std::string> names;
  for (int d : domains) names.push_back(src.domain_name(d));
  summary.domains = names;
  std::vector<std::string> all_names;
  for (int d = 0; d < src.num_domains(); ++d) all_names.push_back(src.domain_name(d));
  out.write_strings("/domain_names", all_names);

  torch::NoGradGuard ng;
  model.eval();
  std::int64_t text_pos = 0;
  const std::int32_t start_token = tok.bos_id() >= 0 ? tok.bos_id() : tok.document_separator();
  InferencePlan plan(model);
  for (std::size_t w = 0; w < windows.size(); ++w) {
    const Window& win = windows[w];
    std::vector<std::int32_t> ids(win.len);
    src.read(win.domain, win.start, win.len, ids.data());
    TapRecorder rec(opt.taps);
    Analysis an;
    an.tap_recorder = &rec;
    auto x = torch::from_blob(ids.data(), {1, win.len}, torch::kInt32).to(torch::kLong)
                 .to(model.tok_embeddings->weight.device());
    plan.forward(x, {}, &an);
    auto taps = rec.take();
    if (w == 0) {
      require(!taps.empty(), "no tap matches '" + opt.taps + "' (see `moxlab capture --list-taps`)");
      for (const auto& [name, t] : taps) summary.taps.push_back(name);
    }
    for (const auto& [name, t] : taps) {
      auto rows = t[0].contiguous();  // [T, F]
      out.append_rows("/probes/" + name, rows.data_ptr<float>(), rows.size(0), rows.size(1));
    }
    std::vector<std::int32_t> dom(win.len, win.domain), widx(win.len, static_cast<std::int32_t>(w)), pos(win.len);
    std::vector<std::int64_t> offsets;
    std::string text;
    std::int32_t prev = win.start == 0 ? start_token : -1;
    for (std::int64_t i = 0; i < win.len; ++i) {
      pos[i] = static_cast<std::int32_t>(i);
      const std::string piece = tok.token_bytes(ids[i], prev);
      offsets.push_back(text_pos + static_cast<std::int64_t>(text.size()));
      text += piece;
      offsets.push_back(text_pos + static_cast<std::int64_t>(text.size()));
      prev = ids[i];
    }
    text_pos += static_cast<std::int64_t>(text.size());
    out.append("/tokens", ids);
    out.append("/domain", dom);
    out.append("/window", widx);
    out.append("/position", pos);
    out.append_rows("/text/offsets", offsets.data(), win.len, 2);
    out.append("/text/bytes", reinterpret_cast<const std::uint8_t*>(text.data()), text.size());
    summary.tokens += win.len;
  }
  out.set_attr("/", "taps", opt.taps);
  out.set_attr_int("/", "seq_len", opt.seq_len);
  out.set_attr_int("/", "layout_version", kTensorLogLayoutVersion);
  return summary;
}

}  // namespace moxlab
