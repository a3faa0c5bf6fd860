#include "experiments/bench/train_flops.h"

namespace moxlab {

double train_flops_per_token(const Transformer& model, int seq_len) {
  const auto& o = model.options();
  const double n_matmul = static_cast<double>(count_parameters(model).active) +
                          static_cast<double>(o.vocab_size) * o.dim;  // output head
  return 6.0 * n_matmul + 12.0 * o.n_layers * static_cast<double>(seq_len) * o.dim;
}

}  // namespace moxlab
