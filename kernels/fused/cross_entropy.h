// Softmax cross-entropy over rows of logits for training, in two passes per row instead of LibTorch's
// four (log_softmax, the NLL gather, the NLL backward's zero fill and scatter, log_softmax's backward):
// the forward writes each row's probabilities and its loss, the backward turns the probabilities into
// the logits' gradient in place, (p - onehot(target)) scale. Rows whose target is negative (ignored)
// have loss 0 and a zero gradient. Vectorised per ISA (AVX-512, AVX2 + FMA, portable), rows split across
// the threads. CPU float32, no autograd (core/engine/training_loss.h wraps them).
#pragma once
#include <cstdint>

namespace moxlab {

// logits, probs [rows, v] (may be the same memory), targets [rows] -> loss [rows]: log sum_j e^{x_j} - x_t.
void softmax_cross_entropy(const float* logits, const std::int64_t* targets, std::int64_t rows, std::int64_t v, float* probs,
                           float* loss);

// probs [rows, v] -> (probs - onehot(target)) * scale in place; an ignored row becomes zero.
void softmax_cross_entropy_grad(float* probs, const std::int64_t* targets, std::int64_t rows, std::int64_t v, float scale);

}  // namespace moxlab
