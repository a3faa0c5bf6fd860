// The last step of a ToMoE run (train.loss = distill on a ToMoE model): turn the trained gates into the
// converted MoE (v/o top-K from calibration tokens, core/model/tomoe/tomoe_conversion.h) and record its
// widths and active parameters in the run store.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "core/config/config.h"
#include "core/model/transformer.h"
#include "core/train/lm_objective.h"

namespace moxlab {

// A conversion reached its target active ratio p when the measured ratio lies within this distance of
// p (absolute): the regulariser's noisy ratio settles within about 0.01-0.03 of p after enough steps
// (docs/reproduction/tomoe.md); a short conversion stays near 1.
constexpr double kTomoeTargetTolerance = 0.05;
bool tomoe_target_reached(double active_ratio, double target);
// Tag of a finished conversion run that missed its target (its name only states the target).
constexpr const char* kTomoeTargetMissedTag = "target_missed";
// The line a user reads at the end of a conversion: reached, or missed and what to do about it.
std::string tomoe_target_line(double active_ratio, double target, std::int64_t steps);

// Calibration: the first 8 training micro-batches (train.batch_size x train.seq_len tokens each).
// Results: params/total and params/active (replacing the dense counts), tomoe/active_ratio (Eq. 8's
// T(d_MoE) / T_total), and per layer tomoe/layer<l>/{qk_width, vo_top_k, mlp_width, mlp_min_width,
// mlp_union, vo_union, expert_similarity, expert<e>/width}. A run that missed its target is tagged
// kTomoeTargetMissedTag.
void finish_tomoe_conversion(Transformer& model, const LmObjective& objective, const Config& cfg, std::int64_t run,
                             const std::function<void(const std::string&)>& log);

}  // namespace moxlab
