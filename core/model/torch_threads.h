// LibTorch's intra-op thread count, set explicitly: Debian's LibTorch 1.13 defaulted to 1 thread here.
#pragma once

namespace moxlab {

// n <= 0: all hardware threads. Returns the count now in effect.
int set_torch_threads(int n);

}  // namespace moxlab
