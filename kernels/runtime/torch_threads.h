// LibTorch's intra-op thread count, set explicitly: Debian's LibTorch 1.13 defaulted to 1 thread here.
#pragma once

namespace moxlab {

// n <= 0: all hardware threads. Returns the count now in effect. Also pins the worker threads (see
// threads_pinned()).
int set_torch_threads(int n);

// Whether set_torch_threads pinned LibTorch's worker threads, worker i to the i-th CPU the process may
// run on (the calling thread stays free, so threads it starts later are not confined to one CPU). It does
// when there are at most as many threads as such CPUs and the environment leaves OpenMP's binding to
// the program (neither OMP_PROC_BIND nor GOMP_CPU_AFFINITY set; OMP_PROC_BIND=false opts out).
// Unpinned, the scheduler moves workers between the CPUs and the same model's timings differ from one
// process to the next (docs/decisions/2026-11-26-thread-pinning.md).
bool threads_pinned();

}  // namespace moxlab
