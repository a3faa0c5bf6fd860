// core/store's defences against corrupted HDF5 files: new tensor logs are HDF5 1.10 format with every
// dataset checksummed and no variable-length strings, so a changed byte in the values is a read error
// rather than a wrong number; variable-length strings of older files are read only after the file was
// read completely in a child process; and that child's crash or hang is a clean Error in the parent.
#include <catch2/catch.hpp>

#include <signal.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/common/error.h"
#include "core/store/tensor_log.h"
#include "core/store/tensor_log_probe.h"
#include "tests/mutation/legacy_tensor_log.h"
#include "tests/scratch_dir.h"

using namespace moxlab;
using Catch::Matchers::Contains;
using Catch::Matchers::Equals;

namespace {

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// A small log of every kind of object the writer makes.
void write_sample(const std::string& path) {
  TensorLogWriter w(path);
  w.set_attr("/", "config", R"({"model":"tiny"})");
  w.set_attr("/", "empty", "");
  w.set_attr_int("/", "layout_version", 2);
  std::vector<float> values(100);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = 1000.0f + 0.25f * static_cast<float>(i);
  w.write("/values", values);                                // small: uncompressed
  w.write("/big", std::vector<std::int32_t>(5000, 7));       // compressed
  const double scalar = 2.5;
  w.write("/scalar", &scalar, {});                           // scalar: compact
  w.write("/empty", std::vector<double>{});                  // empty: compact
  w.write_strings("/names", {"code", "", "héllo wörld"});
  const float row[3] = {1, 2, 3};
  w.append_rows("/probes/x", row, 1, 3);                     // appendable
  w.finish();
}

}  // namespace

TEST_CASE("tensor log: new files are HDF5 1.10 format, every dataset checksummed, strings fixed-width",
          "[store][tensor_log][hardening]") {
  testing::ScratchDir dir("tl_format");
  const std::string path = dir.file("t.h5");
  write_sample(path);
  const std::string bytes = read_bytes(path);
  REQUIRE(bytes.size() > 16);
  CHECK(static_cast<int>(bytes[8]) >= 2);  // superblock version 2+: checksummed metadata

  TensorLogReader r(path);  // in process: no variable-length string anywhere
  for (const char* name : {"/values", "/big", "/scalar", "/empty", "/names", "/probes/x"}) {
    INFO(name);
    CHECK(r.info(name).checksummed);
    CHECK_FALSE(r.info(name).variable_strings);
  }
  CHECK(r.info("/names").string_width == std::string("héllo wörld").size());
  CHECK(r.read_strings("/names") == std::vector<std::string>{"code", "", "héllo wörld"});
  CHECK(r.attr("/", "config") == R"({"model":"tiny"})");
  CHECK(r.attr("/", "empty").empty());
  CHECK(r.read<double>("/scalar") == std::vector<double>{2.5});
  CHECK(r.read<float>("/values")[99] == 1000.0f + 0.25f * 99);
}

TEST_CASE("tensor log: a changed byte in a dataset's values is a read error, not a wrong number",
          "[store][tensor_log][hardening]") {
  testing::ScratchDir dir("tl_fletcher");
  const std::string path = dir.file("t.h5");
  write_sample(path);
  std::string bytes = read_bytes(path);
  const float probe = 1000.0f + 0.25f * 40;  // /values[40], stored as is (small datasets are not deflated)
  char pattern[4];
  std::memcpy(pattern, &probe, 4);
  const auto at = bytes.find(std::string(pattern, 4));
  REQUIRE(at != std::string::npos);
  bytes[at + 1] = static_cast<char>(bytes[at + 1] ^ 0x10);
  write_bytes(path, bytes);
  TensorLogReader r(path);
  CHECK_THROWS_WITH(r.read<float>("/values"), Contains("/values") && Contains("t.h5"));
  CHECK_THROWS_WITH(TensorLogReader::open_checked(path), Contains("/values"));
  CHECK(r.read<std::int32_t>("/big").size() == 5000);  // the other datasets stay readable
}

TEST_CASE("tensor log: variable-length strings of older files are read only after a checked open",
          "[store][tensor_log][hardening]") {
  testing::ScratchDir dir("tl_legacy");
  write_sample(dir.file("new.h5"));
  testing::write_legacy_copy(dir.file("new.h5"), dir.file("old.h5"));
  {
    TensorLogReader plain(dir.file("old.h5"));
    CHECK(plain.info("/names").variable_strings);
    CHECK_FALSE(plain.info("/values").checksummed);
    CHECK_THROWS_WITH(plain.read_strings("/names"), Contains("/names") && Contains("open_checked"));
    CHECK_THROWS_WITH(plain.attr("/", "config"), Contains("config") && Contains("open_checked"));
    CHECK(plain.read<float>("/values").size() == 100);  // numbers need no global heap
  }
  const TensorLogReader checked = TensorLogReader::open_checked(dir.file("old.h5"));
  CHECK(checked.read_strings("/names") == std::vector<std::string>{"code", "", "héllo wörld"});
  CHECK(checked.attr("/", "config") == R"({"model":"tiny"})");
  CHECK(checked.attr_int("/", "layout_version") == 1);
}

TEST_CASE("read_in_child: the child's crash, hang or error is a clean Error naming the file",
          "[store][tensor_log][hardening]") {
  testing::ScratchDir dir("tl_child");
  const std::string path = dir.file("f.h5");
  write_bytes(path, "x");
  CHECK_NOTHROW(read_in_child(path, [] {}, 10));
  CHECK_THROWS_WITH(read_in_child(path, [] { ::raise(SIGSEGV); }, 10),
                    Contains("HDF5 file " + path + " is corrupt: reading it crashed libhdf5 (SIGSEGV)"));
  CHECK_THROWS_WITH(read_in_child(path, [] { std::this_thread::sleep_for(std::chrono::seconds(30)); }, 0.5),
                    Contains("HDF5 file " + path + " is corrupt: reading it did not finish in 0.5 s"));
  CHECK_THROWS_WITH(read_in_child(path, [] { throw Error("cannot read dataset /x in f.h5"); }, 10),
                    Equals("cannot read dataset /x in f.h5"));
  CHECK_THROWS_WITH(read_in_child(path, [] { throw std::bad_alloc(); }, 10), Contains("is corrupt: reading it failed"));
  CHECK_THROWS_WITH(TensorLogReader::open_checked(path), Contains("cannot open HDF5 file " + path));
  CHECK_THROWS_WITH(TensorLogReader::open_checked(dir.file("none.h5")), Contains("no such file"));
}
