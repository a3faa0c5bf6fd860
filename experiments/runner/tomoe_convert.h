// `moxlab convert tomoe`: the run config that turns a dense checkpoint into a ToMoE MoE (section 3.5,
// App. C): the checkpoint's own model and data (or a given TOML base), attention and FFN of kind tomoe,
// the target active ratio p (Eq. 8), self-distillation from the same model with its gates off (Eq. 10),
// only the routing modules trained (dense weights frozen), AdamW at a constant lr 1e-3 with weight
// decay 0.05 as in the paper. `sets` (key=value) apply last, so any of it can be changed.
// The run is named tomoe_target<p>: the name states what was asked; whether the conversion got there is
// its result tomoe/active_ratio (and the tag target_missed when it did not, tomoe_finish.h).
#pragma once
#include <string>
#include <vector>

#include "core/config/config.h"

namespace moxlab {

struct TomoeConvertRequest {
  std::string checkpoint;        // dense checkpoint (path)
  double active = 0.5;           // p: target active-parameter ratio
  int steps = 200;               // optimiser steps of the routing modules
  std::string base_config;       // "" = the checkpoint's own config
  std::vector<std::string> sets; // overrides applied last
};

Config tomoe_convert_config(const TomoeConvertRequest& r);

}  // namespace moxlab
