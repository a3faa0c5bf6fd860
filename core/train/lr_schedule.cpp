#include "core/train/lr_schedule.h"

#include <algorithm>
#include <cmath>

namespace moxlab {

double lr_at(int step, double peak, int warmup_steps, int max_steps, double min_lr_ratio) {
  if (warmup_steps > 0 && step < warmup_steps) return peak * (step + 1) / warmup_steps;
  const double floor = peak * min_lr_ratio;
  const int decay_steps = std::max(1, max_steps - warmup_steps);
  const double progress = std::clamp(static_cast<double>(step - warmup_steps) / decay_steps, 0.0, 1.0);
  return floor + 0.5 * (peak - floor) * (1.0 + std::cos(M_PI * progress));
}

}  // namespace moxlab
