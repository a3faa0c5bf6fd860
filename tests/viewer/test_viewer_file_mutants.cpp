// Mutation tests of the viewer's file readers, called exactly as its panels call them (Observations:
// read_observation_file, then read_token_texts of the file's capture; Routing: read_routing_file; ToMoE:
// read_tomoe_conversion, then read_routed_capture and routed_tokens of the routing capture), with the
// panel-side computations on what they return. Mutants of today's layout and of the older one with
// variable-length strings (including the reliability audit's one-byte global-heap crash), each read in
// a forked child with a time limit: accepted or a clean moxlab::Error, never a crash, hang or unclear error.
#include <catch2/catch.hpp>

#include <cstdlib>

#include "core/observe/tomoe_conversion_file.h"
#include "tests/mutation/hdf5_fixtures.h"
#include "tests/mutation/hdf5_mutants.h"
#include "tests/scratch_dir.h"
#include "viewer/model/capture_files.h"
#include "viewer/model/tomoe_view.h"

using namespace moxlab;
using namespace moxlab::testing;
using namespace moxlab::viewer;
using Catch::Matchers::Contains;

namespace {

// What the Observations panel reads for one file.
void observations_panel_reads(const std::string& path) {
  const ObservationFile f = read_observation_file(path);
  for (const auto& c : f.curves)
    if (!f.source.empty() && c.example_row >= 0) read_token_texts(f.source, c.example_row, 5);
}

// What the ToMoE panel reads from a routing capture: every layer's routed tokens of every domain.
void tomoe_panel_capture_reads(const std::string& capture) {
  const RoutedCapture c = read_routed_capture(capture);
  for (int layer : c.layers)
    for (std::size_t d = 0; d < c.domains.size(); ++d) {
      const auto tokens = routed_tokens(c, layer, c.begin[d], std::min<std::int64_t>(c.count[d], 200));
      routed_spans(tokens);
      expert_legend(tokens, c.experts);
    }
}

}  // namespace

TEST_CASE("viewer Observations reads: mutants end accepted or in a clean error", "[viewer][mutation]") {
  ::setenv("MOXLAB_HDF5_PROBE_SECONDS", kProbeSeconds, 1);
  ScratchDir dir("viewer_obs_mutants");
  const Hdf5Fixtures f = write_hdf5_fixtures(dir.path.string());
  REQUIRE_NOTHROW(observations_panel_reads(f.observations));
  const std::string mutant = dir.file("mutant.observe.h5");
  Hdf5Tally tally;
  for (const Mutant& m : hdf5_mutants(f.observations, dir.file("legacy.h5"), 150, 2921)) {
    write_bytes(mutant, m.bytes);
    tally.add(run_isolated([&] { observations_panel_reads(mutant); }, kMutantTimeout), m.how);
  }
  // The capture behind the token texts.
  for (const Mutant& m : make_mutants(read_bytes(f.capture), 40, 2922)) {
    write_bytes(mutant, m.bytes);
    tally.add(run_isolated([&] { read_token_texts(mutant, 3, 5); }, kMutantTimeout), "capture: " + m.how);
  }
  CHECK(tally.total() >= 300);
  check_no_bad_outcomes(tally, "observations HDF5 -> Observations panel readers");
}

TEST_CASE("viewer Routing reads: mutants end accepted or in a clean error", "[viewer][mutation]") {
  ::setenv("MOXLAB_HDF5_PROBE_SECONDS", kProbeSeconds, 1);
  ScratchDir dir("viewer_routing_mutants");
  const Hdf5Fixtures f = write_hdf5_fixtures(dir.path.string());
  const RoutingFile good = read_routing_file(f.routing);  // the fixture capture has windows: the null is read
  REQUIRE(!good.routers.empty());
  CHECK(good.routers[0].null.permutations == kSpreadPermutations);
  CHECK(good.routers[0].null.p > 0);
  const std::string mutant = dir.file("mutant.routing.h5");
  Hdf5Tally tally;
  for (const Mutant& m : hdf5_mutants(f.routing, dir.file("legacy.h5"), 150, 2923)) {
    write_bytes(mutant, m.bytes);
    tally.add(run_isolated(
                  [&] {
                    for (const RouterTable& t : read_routing_file(mutant).routers) (void)(t.spread() + t.least_used());
                  },
                  kMutantTimeout),
              m.how);
  }
  CHECK(tally.total() >= 300);
  check_no_bad_outcomes(tally, "routing HDF5 -> Routing panel reader");
}

TEST_CASE("viewer ToMoE reads: mutants end accepted or in a clean error", "[viewer][mutation]") {
  ::setenv("MOXLAB_HDF5_PROBE_SECONDS", kProbeSeconds, 1);
  ScratchDir dir("viewer_tomoe_mutants");
  const Hdf5Fixtures f = write_hdf5_fixtures(dir.path.string());
  REQUIRE_NOTHROW(tomoe_panel_capture_reads(f.routing_capture));
  const std::string mutant = dir.file("mutant.h5");
  Hdf5Tally tally;
  for (const Mutant& m : hdf5_mutants(f.tomoe, dir.file("legacy.h5"), 150, 2924)) {
    write_bytes(mutant, m.bytes);
    tally.add(run_isolated(
                  [&] {
                    const TomoeConversionRecord r = read_tomoe_conversion(mutant);
                    kept_width_fractions(r);
                    expert_width_boxes(r);
                  },
                  kMutantTimeout),
              m.how);
  }
  for (const Mutant& m : hdf5_mutants(f.routing_capture, dir.file("legacy.h5"), 40, 2925)) {
    write_bytes(mutant, m.bytes);
    tally.add(run_isolated([&] { tomoe_panel_capture_reads(mutant); }, kMutantTimeout), "routing capture: " + m.how);
  }
  CHECK(tally.total() >= 300);
  check_no_bad_outcomes(tally, "ToMoE conversion + routing capture HDF5 -> ToMoE panel readers");
}

TEST_CASE("viewer Observations: the audit's one-byte global-heap corruption is a clean error",
          "[viewer][mutation]") {
  ::setenv("MOXLAB_HDF5_PROBE_SECONDS", kProbeSeconds, 1);
  ScratchDir dir("viewer_obs_gcol");
  const Hdf5Fixtures f = write_hdf5_fixtures(dir.path.string());
  write_legacy_copy(f.observations, dir.file("legacy.observe.h5"));
  const std::string path = dir.file("viewer-gcol.h5");
  const std::string mutant = gcol_size_mutant(read_bytes(dir.file("legacy.observe.h5")));
  REQUIRE(!mutant.empty());
  write_bytes(path, mutant);
  const IsolatedResult r = run_isolated([&] { observations_panel_reads(path); }, kMutantTimeout);
  INFO(outcome_name(r.outcome) << ": " << r.message);
  CHECK(r.outcome == Outcome::clean_error);
  CHECK_THAT(r.message, Contains("viewer-gcol.h5"));
  // The unchanged older-layout file is read as before.
  const ObservationFile ok = read_observation_file(dir.file("legacy.observe.h5"));
  CHECK(ok.taps.size() == 6);
  CHECK(ok.source == f.capture);
}

TEST_CASE("viewer ToMoE: a conversion file whose integer attribute has precision 0 is a clean error", "[viewer][mutation]") {
  // Found by fuzz_tensor_log: the probe child read d_mid as an integer without trouble, then the panel's
  // attr_double converted it to a double and libhdf5 died of SIGBUS in H5T__bit_copy.
  ::setenv("MOXLAB_HDF5_PROBE_SECONDS", kProbeSeconds, 1);
  ScratchDir dir("viewer_tomoe_precision");
  const Hdf5Fixtures f = write_hdf5_fixtures(dir.path.string());
  write_legacy_copy(f.tomoe, dir.file("legacy.h5"));
  std::string bytes = read_bytes(dir.file("legacy.h5"));
  const auto at = bytes.find(std::string("d_mid\0\0\0", 8));  // the attribute's name, padded to 8
  REQUIRE(at != std::string::npos);
  // The integer datatype follows: class and flags (4), size (4), bit offset (2), bit precision (2).
  REQUIRE(bytes[at + 8] == 0x10);
  bytes[at + 8 + 10] = 0;
  bytes[at + 8 + 11] = 0;
  const std::string path = dir.file("precision0.h5");
  write_bytes(path, bytes);
  const IsolatedResult r = run_isolated([&] { read_tomoe_conversion(path); }, kMutantTimeout);
  INFO(outcome_name(r.outcome) << ": " << r.message);
  CHECK(r.outcome == Outcome::clean_error);
  CHECK_THAT(r.message, Contains("precision0.h5"));
}
