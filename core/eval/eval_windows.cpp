#include "core/eval/eval_windows.h"

#include <algorithm>
#include <vector>

namespace moxlab {

void for_each_window_batch(const TokenSource& src, int domain, int seq_len, std::int64_t n, int batch_size,
                           const torch::Device& device,
                           const std::function<void(const torch::Tensor&, std::int64_t)>& visit) {
  // Window starts 0, T, 2T, ...; the last window may be shorter (at least 2 tokens).
  std::vector<std::int64_t> starts;
  for (std::int64_t s = 0; s + 1 < n; s += seq_len) starts.push_back(s);
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
    const auto windows = torch::from_blob(buf.data(), {static_cast<long>(take), len}, torch::kInt32).to(torch::kLong).to(device);
    i += take;
    visit(windows, i < starts.size() ? starts[i] : n);
  }
}

}  // namespace moxlab
