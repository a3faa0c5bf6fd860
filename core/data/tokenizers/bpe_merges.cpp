#include "core/data/tokenizers/bpe_merges.h"

#include <algorithm>
#include <queue>
#include <string>

#include "core/data/tokenizers/pretokenizer.h"

namespace moxlab {
namespace {

// A candidate merge of the symbol at `left` with its current right neighbour. Positions are the
// original indices, so ordering by position is ordering by place in the word.
struct Candidate {
  std::int32_t rank;
  std::int32_t left;
  bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : left > o.left; }
};

}  // namespace

bool BpeMergeTable::add(std::int32_t left, std::int32_t right, std::int32_t result) {
  return pairs_.emplace(key(left, right), Merge{static_cast<std::int32_t>(pairs_.size()), result}).second;
}

void BpeMergeTable::apply(std::vector<std::int32_t>& symbols) const {
  const auto n = static_cast<std::int32_t>(symbols.size());
  if (n < 2) return;
  // Doubly linked list over the original positions; a merged-away symbol gets id -1.
  std::vector<std::int32_t> ids = symbols, next(n), prev(n);
  for (std::int32_t i = 0; i < n; ++i) {
    next[i] = i + 1 < n ? i + 1 : -1;
    prev[i] = i - 1;
  }
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> heap;
  auto push = [&](std::int32_t left) {
    if (left < 0 || next[left] < 0) return;
    if (const Merge* m = find(ids[left], ids[next[left]])) heap.push({m->rank, left});
  };
  for (std::int32_t i = 0; i + 1 < n; ++i) push(i);

  std::vector<std::int32_t> round;  // positions holding the current rank, leftmost first
  while (!heap.empty()) {
    const std::int32_t rank = heap.top().rank;
    round.clear();
    while (!heap.empty() && heap.top().rank == rank) {
      round.push_back(heap.top().left);
      heap.pop();
    }
    for (std::int32_t left : round) {
      // Stale when the symbol or its neighbour changed since the candidate was pushed.
      if (ids[left] < 0 || next[left] < 0) continue;
      const std::int32_t right = next[left];
      const Merge* m = find(ids[left], ids[right]);
      if (m == nullptr || m->rank != rank) continue;
      ids[left] = m->result;
      ids[right] = -1;
      next[left] = next[right];
      if (next[right] >= 0) prev[next[right]] = left;
      // New pairs join the heap but are only considered from the next round on, as in GPT-2.
      push(prev[left]);
      push(left);
    }
  }
  symbols.clear();
  for (std::int32_t i = 0; i >= 0; i = next[i]) symbols.push_back(ids[i]);
}

void BpeMergeTable::encode(std::string_view text, const std::array<std::int32_t, 256>& byte_ids,
                           std::vector<std::int32_t>& out) const {
  // Cache values are (offset, length) into one flat id buffer: no allocation per cached chunk.
  std::unordered_map<std::string, std::pair<std::uint32_t, std::uint32_t>> cache;
  std::vector<std::int32_t> flat, word;
  std::string key_buf;
  gpt2_pretokenizer().split(text, [&](std::string_view chunk) {
    key_buf.assign(chunk.data(), chunk.size());
    auto it = cache.find(key_buf);
    if (it == cache.end()) {
      word.clear();
      for (unsigned char c : chunk) word.push_back(byte_ids[c]);
      apply(word);
      auto offset = static_cast<std::uint32_t>(flat.size());
      flat.insert(flat.end(), word.begin(), word.end());
      it = cache.emplace(key_buf, std::make_pair(offset, static_cast<std::uint32_t>(word.size()))).first;
    }
    out.insert(out.end(), flat.begin() + it->second.first, flat.begin() + it->second.first + it->second.second);
  });
}

}  // namespace moxlab
