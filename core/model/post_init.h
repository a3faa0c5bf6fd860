// A module whose parameters start at a fixed point rather than a random draw (MoHD's identity Monarch
// fusion). init_parameters() draws every parameter first, as for any module, so the random stream of the
// rest of the model stays the same, and then calls post_init() on each module that implements this.
#pragma once

namespace moxlab {

class PostInit {
 public:
  virtual ~PostInit() = default;
  virtual void post_init() = 0;  // under NoGradGuard, after the generic draws
};

}  // namespace moxlab
