// Model FLOPs of training, the numerator of MFU: per token 6 * N (forward 2N + backward 4N over every
// weight matmul, including the output head; N excludes the embedding lookup, which is not a matmul)
// plus attention's 6 * 2 * n_layers * seq_len * dim for QK^T and AV (PaLM, Chowdhery et al. 2022, App. B;
// causal masking not discounted, as there).
#pragma once
#include <cstdint>

#include "core/model/transformer.h"

namespace moxlab {

double train_flops_per_token(const Transformer& model, int seq_len);

}  // namespace moxlab
