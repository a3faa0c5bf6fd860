// The torch-free check of safetensors files (core/formats/safetensors_format.h): the tensors must tile
// the data buffer exactly (inserted or duplicated bytes, gaps and overlaps are refused, as the reference
// library refuses them), names are unique, sizes overflow-checked, and NaN/Inf values are refused with
// the tensor's name; and the scan for non-finite floats itself (F32, F16, BF16).
#include <catch2/catch.hpp>

#include <cstring>
#include <limits>

#include "core/common/error.h"
#include "core/formats/float_encoding.h"
#include "core/formats/safetensors_format.h"
#include "tests/tiny_weight_files.h"

using namespace moxlab;
using namespace moxlab::testing;

namespace {

std::string with_header(const std::string& json, const std::string& data) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((json.size() >> (8 * i)) & 0xff);
  return out + json + data;
}

std::string error_of(const std::string& bytes) {
  try {
    parse_safetensors(bytes, "w.safetensors");
  } catch (const Error& e) {
    const std::string what = e.what();
    CHECK(what.find("safetensors file w.safetensors") != std::string::npos);
    CHECK(what.find('\n') == std::string::npos);
    return what;
  }
  return "(accepted)";
}

// Two F32 tensors a [2] and b [1] over 12 data bytes, with the offsets given.
std::string two_tensors(int a_begin, int a_end, int b_begin, int b_end, const std::string& data = std::string(12, '\0')) {
  const std::string json = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[)" + std::to_string(a_begin) + "," +
                           std::to_string(a_end) + R"(]},"b":{"dtype":"F32","shape":[1],"data_offsets":[)" +
                           std::to_string(b_begin) + "," + std::to_string(b_end) + "]}}";
  return with_header(json, data);
}

}  // namespace

TEST_CASE("safetensors format: a valid file gives every tensor in data order", "[safetensors][formats]") {
  const TinyFile f = tiny_hf_safetensors();
  const SafetensorsLayout l = parse_safetensors(f.bytes, "w.safetensors");
  REQUIRE(l.tensors.size() == f.offset.size());
  CHECK(l.metadata.at("format") == "pt");
  std::uint64_t pos = 0;
  for (const auto& e : l.tensors) {
    INFO(e.name);
    CHECK(e.begin == pos);
    CHECK(l.data_start + e.begin == f.offset.at(e.name));
    pos = e.end;
  }
  CHECK(l.data_start + pos == f.bytes.size());
  // Offsets need not follow the order of the header; zero-size tensors take no bytes.
  CHECK(error_of(two_tensors(4, 12, 0, 4)) == "(accepted)");
  const std::string empty = R"({"z":{"dtype":"BF16","shape":[0,7],"data_offsets":[0,0]}})";
  CHECK(error_of(with_header(empty, "")) == "(accepted)");
}

TEST_CASE("safetensors format: inserted, duplicated or appended bytes are refused", "[safetensors][formats]") {
  const TinyFile f = tiny_hf_safetensors();
  const std::size_t at = f.offset.at("model.layers.1.mlp.gate_proj.weight");
  std::string inserted = f.bytes;
  inserted.insert(at + 3, "\x7f");
  std::string duplicated = f.bytes;
  duplicated.insert(at, f.bytes.substr(at, 16));
  for (const std::string& bytes : {inserted, duplicated, f.bytes + std::string(4, '\0')}) {
    const std::string e = error_of(bytes);
    INFO(e);
    CHECK(e.find("more data bytes than its tensors cover") != std::string::npos);
  }
}

TEST_CASE("safetensors format: gaps, overlaps and duplicate names are refused", "[safetensors][formats]") {
  CHECK(error_of(two_tensors(0, 8, 8, 12)) == "(accepted)");
  std::string e = error_of(two_tensors(0, 8, 9, 13, std::string(13, '\0')));
  INFO(e);
  CHECK(e.find("has 1 bytes before tensor b that belong to no tensor") != std::string::npos);
  e = error_of(two_tensors(0, 8, 4, 8));  // b's 4 bytes lie inside a's
  CHECK(e.find("has tensor b overlapping tensor a") != std::string::npos);
  e = error_of(two_tensors(0, 6, 6, 10, std::string(10, '\0')));
  CHECK(e.find("tensor a whose byte range does not match its shape") != std::string::npos);
  // The same name twice: nlohmann would keep the last entry, leaving the first one's bytes unread.
  const std::string twice =
      R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})";
  CHECK(error_of(with_header(twice, std::string(8, '\0'))).find("names tensor a twice") != std::string::npos);
}

TEST_CASE("safetensors format: lying lengths, shapes and offsets are refused without overflow", "[safetensors][formats]") {
  const std::string ok = two_tensors(0, 8, 8, 12);
  CHECK(error_of(ok.substr(0, 5)).find("no header length") != std::string::npos);
  std::string lying = ok;
  lying[7] = '\x7f';  // a header length near 2^63
  CHECK(error_of(lying).find("is truncated (header of") != std::string::npos);
  CHECK(error_of(ok.substr(0, ok.size() - 1)).find("is truncated (tensor b ends at byte 12 of 11)") != std::string::npos);
  CHECK(error_of(with_header("{not json", "")).find("malformed JSON header") != std::string::npos);
  CHECK(error_of(with_header("[1, 2]", "")).find("not a JSON object") != std::string::npos);
  CHECK(error_of(with_header(R"({"x":{"dtype":"I8","shape":[1],"data_offsets":[0,1]}})", "a")).find("unsupported dtype I8") !=
        std::string::npos);
  CHECK(error_of(with_header(R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[8,4]}})", "12345678"))
            .find("end before they begin") != std::string::npos);
  CHECK(error_of(with_header(R"({"x":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", "1234"))
            .find("malformed entry for tensor x") != std::string::npos);
  // 2^32 * 2^32 elements would wrap to 0 bytes in 64-bit arithmetic.
  CHECK(error_of(with_header(R"({"x":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]}})", ""))
            .find("impossible shape") != std::string::npos);
  // A zero dimension makes no bytes, but the other dimensions must still fit a tensor's strides.
  CHECK(error_of(with_header(R"({"x":{"dtype":"F32","shape":[0,4294967296,4294967296],"data_offsets":[0,0]}})", ""))
            .find("impossible shape") != std::string::npos);
  CHECK(error_of(with_header(R"({"__metadata__":{"k":1}})", "")).find("non-string __metadata__") != std::string::npos);
}

TEST_CASE("safetensors format: NaN and Inf values are refused, naming the tensor", "[safetensors][formats]") {
  TinyFile f = tiny_hf_safetensors();
  const std::string name = "model.layers.0.mlp.up_proj.weight";
  for (const std::size_t i : {5, 6, 100})
    plant_float(f.bytes, f.offset.at(name), i, i == 6 ? std::numeric_limits<float>::infinity() : std::numeric_limits<float>::quiet_NaN());
  const std::string e = error_of(f.bytes);
  INFO(e);
  CHECK(e == "safetensors file w.safetensors: tensor " + name + " holds 3 NaN/Inf values (first at element 5 of 128)");

  // BF16 0x7FC0 (NaN) and F16 0xFC00 (-Inf), little-endian.
  const std::string json = R"({"g":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]},"h":{"dtype":"F16","shape":[2],"data_offsets":[4,8]}})";
  CHECK(error_of(with_header(json, std::string("\x80\x3f\xc0\x7f\x00\x3c\x00\x38", 8))).find("tensor g holds 1 NaN/Inf value") !=
        std::string::npos);
  CHECK(error_of(with_header(json, std::string("\x80\x3f\x20\xc0\x00\xfc\x00\x38", 8))).find("tensor h holds 1 NaN/Inf value") !=
        std::string::npos);
  CHECK(error_of(with_header(json, std::string("\x80\x3f\x20\xc0\x00\x3c\x00\x38", 8))) == "(accepted)");
}

TEST_CASE("non-finite scan: exponent bits decide, for each encoding", "[formats]") {
  auto f32 = [](std::initializer_list<float> v) {
    std::string b(v.size() * 4, '\0');
    std::memcpy(&b[0], v.begin(), b.size());
    return b;
  };
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const float big = std::numeric_limits<float>::max(), tiny = std::numeric_limits<float>::denorm_min();
  CHECK(count_nonfinite(f32({0.0f, -0.0f, big, -big, tiny, 1.5f}), FloatEncoding::f32).count == 0);
  const NonFiniteCount c = count_nonfinite(f32({1.0f, inf, -inf, nan, -nan}), FloatEncoding::f32);
  CHECK(c.count == 4);
  CHECK(c.first == 1);
  // F16: 0x7BFF is the largest finite value, 0x7C00 Inf, 0x7E00 NaN; BF16: 0x7F7F finite, 0x7F80 Inf.
  CHECK(count_nonfinite(std::string("\xff\x7b\xff\xfb", 4), FloatEncoding::f16).count == 0);
  CHECK(count_nonfinite(std::string("\x00\x7c\x00\x7e\x01\xfc", 6), FloatEncoding::f16).count == 3);
  CHECK(count_nonfinite(std::string("\x7f\x7f\x7f\xff", 4), FloatEncoding::bf16).count == 0);
  CHECK(count_nonfinite(std::string("\x80\x7f\xc0\xff", 4), FloatEncoding::bf16).count == 2);
  CHECK_NOTHROW(require_finite(f32({1.0f, 2.0f}), FloatEncoding::f32, "t"));
  CHECK_THROWS_WITH(require_finite(f32({1.0f, nan}), FloatEncoding::f32, "file f: tensor t"),
                    "file f: tensor t holds 1 NaN/Inf value (first at element 1 of 2)");
}
