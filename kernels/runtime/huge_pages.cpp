#include "kernels/runtime/huge_pages.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace moxlab {

namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;
constexpr std::size_t kChunkBytes = std::size_t{32} << 20;  // 16 huge pages: a small model's packings in one
constexpr std::size_t kSmallBytes = std::size_t{64} << 10;  // below this, ordinary memory
constexpr std::size_t kAlign = 64;                          // a cache line: the kernels' vector loads

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

std::atomic<std::int64_t> g_chunks{0};

// One mapping, 2 MiB-aligned inside, handed out front to back.
struct Chunk {
  void* mapping = nullptr;
  std::size_t mapped = 0;
  char* begin = nullptr;
  std::size_t size = 0, used = 0;
  ~Chunk() {
#if defined(__linux__)
    munmap(mapping, mapped);
#endif
    --g_chunks;
  }
};

// A chunk of at least `bytes`, or none where the system will not map one.
std::shared_ptr<Chunk> map_chunk(std::size_t bytes) {
#if defined(__linux__)
  const std::size_t size = round_up(std::max(bytes, kChunkBytes), kHugePage), mapped = size + kHugePage;
  void* p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  auto chunk = std::make_shared<Chunk>();
  ++g_chunks;
  chunk->mapping = p;
  chunk->mapped = mapped;
  chunk->begin = reinterpret_cast<char*>(round_up(reinterpret_cast<std::uintptr_t>(p), kHugePage));
  chunk->size = size;
  madvise(chunk->begin, size, MADV_HUGEPAGE);  // refused where huge pages are off: ordinary pages then
  return chunk;
#else
  (void)bytes;
  return nullptr;
#endif
}

std::mutex g_mutex;
std::shared_ptr<Chunk> g_current;  // the chunk new packings go to

}  // namespace

torch::Tensor copy_to_huge_pages(const torch::Tensor& x) {
  TORCH_CHECK(x.is_cpu() && x.scalar_type() == torch::kFloat, "copy_to_huge_pages: needs a float32 CPU tensor");
  const std::size_t bytes = round_up(static_cast<std::size_t>(x.numel()) * sizeof(float), kAlign);
  std::shared_ptr<Chunk> chunk;
  char* at = nullptr;
  static const bool off = std::getenv("MOXLAB_NO_HUGE_PAGES") != nullptr;
  if (bytes >= kSmallBytes && !off) {
    const std::lock_guard<std::mutex> lock(g_mutex);
    if (!g_current || g_current->size - g_current->used < bytes) g_current = map_chunk(bytes);
    if (g_current) {
      chunk = g_current;
      at = chunk->begin + chunk->used;
      chunk->used += bytes;
    }
  }
  auto t = chunk ? torch::from_blob(at, x.sizes(), [chunk](void*) mutable { chunk.reset(); }, x.options())
                 : torch::empty(x.sizes(), x.options());
  t.copy_(x);  // one copy from x's layout, in a chunk or not
  return t;
}

std::int64_t huge_page_chunks() { return g_chunks; }

}  // namespace moxlab
