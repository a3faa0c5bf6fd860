// A converted ToMoE model of given shape for speed measurements: random weights (speed depends on the
// shapes only), with every MLP expert keeping `keep` of the hidden channels, `keep` of each head's q/k
// RoPE pairs and a v/o top-K of `keep` of the head dimension, so keep = 0.5 is the 50%-active model
// of ToMoE's tables. Real converted models are benchmarked from their export (moxlab export --format
// tomoe-moe, then bench infer --tomoe-moe FILE).
#pragma once
#include <cstdint>

#include "core/model/tomoe/tomoe_moe_weights.h"

namespace moxlab {

TomoeMoeWeights random_tomoe_moe(const ModelOptions& o, double keep, std::uint64_t seed);

}  // namespace moxlab
