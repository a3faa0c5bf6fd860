// Mutation tests of the HDF5 readers behind `moxlab observe` (observe_capture) and `moxlab route`
// (observe_routing): byte flips, planted integers, truncations, inserted, deleted and duplicated chunks
// (tests/mutation/mutants.h) of a capture and a routing capture, in today's layout and in the older
// one with variable-length strings (tests/mutation/legacy_tensor_log.h), each read in a forked child
// with a time limit. Every mutant must end accepted or in a clean moxlab::Error: no crash, no hang, no
// unclear error. Also the reliability audit's crash: one byte of the global heap's size set to 0x01.
#include <catch2/catch.hpp>

#include <cstdlib>

#include "core/observe/observe_capture.h"
#include "core/observe/router_domains.h"
#include "core/store/tensor_log_reader.h"
#include "tests/mutation/hdf5_fixtures.h"
#include "tests/mutation/hdf5_mutants.h"
#include "tests/scratch_dir.h"

using namespace moxlab;
using namespace moxlab::testing;
using Catch::Matchers::Contains;


TEST_CASE("observe: mutants of a capture end accepted or in a clean error, never a crash or hang",
          "[observe][mutation]") {
  ::setenv("MOXLAB_HDF5_PROBE_SECONDS", kProbeSeconds, 1);
  ScratchDir dir("observe_mutants");
  const Hdf5Fixtures f = write_hdf5_fixtures(dir.path.string());
  const std::string mutant = dir.file("mutant.h5"), out = dir.file("mutant.observe.h5");
  Hdf5Tally tally;
  for (const Mutant& m : hdf5_mutants(f.capture, dir.file("legacy.h5"), 160, 2911)) {
    write_bytes(mutant, m.bytes);
    tally.add(run_isolated([&] { observe_capture(mutant, out); }, kMutantTimeout), m.how);
  }
  CHECK(tally.total() >= 320);
  check_no_bad_outcomes(tally, "capture HDF5 -> observe_capture");
}

TEST_CASE("route: mutants of a routing capture end accepted or in a clean error, never a crash or hang",
          "[observe][routing][mutation]") {
  ::setenv("MOXLAB_HDF5_PROBE_SECONDS", kProbeSeconds, 1);
  ScratchDir dir("route_mutants");
  const Hdf5Fixtures f = write_hdf5_fixtures(dir.path.string());
  const std::string mutant = dir.file("mutant.h5"), out = dir.file("mutant.routing.h5");
  Hdf5Tally tally;
  for (const Mutant& m : hdf5_mutants(f.routing_capture, dir.file("legacy.h5"), 160, 2912)) {
    write_bytes(mutant, m.bytes);
    tally.add(run_isolated([&] { observe_routing(mutant, out); }, kMutantTimeout), m.how);
  }
  CHECK(tally.total() >= 320);
  check_no_bad_outcomes(tally, "routing capture HDF5 -> observe_routing");
}

TEST_CASE("route: the audit's one-byte global-heap corruption of a routing capture is a clean error",
          "[observe][routing][mutation]") {
  ::setenv("MOXLAB_HDF5_PROBE_SECONDS", kProbeSeconds, 1);
  ScratchDir dir("route_gcol");
  const Hdf5Fixtures f = write_hdf5_fixtures(dir.path.string());
  write_legacy_copy(f.routing_capture, dir.file("legacy.h5"));
  const std::string path = dir.file("route_segv_1byte.h5");
  const std::string mutant = gcol_size_mutant(read_bytes(dir.file("legacy.h5")));
  REQUIRE(!mutant.empty());
  write_bytes(path, mutant);

  const IsolatedResult route = run_isolated([&] { observe_routing(path, dir.file("out.h5")); }, kMutantTimeout);
  INFO(outcome_name(route.outcome) << ": " << route.message);
  CHECK(route.outcome == Outcome::clean_error);
  CHECK_THAT(route.message, Contains("route_segv_1byte.h5"));
  const IsolatedResult open = run_isolated([&] { TensorLogReader::open_checked(path).read_strings("/domain_names"); });
  INFO(outcome_name(open.outcome) << ": " << open.message);
  CHECK(open.outcome == Outcome::clean_error);
  // The unchanged older-layout file is read as before.
  const RoutingReport rep = observe_routing(dir.file("legacy.h5"), dir.file("legacy.routing.h5"));
  CHECK(rep.routers.size() == 4);
  CHECK(rep.run_id == 2);
}

TEST_CASE("route: a domain name that is not UTF-8 is a clean error, not a JSON exception", "[observe][routing]") {
  ScratchDir dir("route_utf8");
  const std::string cap = dir.file("cap.h5");
  {
    const std::vector<float> probs = {.5f, .5f, .3f, .7f}, active = {1, 0, 0, 1};
    TensorLogWriter w(cap);
    w.write("/probes/blocks.0.attn.router.probs", probs.data(), {2, 2});
    w.write("/probes/blocks.0.attn.router.topk", active.data(), {2, 2});
    w.write("/domain", std::vector<std::int32_t>{0, 0});
    w.write_strings("/domain_names", {"co\xff\xfe" "de"});
    w.finish();
  }
  const IsolatedResult r = run_isolated([&] { observe_routing(cap, dir.file("out.h5")); });
  INFO(outcome_name(r.outcome) << ": " << r.message);
  CHECK(r.outcome == Outcome::clean_error);
  CHECK_THAT(r.message, Contains("domain name") && Contains("not a valid name"));
}

TEST_CASE("route: a corrupted chunk shape is a clean error naming the dataset, whatever the heap layout",
          "[observe][routing][mutation]") {
  // The routing mutants' "plant 0 (4 bytes) at 2640" of the older layout turns a router dataset's chunk
  // shape (256, 4) into (256, 23044); libhdf5 1.10 then read freed memory in H5Dread and crashed in some
  // heap layouts only (the probe child could pass and the reader crash). Now the chunk shape is checked.
  ::setenv("MOXLAB_HDF5_PROBE_SECONDS", kProbeSeconds, 1);
  ScratchDir dir("route_chunk");
  const Hdf5Fixtures f = write_hdf5_fixtures(dir.path.string());
  const std::string path = dir.file("chunk_shape.h5");
  bool found = false;
  for (const Mutant& m : hdf5_mutants(f.routing_capture, dir.file("legacy.h5"), 160, 2912))
    if (m.how.find("legacy layout: plant 0 (4 bytes) at 2640") == 0) {
      write_bytes(path, m.bytes);
      found = true;
    }
  REQUIRE(found);
  const IsolatedResult route = run_isolated([&] { observe_routing(path, dir.file("out.h5")); }, kMutantTimeout);
  INFO(outcome_name(route.outcome) << ": " << route.message);
  CHECK(route.outcome == Outcome::clean_error);
  CHECK_THAT(route.message, Contains("chunk dimension") && Contains("chunk_shape.h5"));
}
