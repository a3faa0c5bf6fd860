// Active-parameter accounting: the one function tables and sweeps use (DESIGN.md, "Active-parameter
// accounting"). Embeddings and an untied output head are excluded, as the MoHD, MoH and ToMoE papers do.
// Each module reports its own total and per-token activated count; dense modules activate everything.
#pragma once
#include <cstdint>

namespace moxlab {

struct ParamCount {
  std::int64_t total = 0;
  std::int64_t active = 0;  // expected parameters used per token
  ParamCount& operator+=(const ParamCount& o) {
    total += o.total;
    active += o.active;
    return *this;
  }
};

class Transformer;
// Total and activated non-embedding parameters of a model of any kind.
ParamCount count_parameters(const Transformer& model);

}  // namespace moxlab
