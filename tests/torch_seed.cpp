// Debian's LibTorch seeds its default generator from the clock, so a test drawing inputs with
// torch::rand* would see other numbers in every process (a property that holds for most draws would
// then fail now and then, on one machine and not another). Every test case starts from the seed Catch2
// is given instead: 0 unless `--rng-seed N` asks for other numbers, whatever order ctest runs them in.
#define CATCH_CONFIG_EXTERNAL_INTERFACES  // Catch2 v2 declares its listener base only on request
#include "tests/torch_catch.h"

namespace {
struct SeedTorchPerTestCase : Catch::TestEventListenerBase {
  using TestEventListenerBase::TestEventListenerBase;
  void testCaseStarting(Catch::TestCaseInfo const&) override { torch::manual_seed(Catch::rngSeed()); }
};
}  // namespace

CATCH_REGISTER_LISTENER(SeedTorchPerTestCase)
