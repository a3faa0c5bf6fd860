// The one ISA dispatch (kernels/runtime/cpu_features.h): what the CPU runs, forcing a variant and putting
// the previous choice back, and that a forced ISA the CPU lacks runs the best it has.
#include <algorithm>
#include <cstdlib>
#include <string>

#include "kernels/runtime/cpu_features.h"
#include "tests/torch_catch.h"

using namespace moxlab;

namespace {
int which(int portable, int avx2, int avx512) {
  using Fn = int (*)();
  static int p, a, w;
  p = portable, a = avx2, w = avx512;
  return isa_variant<Fn>([] { return p; }, [] { return a; }, [] { return w; })();
}
}  // namespace

TEST_CASE("The kernels run the best ISA the CPU has unless one is forced", "[kernels]") {
  const auto isas = supported_isas();
  REQUIRE(!isas.empty());
  CHECK(isas.front() == best_isa());
  CHECK(isas.back() == Isa::portable);  // every CPU runs the portable variants
  CHECK(cpu_supports(Isa::portable));
  for (const Isa isa : isas) CHECK(cpu_supports(isa));
  // AVX-512 implies AVX2 + FMA here: its variants use both.
  if (cpu_supports(Isa::avx512)) CHECK(cpu_supports(Isa::avx2));
  INFO("best: " << isa_name(best_isa()));
  if (!std::getenv("MOXLAB_ISA")) CHECK(active_isa() == best_isa());
}

TEST_CASE("ScopedIsa forces a variant for its lifetime and nests", "[kernels]") {
  const Isa before = active_isa();
  {
    const ScopedIsa portable(Isa::portable);
    CHECK(active_isa() == Isa::portable);
    CHECK(which(1, 2, 3) == 1);
    for (const Isa isa : supported_isas()) {
      const ScopedIsa inner(isa);
      CHECK(active_isa() == isa);
      CHECK(which(1, 2, 3) == (isa == Isa::avx512 ? 3 : isa == Isa::avx2 ? 2 : 1));
    }
    CHECK(active_isa() == Isa::portable);  // the inner scopes put it back
  }
  CHECK(active_isa() == before);
  for (const Isa isa : {Isa::avx512, Isa::avx2}) {
    if (cpu_supports(isa)) continue;
    const ScopedIsa missing(isa);  // the CPU lacks it: the best it has runs
    CHECK(active_isa() == best_isa());
  }
  CHECK(std::string(isa_name(Isa::avx512)) == "AVX-512");
  CHECK(std::string(isa_name(Isa::portable)) == "portable");
}
