#include "core/data/tokenizers/byte_level_bpe.h"

#include <climits>
#include <memory>

#include <nlohmann/json.hpp>

#include "core/common/atomic_file.h"
#include "core/common/error.h"
#include "core/common/sha256.h"

namespace moxlab {
namespace {

// Out-of-range ids become -1 so the constructor's validation reports them instead of wrapping.
std::int32_t checked_id(const nlohmann::json& v) {
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    return u > INT32_MAX ? -1 : static_cast<std::int32_t>(u);
  }
  const auto x = v.get<std::int64_t>();
  return x < 0 || x > INT32_MAX ? -1 : static_cast<std::int32_t>(x);
}

}  // namespace

ByteLevelBpe::ByteLevelBpe(std::vector<Merge> merges) : ByteBpeCodec("BPE vocabulary"), merges_(std::move(merges)) {
  bytes_.reserve(256 + merges_.size() + 1);
  for (int b = 0; b < 256; ++b) {
    bytes_.emplace_back(1, static_cast<char>(b));
    byte_ids_[b] = b;
  }
  for (std::size_t i = 0; i < merges_.size(); ++i) {
    const auto [a, b] = merges_[i];
    const auto next_id = static_cast<std::int32_t>(256 + i);
    require(a >= 0 && b >= 0 && a < next_id && b < next_id,
            "BPE merge " + std::to_string(i) + " [" + std::to_string(a) + "," + std::to_string(b) +
                "] refers to an id not created before it");
    require(table_.add(a, b, next_id),
            "BPE merge " + std::to_string(i) + " [" + std::to_string(a) + "," + std::to_string(b) + "] is repeated");
    bytes_.push_back(bytes_[a] + bytes_[b]);
  }
  bytes_.emplace_back(kEndOfText);
  identity_ = sha256_hex(to_json());
}

std::string ByteLevelBpe::to_json() const {
  std::string s = "{\"kind\":\"moxlab-bpe\",\"version\":1,\"vocab_size\":" + std::to_string(vocab_size()) +
                  ",\"merges\":[";
  for (std::size_t i = 0; i < merges_.size(); ++i) {
    s += i == 0 ? "\n" : ",\n";
    s += "[" + std::to_string(merges_[i].first) + "," + std::to_string(merges_[i].second) + "]";
  }
  s += "]}\n";
  return s;
}

void ByteLevelBpe::save(const std::string& path) const { write_text_atomically(path, to_json()); }

ByteLevelBpe ByteLevelBpe::load(const std::string& path) {
  const std::string text = read_file(path);  // throws Error naming the path
  const std::string where = "BPE tokenizer file " + path + ": ";
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(where + "not valid JSON (" + std::string(e.what()) + ")");
  }
  require(j.is_object(), where + "not a JSON object");
  require(j.value("kind", std::string()) == "moxlab-bpe", where + "\"kind\" is not \"moxlab-bpe\"");
  require(j.contains("version") && j["version"].is_number_integer() && j["version"].get<int>() == 1,
          where + "unsupported \"version\" (expected 1)");
  require(j.contains("merges") && j["merges"].is_array(), where + "missing \"merges\" array");
  std::vector<Merge> merges;
  merges.reserve(j["merges"].size());
  for (const auto& m : j["merges"]) {
    require(m.is_array() && m.size() == 2 && m[0].is_number_integer() && m[1].is_number_integer(),
            where + "merge " + std::to_string(merges.size()) + " is not a pair of integers");
    merges.emplace_back(checked_id(m[0]), checked_id(m[1]));
  }
  std::unique_ptr<ByteLevelBpe> tok;
  try {
    tok = std::make_unique<ByteLevelBpe>(std::move(merges));
  } catch (const Error& e) {
    throw Error(where + e.what());
  }
  require(j.contains("vocab_size") && j["vocab_size"].is_number_integer() &&
              j["vocab_size"].get<std::int64_t>() == tok->vocab_size(),
          where + "\"vocab_size\" does not equal 257 + number of merges (" + std::to_string(tok->vocab_size()) + ")");
  tok->identity_ = sha256_hex(text);
  return std::move(*tok);
}

}  // namespace moxlab
