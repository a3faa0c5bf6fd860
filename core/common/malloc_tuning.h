// Keeps freed memory in the process instead of handing it back to the kernel after every tensor.
// glibc's defaults map each large allocation (above a threshold that adapts to the history of frees)
// freshly from the kernel and unmap it on free, and trim the heap's top when it is free; every
// forward then pays a page fault per 4 KiB of every new activation. On this project's VM a fault costs
// microseconds, more than the elementwise ops that touch the memory
// (docs/decisions/2026-11-25-keep-freed-memory.md). Fixed thresholds also make the cost the same in every
// process, instead of depending on which sizes happened to be freed first.
#pragma once

namespace moxlab {

// Sets glibc malloc to serve allocations below 32 MiB (its largest mmap threshold) from the heap, never
// to trim the heap, and to grow it 256 MiB at a time; no-op on other C libraries or when the
// environment variable MOXLAB_SYSTEM_MALLOC is set (to compare). Call once, before the first tensor.
void keep_freed_memory();

}  // namespace moxlab
