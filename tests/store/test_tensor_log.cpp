// core/store TensorLog: every dtype and appended rows round-trip, h5py reads the same numbers, a file
// appears only on finish(), and truncated or foreign files are one-line Errors rather than crashes.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/common/error.h"
#include "core/store/tensor_log.h"
#include "tests/scratch_dir.h"

using namespace moxlab;
using Catch::Matchers::Contains;

namespace {

using TempDir = moxlab::testing::ScratchDir;

// Values exactly representable in float32 whose sums are exact too, so C++ and numpy agree to the bit.
std::vector<float> ramp(std::size_t n, float scale) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(static_cast<int>(i % 97) - 48) * scale;
  return v;
}

template <class T>
double sum(const std::vector<T>& v) {
  double s = 0;
  for (const T& x : v) s += static_cast<double>(x);
  return s;
}

std::string run_command(const std::string& cmd) {
  std::string out;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (!pipe) return out;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), pipe)) > 0) out.append(buf, n);
  ::pclose(pipe);
  return out;
}

// The capture used by the round-trip and h5py tests.
struct Capture {
  std::vector<float> probe;  // 3 appends: 100 + 1 + 300 rows of 8 (crosses the 256-row chunk edge)
  std::vector<std::int32_t> tokens;
  std::vector<float> small = {0.5f, -1.25f, 2.0f, 3.5f, -4.0f, 0.25f};  // 2 x 3
  std::vector<double> f64 = {1.5, -2.25, 1e-3};
  std::vector<std::int32_t> i32;
  std::vector<std::int64_t> i64 = {0, -1, 1LL << 40, 7};
  std::vector<std::uint8_t> u8 = {0, 1, 2, 255};
  std::vector<std::string> vstr = {"blocks.0.attn.out", "", "héllo wörld"};
  std::vector<std::string> fstr = {"arxiv", "code", "wiki"};
};

// Written the way core/capture/capture.cpp streams a capture: per window, append probe rows, token ids,
// domain labels and [begin, end) text offsets; root attributes carry the run id and config.
Capture write_capture(const std::string& path) {
  Capture c;
  c.probe = ramp(401 * 8, 0.5f);
  for (int i = 0; i < 2000; ++i) c.i32.push_back(i * 3 - 1000);  // big enough to be chunked and compressed
  for (int i = 0; i < 401; ++i) c.tokens.push_back(i % 50257);

  TensorLogWriter w = TensorLogWriter::create(path);
  w.set_attr_int("/", "run_id", 17);
  w.set_attr("/", "config", R"({"model":"tiny","layers":[0,1]})");
  const std::string probe = "/probes/blocks.0.attn.out";
  CHECK(w.rows(probe) == 0);
  w.append_rows(probe, c.probe.data(), 100, 8);
  w.append("/tokens", c.tokens.data(), 100);
  w.append("/domain", std::vector<std::int32_t>(100, 0));
  w.append_rows(probe, c.probe.data() + 100 * 8, 1, 8);
  w.append("/tokens", c.tokens.data() + 100, 1);
  w.append("/domain", std::vector<std::int32_t>(1, 2));
  CHECK(w.rows("/tokens") == 101);
  const std::vector<std::int64_t> offsets = {0, 3, 3, 7};  // [begin, end) per row
  w.append_rows("/text/offsets", offsets.data(), 2, 2);
  w.append_rows(probe, c.probe.data() + 101 * 8, 300, 8);
  w.append("/tokens", c.tokens.data() + 101, 300);
  w.append("/domain", std::vector<std::int32_t>(300, 2));
  w.set_attr(probe, "probe", "blocks.0.attn.out");
  w.set_attr_int(probe, "layer", 0);
  w.set_attr_double("/probes", "scale", 0.5);
  w.set_attr("/", "note", "first");
  w.set_attr("/", "note", "replaced");

  w.write("/small/f32", c.small.data(), {2, 3});
  w.write("/small/f64", c.f64);
  w.write("/small/i32", c.i32);
  w.write("/small/i64", c.i64);
  w.write("u8", c.u8);  // leading slash optional
  w.write_strings("/names/vlen", c.vstr);
  w.write_fixed_strings("/names/fixed", c.fstr);
  w.create_group("/empty/group");
  const std::vector<float> none;
  w.write("/small/empty", none);
  w.finish();
  return c;
}

}  // namespace

TEST_CASE("TensorLog round-trips every dtype, attributes and appended rows", "[store][tensor_log]") {
  TempDir dir("roundtrip");
  const std::string path = dir.file("captures/run17.h5");  // parent created on demand
  const Capture c = write_capture(path);
  REQUIRE(std::filesystem::exists(path));

  TensorLogReader r = TensorLogReader::open(path);
  const std::string probe = "/probes/blocks.0.attn.out";
  CHECK(r.datasets() == std::vector<std::string>{"/domain", "/names/fixed", "/names/vlen", probe, "/small/empty",
                                                 "/small/f32", "/small/f64", "/small/i32", "/small/i64",
                                                 "/text/offsets", "/tokens", "/u8"});
  CHECK(r.datasets("/probes") == std::vector<std::string>{probe});
  CHECK(r.has_dataset(probe));
  CHECK(r.has_dataset("tokens"));
  CHECK_FALSE(r.has_dataset("/probes"));
  CHECK(r.has_group("/probes"));
  CHECK(r.has_group("/empty/group"));

  CHECK(r.shape(probe) == std::vector<std::uint64_t>{401, 8});
  CHECK(r.dtype(probe) == DType::f32);
  CHECK(r.read<float>(probe) == c.probe);
  CHECK(r.read<std::int32_t>("/tokens") == c.tokens);
  CHECK(r.shape("/text/offsets") == std::vector<std::uint64_t>{2, 2});
  CHECK(r.read<std::int64_t>("/text/offsets") == std::vector<std::int64_t>{0, 3, 3, 7});
  CHECK(r.read_rows<std::int32_t>("/domain", 99, 3) == std::vector<std::int32_t>{0, 2, 2});

  // Lazy row ranges, across the boundaries of the appends and of the 256-row chunks.
  const std::vector<float> rows = r.read_rows<float>(probe, 99, 200);
  REQUIRE(rows.size() == 200 * 8);
  CHECK(std::equal(rows.begin(), rows.end(), c.probe.begin() + 99 * 8));
  CHECK(r.read_rows<float>(probe, 401, 0).empty());
  CHECK(r.read_rows<std::int32_t>("/tokens", 400, 1) == std::vector<std::int32_t>{c.tokens[400]});
  CHECK_THROWS_WITH(r.read_rows<float>(probe, 400, 2), Contains("it has 401 rows") && Contains(path));

  CHECK(r.shape("/small/f32") == std::vector<std::uint64_t>{2, 3});
  CHECK(r.read<float>("/small/f32") == c.small);
  CHECK(r.dtype("/small/f64") == DType::f64);
  CHECK(r.read<double>("/small/f64") == c.f64);
  CHECK(r.dtype("/small/i32") == DType::i32);
  CHECK(r.read<std::int32_t>("/small/i32") == c.i32);
  CHECK(r.read<std::int64_t>("/small/i32")[0] == -1000);  // converted on read
  CHECK(r.dtype("/small/i64") == DType::i64);
  CHECK(r.read<std::int64_t>("/small/i64") == c.i64);
  CHECK(r.dtype("/u8") == DType::u8);
  CHECK(r.read<std::uint8_t>("/u8") == c.u8);
  CHECK(r.shape("/small/empty") == std::vector<std::uint64_t>{0});
  CHECK(r.read<float>("/small/empty").empty());
  CHECK(r.dtype("/names/vlen") == DType::str);
  CHECK(r.read_strings("/names/vlen") == c.vstr);
  CHECK(r.read_strings("/names/fixed") == c.fstr);

  CHECK(r.attr_int("/", "run_id") == 17);
  CHECK(r.attr("/", "config") == R"({"model":"tiny","layers":[0,1]})");
  CHECK(r.attr("/", "note") == "replaced");
  CHECK(r.attr_names("/") == std::vector<std::string>{"config", "note", "run_id"});
  CHECK(r.attr(probe, "probe") == "blocks.0.attn.out");
  CHECK(r.attr_int(probe, "layer") == 0);
  CHECK(r.attr_double("/probes", "scale") == 0.5);
  CHECK(r.attr_double(probe, "layer") == 0.0);
  CHECK(r.has_attr("/", "run_id"));
  CHECK_FALSE(r.has_attr("/", "nope"));
  CHECK_FALSE(r.has_attr("/missing", "nope"));

  // Misuse is an Error naming the file and the object.
  CHECK_THROWS_WITH(r.read<float>("/nope"), "no dataset /nope in " + path);
  CHECK_THROWS_WITH(r.read<float>("/names/vlen"), Contains("holds strings"));
  CHECK_THROWS_WITH(r.read_strings("/u8"), Contains("holds numbers"));
  CHECK_THROWS_WITH(r.attr("/", "missing"), Contains("no attribute missing of / in " + path));
  CHECK_THROWS_WITH(r.attr("/", "run_id"), Contains("numeric"));
  CHECK_THROWS_WITH(r.attr_int("/", "config"), Contains("not an integer"));
  CHECK_THROWS_WITH(r.datasets("/tokens"), Contains("is not a group"));
}

TEST_CASE("TensorLogWriter rejects misuse with Errors", "[store][tensor_log]") {
  TempDir dir("misuse");
  TensorLogWriter w(dir.file("x.h5"));
  const std::vector<float> a(12, 1.0f);
  w.write("/a", a.data(), {3, 4});
  CHECK_THROWS_WITH(w.write("/a", a), Contains("already exists") && Contains("x.h5"));
  CHECK_THROWS_WITH(w.append_rows("/a", a.data(), 1, 4), Contains("not appendable"));
  w.append_rows("/b", a.data(), 3, 4);
  CHECK_THROWS_WITH(w.append_rows("/b", a.data(), 4, 3), Contains("float32 rows of shape (4)"));
  const std::vector<std::int32_t> ints(4, 1);
  CHECK_THROWS_WITH(w.append_rows("/b", ints.data(), 1, 4), Contains("int32 rows"));
  CHECK_THROWS_WITH(w.write_fixed_strings("/s", {"abcdef"}, 3), Contains("does not fit"));
  CHECK_THROWS_WITH(w.create_group("/a"), Contains("a dataset has that name"));
  CHECK_THROWS(w.write("", a));
  w.finish();
  CHECK(w.finished());
  CHECK_THROWS_WITH(w.write("/c", a), Contains("already finished"));
  CHECK_THROWS_AS(w.finish(), Error);
  TensorLogReader r(dir.file("x.h5"));
  CHECK(r.shape("/b") == std::vector<std::uint64_t>{3, 4});  // the failed appends left nothing behind
}

TEST_CASE("TensorLog appears only on finish() — an abandoned writer leaves no file", "[store][tensor_log]") {
  TempDir dir("atomic");
  const std::string path = dir.file("cap.h5");
  const std::vector<float> v = ramp(1000, 1.0f);
  {
    TensorLogWriter w(path);
    w.append_rows("/probes/x", v.data(), 100, 10);
    CHECK(std::filesystem::exists(w.temp_path()));
    CHECK_FALSE(std::filesystem::exists(path));
    try {
      TensorLogWriter moved = std::move(w);  // ownership moves; still one temporary
      moved.append_rows("/probes/x", v.data(), 100, 10);
      throw Error("capture interrupted");
    } catch (const Error&) {
    }
  }
  CHECK_FALSE(std::filesystem::exists(path));
  CHECK(std::filesystem::is_empty(dir.path));  // the temporary is gone too

  // finish() replaces an older capture under the same name as a whole.
  { TensorLogWriter w(path); w.write("/old", v); w.finish(); }
  { TensorLogWriter w(path); w.write("/new", v); w.finish(); }
  TensorLogReader r(path);
  CHECK(r.datasets() == std::vector<std::string>{"/new"});
}

TEST_CASE("TensorLogReader turns missing, foreign and truncated files into Errors", "[store][tensor_log]") {
  TempDir dir("broken");
  CHECK_THROWS_WITH(TensorLogReader(dir.file("missing.h5")), Contains("no such file") && Contains("missing.h5"));

  const std::string garbage = dir.file("garbage.h5");
  {
    std::ofstream out(garbage);
    out << "this is not an HDF5 file\n";
  }
  CHECK_THROWS_WITH(TensorLogReader(garbage), "cannot open HDF5 file " + garbage + " (truncated or not HDF5)");

  const std::string path = dir.file("big.h5");
  {
    TensorLogWriter w(path);
    std::vector<float> v(200 * 64);
    std::uint32_t x = 12345;
    for (float& f : v) {
      x = x * 1664525u + 1013904223u;  // incompressible noise keeps the file large
      f = static_cast<float>(x >> 8) / 65536.0f;
    }
    for (int i = 0; i < 4; ++i) w.append_rows("/probes/p" + std::to_string(i), v.data(), 200, 64);
    w.set_attr("/", "config", "{}");
    w.finish();
  }
  std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
  // Either the open or a read must fail with an Error naming the file; it must never crash.
  bool failed = false;
  try {
    TensorLogReader r(path);
    for (const std::string& name : r.datasets()) (void)r.read<float>(name);
  } catch (const Error& e) {
    failed = true;
    const std::string what = e.what();
    CHECK_THAT(what, Contains(path));
    CHECK(what.find('\n') == std::string::npos);
  }
  CHECK(failed);
}

TEST_CASE("h5py reads the tensor log with the same numbers", "[store][tensor_log]") {
  if (std::system("/usr/bin/python3 -c 'import h5py' >/dev/null 2>&1") != 0) {
    WARN("skipped: /usr/bin/python3 with h5py is not available (apt-get install python3-h5py)");
    return;
  }
  TempDir dir("h5py");
  const std::string path = dir.file("cap.h5");
  const Capture c = write_capture(path);

  const std::string script = dir.file("check.py");
  {
    std::ofstream py(script);
    py << R"(import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
out = []
def visit(name, obj):
    if not isinstance(obj, h5py.Dataset):
        return
    shape = "x".join(str(d) for d in obj.shape)
    if obj.dtype.kind in "SOU":
        vals = [v.decode("utf-8") if isinstance(v, bytes) else v for v in obj[()]]
        out.append("/%s str %s %s" % (name, shape, "|".join(vals)))
    else:
        out.append("/%s %s %s %.3f" % (name, obj.dtype, shape, np.asarray(obj[()], dtype=np.float64).sum()))
f.visititems(visit)
out.append("attr run_id %d" % f.attrs["run_id"])
config = f.attrs["config"]  # fixed-width strings: h5py gives bytes
out.append("attr config %s" % (config.decode("utf-8") if isinstance(config, bytes) else config))
out.append("attr layer %d" % f["probes/blocks.0.attn.out"].attrs["layer"])
out.append("chunks %s %s" % (f["probes/blocks.0.attn.out"].chunks, f["probes/blocks.0.attn.out"].compression))
print("\n".join(sorted(out)))
)";
  }
  const std::string got = run_command("/usr/bin/python3 " + script + " " + path + " 2>&1");

  auto num = [](const std::string& name, const char* dtype, const std::string& shape, double s) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.3f", s);
    return name + " " + dtype + " " + shape + " " + buf;
  };
  std::vector<std::string> want = {
      num("/domain", "int32", "401", 301 * 2),
      num("/probes/blocks.0.attn.out", "float32", "401x8", sum(c.probe)),
      "/names/fixed str 3 arxiv|code|wiki",
      "/names/vlen str 3 blocks.0.attn.out||héllo wörld",
      num("/small/empty", "float32", "0", 0),
      num("/small/f32", "float32", "2x3", sum(c.small)),
      num("/small/f64", "float64", "3", sum(c.f64)),
      num("/small/i32", "int32", "2000", sum(c.i32)),
      num("/small/i64", "int64", "4", sum(c.i64)),
      num("/text/offsets", "int64", "2x2", 13),
      num("/tokens", "int32", "401", sum(c.tokens)),
      num("/u8", "uint8", "4", 258),
      "attr run_id 17",
      R"(attr config {"model":"tiny","layers":[0,1]})",
      "attr layer 0",
      "chunks (256, 8) gzip",
  };
  std::sort(want.begin(), want.end());
  std::string expected;
  for (const std::string& line : want) expected += line + "\n";
  CHECK(got == expected);
}
