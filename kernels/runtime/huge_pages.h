// Packed weights on 2 MiB pages. A forward streams every packed weight once, and with 4 KiB pages each
// 4 KiB of it costs a TLB miss and a page walk: ToMoE's experts alone are 113 MB at the small shape, four
// times the dense FFN, so the walks weigh on the sparse models most (measured with the machine's
// transparent huge pages switched to "always": docs/decisions/2026-11-26-huge-pages.md). Linux backs
// memory with huge pages in "madvise" mode only where asked to, so the packings are copied into chunks of
// 2 MiB-aligned memory advised MADV_HUGEPAGE. Where the kernel refuses (transparent huge pages off, another
// OS) the chunks keep ordinary pages and nothing else changes; the environment variable MOXLAB_NO_HUGE_PAGES
// turns the chunks off (ordinary tensors, to compare).
#pragma once
#include <cstdint>

#include <torch/torch.h>

namespace moxlab {

// A contiguous float32 CPU copy of x in a huge-page chunk (small tensors, under 64 KiB, in ordinary
// memory). A chunk is unmapped when the last tensor in it is freed.
torch::Tensor copy_to_huge_pages(const torch::Tensor& x);

// Chunks mapped now (tests).
std::int64_t huge_page_chunks();

}  // namespace moxlab
