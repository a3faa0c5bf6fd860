#include "kernels/runtime/denormals.h"

#include <atomic>

#include <ATen/Context.h>
#include <ATen/Parallel.h>

#include "kernels/runtime/row_parallel.h"

namespace moxlab {

bool set_flush_denormals(bool flush) {
  // The mode is a per-thread register (x86 MXCSR), so every worker sets its own: row i runs on thread i.
  std::atomic<bool> ok{at::globalContext().setFlushDenormal(flush)};
  const int workers = at::get_num_threads();
  parallel_row_ranges(workers, 1, [&](std::int64_t, std::int64_t) {
    if (!at::globalContext().setFlushDenormal(flush)) ok = false;
  });
  return ok;
}

}  // namespace moxlab
