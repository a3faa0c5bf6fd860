// Learning-rate schedule: linear warmup from 0 to the peak over warmup_steps, then cosine decay to
// min_lr_ratio * peak at max_steps (the LLaMA / GPT-3 recipe). Pure function of the step, so a resumed
// run gets exactly the rates it would have had.
#pragma once

namespace moxlab {

// step counts optimiser updates from 0; the returned rate is used for update number `step`.
double lr_at(int step, double peak, int warmup_steps, int max_steps, double min_lr_ratio);

}  // namespace moxlab
