#include "kernels/runtime/cpu_features.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace moxlab {

namespace {

constexpr int kNotForced = -1;

// MOXLAB_ISA from the environment, read once; an unknown name leaves the choice to the CPU.
int forced_by_environment() {
  const char* v = std::getenv("MOXLAB_ISA");
  if (!v) return kNotForced;
  if (std::strcmp(v, "avx512") == 0) return static_cast<int>(Isa::avx512);
  if (std::strcmp(v, "avx2") == 0) return static_cast<int>(Isa::avx2);
  if (std::strcmp(v, "portable") == 0) return static_cast<int>(Isa::portable);
  return kNotForced;
}

std::atomic<int>& forced() {
  static std::atomic<int> isa{forced_by_environment()};
  return isa;
}

}  // namespace

bool cpu_supports(Isa isa) {
  if (isa == Isa::portable) return true;
#if defined(__x86_64__)
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (isa == Isa::avx2) return avx2;
  return avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl");
#else
  return false;
#endif
}

Isa best_isa() {
  static const Isa best = cpu_supports(Isa::avx512) ? Isa::avx512 : cpu_supports(Isa::avx2) ? Isa::avx2 : Isa::portable;
  return best;
}

Isa active_isa() {
  const int f = forced().load(std::memory_order_relaxed);
  if (f == kNotForced) return best_isa();
  const auto isa = static_cast<Isa>(f);
  return cpu_supports(isa) ? isa : best_isa();
}

std::vector<Isa> supported_isas() {
  std::vector<Isa> out;
  for (Isa isa : {Isa::avx512, Isa::avx2, Isa::portable})
    if (cpu_supports(isa)) out.push_back(isa);
  return out;
}

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::avx512: return "AVX-512";
    case Isa::avx2: return "AVX2 + FMA";
    default: return "portable";
  }
}

ScopedIsa::ScopedIsa(Isa isa) : previous_(forced().exchange(static_cast<int>(isa))) {}
ScopedIsa::~ScopedIsa() { forced().store(previous_); }

}  // namespace moxlab
