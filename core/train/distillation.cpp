#include "core/train/distillation.h"

#include "core/common/error.h"

namespace moxlab {

torch::Tensor distillation_kl(const torch::Tensor& teacher_logits, const torch::Tensor& student_logits) {
  require(teacher_logits.sizes() == student_logits.sizes(), "distillation: teacher and student logits differ in shape");
  const auto v = student_logits.size(-1);
  auto log_t = torch::log_softmax(teacher_logits.detach().reshape({-1, v}).to(torch::kFloat), -1);
  auto log_s = torch::log_softmax(student_logits.reshape({-1, v}).to(torch::kFloat), -1);
  return (log_t.exp() * (log_t - log_s)).sum(-1).mean();
}

}  // namespace moxlab
