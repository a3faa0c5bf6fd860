// Sub-dimension load balance (MoHD Eq. 13, after DeepSeekMoE's expert-level balance loss):
//   L_B = beta * sum_i P_i * f_i over the specialised (routed) sub-dimensions i, where
//   P_i = mean over tokens of s_i / sum_{j specialised} s_j   (normalised router score)
//   f_i = (1/M) * #{tokens whose highest specialised score is sub-dimension i}   (M tokens)
// Read literally, Eq. 13 normalises the gates g (zero off the top-k) instead of the scores s; with one
// routed sub-dimension per token (the paper's 3 shared + 1) that ratio is identically 1 and the loss has
// no gradient, so the scores are used, as in the DeepSeekMoE loss the paper cites. Uniform routing over
// n specialised sub-dimensions gives beta / n; the loss is 0 when nothing is routed.
#pragma once
#include <torch/torch.h>

namespace moxlab {

// probs: [..., N] router scores s; the first `shared` columns are the shared sub-dimensions.
torch::Tensor sub_dim_balance_loss(const torch::Tensor& probs, int shared, double beta);

}  // namespace moxlab
