// Tensors derived from parameters that inference reuses across forwards (a concatenation of projection
// matrices, Monarch's first factor folded into a matrix): recomputed when a source was changed in place
// (its version counter moved) or is another tensor. With autograd on they are always recomputed, so
// the graph reaches the sources.
#pragma once
#include <algorithm>
#include <functional>
#include <vector>

#include <torch/torch.h>

namespace moxlab {

class DerivedWeights {
 public:
  torch::Tensor get(const std::vector<torch::Tensor>& sources, const std::function<torch::Tensor()>& compute) {
    if (torch::GradMode::is_enabled()) return compute();
    auto it = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& c) { return same(c.sources, sources); });
    Entry* e = it != entries_.end() ? &*it : &entries_.emplace_back(Entry{sources, {}, {}});
    std::vector<std::int64_t> versions;
    for (const auto& s : sources) versions.push_back(s.defined() ? static_cast<std::int64_t>(s._version()) : -1);
    if (!e->value.defined() || e->versions != versions) {
      e->value = compute();
      e->versions = std::move(versions);
    }
    return e->value;
  }

 private:
  struct Entry {
    std::vector<torch::Tensor> sources;  // held, so their identities cannot be reused by other tensors
    std::vector<std::int64_t> versions;
    torch::Tensor value;
  };
  static bool same(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (!a[i].is_same(b[i])) return false;
    return true;
  }
  std::vector<Entry> entries_;
};

}  // namespace moxlab
