// Knowledge distillation (Hinton et al. 2015) as ToMoE uses it (Eq. 10): the forward KL from the frozen
// dense teacher's next-token distribution to the student's, KL(p_T || p_S) = sum_v p_T(v) (log p_T(v) -
// log p_S(v)), averaged over positions. Computed in float32 from logits [..., vocab].
#pragma once
#include <torch/torch.h>

namespace moxlab {

torch::Tensor distillation_kl(const torch::Tensor& teacher_logits, const torch::Tensor& student_logits);

}  // namespace moxlab
