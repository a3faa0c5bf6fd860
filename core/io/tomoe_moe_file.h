// The converted ToMoE model's file: safetensors holding its weights by name with the model options in
// the metadata ("moxlab.tomoe_moe.config"); an atomic write.
#pragma once
#include <string>

#include "core/model/tomoe/tomoe_moe_weights.h"

namespace moxlab {

void save_tomoe_moe(const TomoeMoeWeights& w, const std::string& path);
// A file without the metadata, or missing a tensor, is a one-line error naming the problem.
TomoeMoeWeights load_tomoe_moe(const std::string& path);

}  // namespace moxlab
