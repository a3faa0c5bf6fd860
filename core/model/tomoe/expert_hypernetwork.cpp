#include "core/model/tomoe/expert_hypernetwork.h"

#include <ATen/CPUGeneratorImpl.h>

#include "core/common/error.h"

namespace moxlab {

ExpertHypernetworkImpl::ExpertHypernetworkImpl(const ExpertHypernetworkOptions& o) : o_(o) {
  require(o.layers >= 1 && o.experts >= 1, "hypernetwork: needs at least one layer and one expert");
  require(o.input_size >= 1 && o.hidden_size >= 1, "hypernetwork: input and hidden sizes must be positive");
  gru = register_module("gru", torch::nn::GRU(torch::nn::GRUOptions(o.input_size, o.hidden_size).bidirectional(true)));
  auto gen = at::detail::createCPUGenerator(o.seed);
  z = register_buffer("z", torch::randn({o.layers, o.experts, o.input_size}, gen));
}

torch::Tensor ExpertHypernetworkImpl::forward() {
  // GRU input layout [sequence = layers, batch = experts, features].
  return std::get<0>(gru->forward(z));
}

}  // namespace moxlab
