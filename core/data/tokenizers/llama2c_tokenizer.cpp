#include "core/data/tokenizers/llama2c_tokenizer.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <queue>

#include "core/common/atomic_file.h"
#include "core/common/error.h"
#include "core/common/sha256.h"

namespace moxlab {
namespace {

std::uint64_t pair_key(std::int32_t a, std::int32_t b) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(a)) << 32) | static_cast<std::uint32_t>(b);
}

std::string byte_piece(int b) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "<0x%02X>", b);
  return buf;
}

// run.c starts its search from best_score = -1e10, so a merge scoring at or below that never happens.
constexpr float kNoMergeScore = -1e10f;

struct Candidate {
  float score;
  std::int32_t left, right, result;
  // Max-heap order: higher score first, then the leftmost position (run.c keeps the first maximum).
  bool operator<(const Candidate& o) const { return score != o.score ? score < o.score : left > o.left; }
};

}  // namespace

Llama2cTokenizer::Llama2cTokenizer(const std::string& path) {
  require(file_exists(path), "llama2.c tokenizer not found: " + path);
  const std::string data = read_file(path);
  const std::string where = "llama2.c tokenizer " + path + ": ";
  std::size_t pos = 0;
  auto read_i32 = [&](const char* what) {
    require(pos + 4 <= data.size(), where + "truncated (reading " + what + " at byte " + std::to_string(pos) + ")");
    std::int32_t v;
    std::memcpy(&v, data.data() + pos, 4);
    pos += 4;
    return v;
  };
  max_token_length_ = read_i32("max_token_length");
  require(max_token_length_ > 0 && max_token_length_ <= (1 << 16),
          where + "implausible max_token_length " + std::to_string(max_token_length_));
  while (pos < data.size()) {
    const std::string token = "token " + std::to_string(pieces_.size());
    float score;
    require(pos + 4 <= data.size(), where + "truncated in the score of " + token);
    std::memcpy(&score, data.data() + pos, 4);
    pos += 4;
    require(!std::isnan(score), where + "score of " + token + " is NaN");
    const std::int32_t len = read_i32("a token length");
    require(len >= 0 && len <= max_token_length_,
            where + token + " has length " + std::to_string(len) + " outside 0..max_token_length");
    require(pos + static_cast<std::size_t>(len) <= data.size(), where + "truncated in the bytes of " + token);
    pieces_.emplace_back(data, pos, len);
    scores_.push_back(score);
    pos += len;
  }
  require(pieces_.size() >= 259, where + "only " + std::to_string(pieces_.size()) +
                                     " tokens (needs <unk>, BOS, EOS and 256 byte pieces): truncated?");
  for (int b = 0; b < 256; ++b)
    require(pieces_[kFirstByte + b] == byte_piece(b),
            where + "token " + std::to_string(kFirstByte + b) + " is not the byte piece " + byte_piece(b));

  for (std::int32_t id = 0; id < vocab_size(); ++id) lookup_.emplace(pieces_[id], id);
  if (auto it = lookup_.find(" "); it != lookup_.end()) space_id_ = it->second;
  // Every way of writing a token as the concatenation of two tokens is a merge rule. Control and
  // byte pieces are never merge results: their strings are markup, not text, and producing one from
  // literal text such as "<0x41>" would break round trips (no real vocabulary allows it anyway).
  for (std::int32_t id = kFirstByte + 256; id < vocab_size(); ++id) {
    const std::string& p = pieces_[id];
    for (std::size_t k = 1; k < p.size(); ++k) {
      auto l = lookup_.find(p.substr(0, k));
      if (l == lookup_.end()) continue;
      auto r = lookup_.find(p.substr(k));
      if (r == lookup_.end()) continue;
      if (lookup_.at(p) == id) merges_.emplace(pair_key(l->second, r->second), id);
    }
  }
  split_at_spaces_ = true;
  for (const std::string& p : pieces_)
    for (std::size_t k = 0; k + 1 < p.size(); ++k)
      if (p[k] != ' ' && p[k + 1] == ' ') split_at_spaces_ = false;
  identity_ = sha256_hex(data);
}

std::int32_t Llama2cTokenizer::find_merge(std::int32_t left, std::int32_t right) const {
  auto it = merges_.find(pair_key(left, right));
  if (it == merges_.end() || !(scores_[it->second] > kNoMergeScore)) return -1;
  return it->second;
}

std::vector<std::int32_t> Llama2cTokenizer::encode(std::string_view text) const {
  std::vector<std::int32_t> out;
  if (text.empty()) return out;
  out.reserve(text.size() / 2);
  // The dummy prefix token is the vocabulary's " ", so encoding " " + text gives run.c's sequence.
  std::string s;
  s.reserve(text.size() + 1);
  if (space_id_ >= 0) s += ' ';
  s.append(text);
  if (!split_at_spaces_) {
    encode_segment(s, out);
    return out;
  }
  // No token spans a non-space byte followed by a space, so cutting before each space that follows
  // a non-space cannot change the result: the greedy merges of separate segments never interact.
  // Segments repeat (" the"), so a per-call cache does most of the work.
  std::unordered_map<std::string_view, std::pair<std::uint32_t, std::uint32_t>> cache;
  std::vector<std::int32_t> flat, seg_ids;
  std::size_t begin = 0;
  for (std::size_t i = 1; i <= s.size(); ++i) {
    if (i < s.size() && !(s[i] == ' ' && s[i - 1] != ' ')) continue;
    const std::string_view seg(s.data() + begin, i - begin);
    auto it = cache.find(seg);
    if (it == cache.end()) {
      seg_ids.clear();
      encode_segment(seg, seg_ids);
      const auto offset = static_cast<std::uint32_t>(flat.size());
      flat.insert(flat.end(), seg_ids.begin(), seg_ids.end());
      it = cache.emplace(seg, std::make_pair(offset, static_cast<std::uint32_t>(seg_ids.size()))).first;
    }
    out.insert(out.end(), flat.begin() + it->second.first, flat.begin() + it->second.first + it->second.second);
    begin = i;
  }
  return out;
}

void Llama2cTokenizer::encode_segment(std::string_view text, std::vector<std::int32_t>& out) const {
  std::vector<std::int32_t> ids;
  ids.reserve(text.size());
  // Code points as run.c groups them: a lead byte plus the continuation bytes after it, at most 4
  // bytes; a stray continuation byte starts a group of its own.
  const auto is_cont = [](unsigned char c) { return (c & 0xC0) == 0x80; };
  std::string cp;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (!is_cont(c)) cp.clear();
    cp += static_cast<char>(c);
    if (i + 1 < text.size() && is_cont(static_cast<unsigned char>(text[i + 1])) && cp.size() < 4) continue;
    auto it = lookup_.find(cp);
    if (it != lookup_.end()) {
      ids.push_back(it->second);
    } else {
      for (unsigned char b : cp) ids.push_back(kFirstByte + b);  // byte fallback
    }
    cp.clear();
  }

  // Greedy merging on a linked list with a heap of candidate pairs (stale ones skipped on pop).
  const auto n = static_cast<std::int32_t>(ids.size());
  std::vector<std::int32_t> next(n), prev(n);
  for (std::int32_t i = 0; i < n; ++i) {
    next[i] = i + 1 < n ? i + 1 : -1;
    prev[i] = i - 1;
  }
  std::priority_queue<Candidate> heap;
  auto push = [&](std::int32_t left) {
    if (left < 0 || next[left] < 0) return;
    const std::int32_t m = find_merge(ids[left], ids[next[left]]);
    if (m >= 0) heap.push({scores_[m], left, next[left], m});
  };
  for (std::int32_t i = 0; i + 1 < n; ++i) push(i);
  while (!heap.empty()) {
    const Candidate c = heap.top();
    heap.pop();
    if (ids[c.left] < 0 || next[c.left] != c.right || find_merge(ids[c.left], ids[c.right]) != c.result) continue;
    ids[c.left] = c.result;
    ids[c.right] = -1;
    next[c.left] = next[c.right];
    if (next[c.right] >= 0) prev[next[c.right]] = c.left;
    push(prev[c.left]);
    push(c.left);
  }
  for (std::int32_t i = 0; i >= 0 && i < n; i = next[i]) out.push_back(ids[i]);
}

std::string Llama2cTokenizer::token_bytes(std::int32_t id, std::int32_t prev) const {
  require(id >= 0 && id < vocab_size(), "token id " + std::to_string(id) +
                                            " out of range for llama2.c vocabulary of " +
                                            std::to_string(vocab_size()));
  if (id < kFirstByte) return std::string();
  if (id < kFirstByte + 256) return std::string(1, static_cast<char>(id - kFirstByte));
  const std::string& p = pieces_[id];
  // run.c drops the space a piece starts with right after BOS; text start counts as after BOS
  // when the encoder adds the dummy prefix.
  if ((prev == kBos || (prev < 0 && space_id_ >= 0)) && !p.empty() && p[0] == ' ') return p.substr(1);
  return p;
}

std::string Llama2cTokenizer::decode(const std::vector<std::int32_t>& ids) const {
  std::string s;
  for (std::size_t i = 0; i < ids.size(); ++i) s += token_bytes(ids[i], i == 0 ? -1 : ids[i - 1]);
  return s;
}

}  // namespace moxlab
