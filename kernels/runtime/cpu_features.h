// Which instruction set the hand-written kernels run: the one dispatch every op uses. An op compiles its
// inner loop once per ISA (functions marked MOXLAB_TARGET_AVX2 / MOXLAB_TARGET_AVX512 around one always-inlined
// body) and picks the variant with isa_variant() once per call. Tests and benchmarks force an ISA
// (ScopedIsa, or MOXLAB_ISA=avx512|avx2|portable in the environment) to check every variant against the
// reference and to time an AVX2-only machine on an AVX-512 one.
#pragma once
#include <vector>

namespace moxlab {

enum class Isa { portable, avx2, avx512 };  // avx2: AVX2 + FMA; avx512: AVX-512 F/VL (and AVX2 + FMA)

#if defined(__x86_64__)
#define MOXLAB_TARGET_AVX2 __attribute__((target("avx2,fma")))
#define MOXLAB_TARGET_AVX512 __attribute__((target("avx512f,avx512vl,fma")))
#else  // no x86 variants run elsewhere (cpu_supports says so); the variants compile as portable code
#define MOXLAB_TARGET_AVX2
#define MOXLAB_TARGET_AVX512
#endif
// The body every variant shares: always inlined, so it is compiled for the ISA of the variant calling it.
#define MOXLAB_INLINE __attribute__((always_inline)) inline

bool cpu_supports(Isa isa);
// The best ISA this CPU runs.
Isa best_isa();
// The ISA the kernels run now: the one forced (by ScopedIsa or MOXLAB_ISA), else the best. A forced ISA the
// CPU lacks runs the best it has.
Isa active_isa();
// Every ISA this CPU runs, best first (the variants a cross-check test compares).
std::vector<Isa> supported_isas();
const char* isa_name(Isa isa);  // "AVX-512", "AVX2 + FMA", "portable"

// Forces `isa` for its lifetime, then restores what ran before (tests, benchmarks; not thread-safe
// against kernels running concurrently).
class ScopedIsa {
 public:
  explicit ScopedIsa(Isa isa);
  ~ScopedIsa();
  ScopedIsa(const ScopedIsa&) = delete;
  ScopedIsa& operator=(const ScopedIsa&) = delete;

 private:
  int previous_;
};

// The variant of an op for active_isa(). Ops without a 16-float form pass their AVX2 variant as avx512.
template <class Fn>
Fn isa_variant(Fn portable, Fn avx2, Fn avx512) {
  switch (active_isa()) {
    case Isa::avx512: return avx512;
    case Isa::avx2: return avx2;
    default: return portable;
  }
}

}  // namespace moxlab
