// ToMoE's hypernetwork (Eq. 1, App. A.1 Table 5): E_all = HN(z). A bidirectional GRU (input 32, hidden
// 64 per direction) runs over the layers, with the N experts as its batch, on fixed N(0, 1) inputs z of
// shape [L, N, 32]; its output [L, N, 128] holds each layer's expert embeddings E_l (N x d_e, d_e = 128).
// Running over layers lets each layer's experts depend on every other layer's (both directions), so the
// widths of all layers are decided jointly. z is a buffer: saved with the module, never trained. After
// training the embeddings are stored and the hypernetwork can be dropped.
#pragma once
#include <cstdint>

#include <torch/torch.h>

namespace moxlab {

struct ExpertHypernetworkOptions {
  int layers = 1;
  int experts = 8;
  int input_size = 32;   // size of each fixed random input
  int hidden_size = 64;  // per direction; the embedding size d_e is twice this
  std::uint64_t seed = 0;  // draws z
};

class ExpertHypernetworkImpl : public torch::nn::Module {
 public:
  explicit ExpertHypernetworkImpl(const ExpertHypernetworkOptions& o);
  // [L, N, 2 * hidden_size]: E_l = forward()[l].
  torch::Tensor forward();
  int embedding_size() const { return 2 * o_.hidden_size; }

  torch::nn::GRU gru{nullptr};
  torch::Tensor z;  // [L, N, input_size], buffer

 private:
  ExpertHypernetworkOptions o_;
};
TORCH_MODULE(ExpertHypernetwork);

}  // namespace moxlab
