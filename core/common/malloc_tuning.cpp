#include "core/common/malloc_tuning.h"

#include <cstdlib>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace moxlab {

void keep_freed_memory() {
#if defined(__GLIBC__)
  if (std::getenv("MOXLAB_SYSTEM_MALLOC") != nullptr) return;
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, -1);  // never: -1 converts to the largest size_t
  mallopt(M_TOP_PAD, 256 << 20);
#endif
}

}  // namespace moxlab
