// The converted ToMoE model as real, smaller weights (section 3.5, App. B.3), extracted from a ToMoE
// Transformer after convert_to_tomoe_moe():
//   attention: W_Q / W_K hold only the kept q/k RoPE pairs (each rotated with its own frequency; the
//              attention scale stays 1/sqrt(head_dim) as in the gated model); W_V, W_O whole, each token's
//              output limited to its top-K v/o dims chosen by the v/o router, whose Proj_E bias absorbs
//              the mean expert embedding (1/N 1^T E) and whose decoder keeps only its v/o rows;
//   MLP:       a bias-free router [N, d] and N experts holding only their kept channels, zero-padded to
//              the widest so they stack as [N, k_max, d] in the file (each expert's width beside them).
// The engine runs them (core/engine/tomoe_moe_plan.h) and equals the gated model in eval mode (tested to
// tolerance); core/io/tomoe_moe_file.h writes and reads them.
#pragma once
#include <map>
#include <string>

#include <torch/torch.h>

#include "core/model/model_options.h"
#include "core/model/param_count.h"

namespace moxlab {

class Transformer;

struct TomoeMoeWeights {
  ModelOptions options;
  std::map<std::string, torch::Tensor> tensors;  // every weight, by name (tomoe_moe_key; the file's layout)

  // The tensor named `name`; a missing one is a one-line error naming it.
  const torch::Tensor& at(const std::string& name) const;
  // That every tensor a layer needs is there (a one-line error naming the first missing one).
  void check() const;
  // Non-embedding parameters: total stored, active per token (widest expert, kept q/k, top-K v/o rows of W_V
  // and columns of W_O, routers).
  ParamCount param_count() const;
};

// "layers.<l>.<name>"
std::string tomoe_moe_key(int layer, const std::string& name);
// The weights of a converted ToMoE model (attention and FFN of kind tomoe, v/o top-K set).
TomoeMoeWeights extract_tomoe_moe(Transformer& converted);

}  // namespace moxlab
