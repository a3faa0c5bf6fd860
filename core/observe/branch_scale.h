// How large each residual branch is (issue 32's confound: MoHD's and MoH's gates shrink the attention
// and FFN outputs at initialisation, and a smaller branch alone changes early training). From a capture
// with the residual taps of every block:
//   attention branch of layer l = resid.mid[l] - resid.out[l-1]   (l >= 1: layer 0's input, the token
//                                                                   embedding, is not tapped)
//   FFN branch of layer l       = resid.out[l] - resid.mid[l]
// each reported as its RMS over all (token, dim) elements, sqrt(mean of x^2). The ratio of a method's
// value to the dense model's at the same seed and step 0 is the fixed scale of the dense control
// (model.branch_scale = fixed; experiments/studies/micro_controls.toml).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace moxlab {

struct BranchScale {
  int layer = 0;
  double attn_rms = 0;  // NaN for layer 0
  double ffn_rms = 0;
};

// read(tap) returns the tap's [tokens, dims] values row-major; has(tap) says whether the capture has it.
// Layers run from 0 while blocks.<l>.resid.mid and blocks.<l>.resid.out are both present; an empty
// result means the capture has no residual taps.
std::vector<BranchScale> branch_scales(const std::function<bool(const std::string&)>& has,
                                       const std::function<std::vector<float>(const std::string&)>& read);

// sqrt(mean((a - b)^2)) over equal-length arrays.
double rms_of_difference(const std::vector<float>& a, const std::vector<float>& b);

}  // namespace moxlab
