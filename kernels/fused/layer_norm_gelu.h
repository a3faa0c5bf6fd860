// LayerNorm (Ba et al. 2016) then exact GeLU (Hendrycks & Gimpel 2016), in place, one pass per row, for
// ToMoE's v/o router at inference (Eq. 5: the decoder reads GeLU(LN(Proj_E(x) + e))): the rows are a
// strided slice of the attention's input product, which torch's layer_norm and gelu copied and passed over
// twice per thread. CPU float32, no autograd.
//   LN:   y_i = (x_i - mean) / sqrt(var + eps) * w_i + b_i, var the biased variance over the row (as torch);
//   GeLU: y * Phi(y) = y / 2 * (1 + erf(y / sqrt 2)), erf by Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7)
//         on 16-float (AVX-512) or 8-float vectors, std::erf on the last values.
#pragma once
#include <cstdint>

namespace moxlab {

// x: `rows` rows of n floats, `stride` floats apart; w, b: n floats.
void layer_norm_gelu_rows(float* x, std::int64_t rows, std::int64_t stride, std::int64_t n, const float* w, const float* b, float eps);

}  // namespace moxlab
