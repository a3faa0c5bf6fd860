#include "core/observe/branch_scale.h"

#include <cmath>
#include <limits>

#include "core/common/error.h"

namespace moxlab {

double rms_of_difference(const std::vector<float>& a, const std::vector<float>& b) {
  require(a.size() == b.size() && !a.empty(), "branch scale: residual taps of different sizes");
  double sum = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = static_cast<double>(a[i]) - static_cast<double>(b[i]);
    sum += d * d;
  }
  return std::sqrt(sum / static_cast<double>(a.size()));
}

std::vector<BranchScale> branch_scales(const std::function<bool(const std::string&)>& has,
                                       const std::function<std::vector<float>(const std::string&)>& read) {
  std::vector<BranchScale> out;
  std::vector<float> previous_out;  // resid.out of layer l - 1
  for (int l = 0;; ++l) {
    const std::string p = "blocks." + std::to_string(l) + ".";
    if (!has(p + "resid.mid") || !has(p + "resid.out")) break;
    const std::vector<float> mid = read(p + "resid.mid"), resid_out = read(p + "resid.out");
    BranchScale b;
    b.layer = l;
    b.attn_rms = l == 0 ? std::numeric_limits<double>::quiet_NaN() : rms_of_difference(mid, previous_out);
    b.ffn_rms = rms_of_difference(resid_out, mid);
    out.push_back(b);
    previous_out = resid_out;
  }
  return out;
}

}  // namespace moxlab
