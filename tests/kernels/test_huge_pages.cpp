// Packed weights on 2 MiB pages (kernels/runtime/huge_pages.h).
#include <cstdio>
#include <fstream>
#include <iterator>

#include "kernels/runtime/huge_pages.h"
#include "tests/torch_catch.h"

using namespace moxlab;

namespace {
// The /proc/self/smaps field `field` ("VmFlags", "AnonHugePages") of the mapping holding `address`.
std::string smaps_field(const void* address, const std::string& field) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    unsigned long begin = 0, end = 0;
    char sep = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx%c", &begin, &end, &sep) == 3 && sep == ' ') {  // a mapping's first line
      inside = begin <= at && at < end;
      continue;
    }
    if (inside && line.rfind(field + ":", 0) == 0) return line.substr(field.size() + 1);
  }
  return {};
}
}  // namespace

TEST_CASE("Packed weights live in huge-page chunks that their tensors keep mapped", "[kernels]") {
  // Values and shape kept, cache-line aligned; a small tensor stays in ordinary memory.
  const auto small = torch::randn({16, 16});
  const auto small_copy = copy_to_huge_pages(small);
  CHECK(torch::equal(small_copy, small));
  CHECK(small_copy.data_ptr() != small.data_ptr());
  // Two 40 MB tensors: each needs a chunk of its own (chunks are 32 MiB); the first chunk stays mapped
  // while its tensor lives, and goes when it is freed.
  const auto big = torch::randn({10 << 20});
  auto a = copy_to_huge_pages(big);
  const auto after_a = huge_page_chunks();
  CHECK(torch::equal(a, big));
  CHECK(reinterpret_cast<std::uintptr_t>(a.data_ptr()) % 64 == 0);
  auto b = copy_to_huge_pages(big.view({1024, -1}));
  CHECK(b.sizes() == torch::IntArrayRef({1024, 10 << 10}));
  CHECK(huge_page_chunks() == after_a + 1);
  CHECK(torch::equal(b.flatten(), big));
  // The chunk is advised for huge pages: "hg" among its VMA flags, whether or not the kernel could find
  // free 2 MiB pages for it this time (AnonHugePages, reported).
  std::ifstream thp("/sys/kernel/mm/transparent_hugepage/enabled");
  const std::string mode((std::istreambuf_iterator<char>(thp)), std::istreambuf_iterator<char>());
  if (mode.find("[never]") == std::string::npos && !mode.empty()) {
    const std::string flags = smaps_field(b.data_ptr(), "VmFlags");
    INFO("VmFlags:" << flags << "; AnonHugePages:" << smaps_field(b.data_ptr(), "AnonHugePages"));
    CHECK((" " + flags + " ").find(" hg ") != std::string::npos);
  } else {
    WARN("transparent huge pages are off here (" << mode << "): not checking the chunk's advice");
  }
  a = torch::Tensor();
  CHECK(huge_page_chunks() == after_a);
  CHECK(torch::equal(b.flatten(), big));
}
