// Mutants of moxlab's HDF5 files for the readers' mutation tests: those of tests/mutation/mutants.h
// of a file in today's layout and of its copy in the older layout with variable-length strings
// (legacy_tensor_log.h), plus the size field of the older copy's global heap ("GCOL") changed byte by
// byte, as in the reliability audit's one-byte crash of libhdf5. And a tally that also counts the
// clean errors that were libhdf5 crashing or hanging in the readers' probe child.
#pragma once
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/mutation/isolated_run.h"
#include "tests/mutation/legacy_tensor_log.h"
#include "tests/mutation/mutants.h"

namespace moxlab::testing {

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// The audit's crash: the byte 10 past "GCOL" (the third byte of the collection's size) set to 0x01.
// "" when the file has no global heap.
inline std::string gcol_size_mutant(std::string bytes) {
  const auto at = bytes.find("GCOL");
  if (at == std::string::npos) return "";
  bytes[at + 10] = 0x01;
  return bytes;
}

// `each` mutants of path and `each` of its older-layout copy (written to scratch_path), and the low four
// bytes of that copy's global-heap size set to 0x01 and to 0xff.
inline std::vector<Mutant> hdf5_mutants(const std::string& path, const std::string& scratch_path, int each,
                                        std::uint64_t seed) {
  std::vector<Mutant> all = make_mutants(read_bytes(path), each, seed);
  write_legacy_copy(path, scratch_path);
  const std::string legacy = read_bytes(scratch_path);
  for (Mutant& m : make_mutants(legacy, each, seed + 1)) {
    m.how = "legacy layout: " + m.how;
    all.push_back(std::move(m));
  }
  const auto gcol = legacy.find("GCOL");
  if (gcol == std::string::npos) return all;
  for (std::size_t byte = 8; byte < 12; ++byte)
    for (unsigned char v : {0x01, 0xff}) {
      Mutant m{legacy, "legacy layout: GCOL size byte " + std::to_string(byte - 8) + " = " + std::to_string(v)};
      m.bytes[gcol + byte] = static_cast<char>(v);
      all.push_back(std::move(m));
    }
  return all;
}

struct Hdf5Tally : OutcomeTally {
  int child_crashed = 0, child_hung = 0;  // clean errors from the probe child's crash or hang
  void add(const IsolatedResult& r, const std::string& how) {
    OutcomeTally::add(r, how);
    child_crashed += r.message.find("reading it crashed libhdf5") != std::string::npos;
    child_hung += r.message.find("reading it did not finish") != std::string::npos;
  }
  std::string summary(const std::string& what) const {
    return OutcomeTally::summary(what) + "; of the clean errors, libhdf5 crashed in " + std::to_string(child_crashed) +
           " and hung in " + std::to_string(child_hung) + " probe children";
  }
};

// A probe that hangs is killed after kProbeSeconds (a clean error); a reader gets kMutantTimeout in all.
constexpr const char* kProbeSeconds = "3";
constexpr double kMutantTimeout = 20.0;

// Logs the tally and fails the test on any crash, hang or error that is not a moxlab::Error.
inline void check_no_bad_outcomes(const Hdf5Tally& t, const std::string& what) {
  WARN(t.summary(what));
  CHECK(t.crash == 0);
  CHECK(t.hang == 0);
  CHECK(t.unclear_error == 0);
}

}  // namespace moxlab::testing
