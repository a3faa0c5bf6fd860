#include "core/model/torch_threads.h"

#include <thread>

#include <ATen/Parallel.h>

namespace moxlab {

int set_torch_threads(int n) {
  if (n <= 0) n = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  at::set_num_threads(n);
  return at::get_num_threads();
}

}  // namespace moxlab
