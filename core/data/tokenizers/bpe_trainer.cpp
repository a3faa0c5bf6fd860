#include "core/data/tokenizers/bpe_trainer.h"

#include <algorithm>
#include <queue>

#include "core/common/error.h"
#include "core/data/tokenizers/pretokenizer.h"

namespace moxlab {
namespace {

using PairKey = std::uint64_t;  // left id in the high half, right id in the low half

PairKey pair_key(std::int32_t a, std::int32_t b) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(a)) << 32) | static_cast<std::uint32_t>(b);
}
std::int32_t left_of(PairKey k) { return static_cast<std::int32_t>(k >> 32); }
std::int32_t right_of(PairKey k) { return static_cast<std::int32_t>(k & 0xffffffffu); }

struct HeapEntry {
  std::int64_t count;
  PairKey pair;
  // std::priority_queue pops the largest: higher count first, then the smaller pair key, which
  // orders by left id then right id.
  bool operator<(const HeapEntry& o) const { return count != o.count ? count < o.count : pair > o.pair; }
};

// All mutable training state; lives only for one learn_merges() call.
struct PairStats {
  std::vector<std::vector<std::int32_t>> words;
  std::vector<std::int64_t> freq;
  std::unordered_map<PairKey, std::int64_t> count;
  std::unordered_map<PairKey, std::vector<std::int32_t>> where;  // may hold stale or repeated words
  std::priority_queue<HeapEntry> heap;

  void add(PairKey p, std::int64_t c) { count[p] += c; }

  // Rewrites word w with every left-to-right occurrence of (a, b) replaced by id, adjusting only
  // the pair counts that change. Returns false if the word no longer contains the pair.
  bool merge_word(std::int32_t w, std::int32_t a, std::int32_t b, std::int32_t id,
                  std::vector<PairKey>& created) {
    std::vector<std::int32_t>& s = words[w];
    const std::int64_t c = freq[w];
    const std::size_t n = s.size();
    std::vector<std::int32_t> out;
    out.reserve(n);
    std::size_t last_merge = SIZE_MAX;  // position of the previous merge, to not drop a pair twice
    bool merged = false;
    for (std::size_t i = 0; i < n;) {
      if (i + 1 < n && s[i] == a && s[i + 1] == b) {
        add(pair_key(a, b), -c);
        // The pair on the left was already dropped if the previous merge ended right here.
        if (i > 0 && !(last_merge != SIZE_MAX && last_merge + 2 == i)) add(pair_key(s[i - 1], a), -c);
        if (i + 2 < n) add(pair_key(b, s[i + 2]), -c);
        last_merge = i;
        out.push_back(id);
        i += 2;
        merged = true;
      } else {
        out.push_back(s[i]);
        i += 1;
      }
    }
    if (!merged) return false;
    // New pairs: those that touch the new id. (id, id) is counted once, from its right member.
    for (std::size_t j = 0; j < out.size(); ++j) {
      if (out[j] != id) continue;
      if (j > 0) {
        const PairKey p = pair_key(out[j - 1], id);
        add(p, c);
        where[p].push_back(w);
        created.push_back(p);
      }
      if (j + 1 < out.size() && out[j + 1] != id) {
        const PairKey p = pair_key(id, out[j + 1]);
        add(p, c);
        where[p].push_back(w);
        created.push_back(p);
      }
    }
    s = std::move(out);
    return true;
  }
};

}  // namespace

void BpeTrainer::add_text(std::string_view text) {
  std::string key;
  gpt2_pretokenizer().split(text, [&](std::string_view chunk) {
    key.assign(chunk.data(), chunk.size());
    ++word_counts_[key];
  });
}

std::vector<ByteLevelBpe::Merge> BpeTrainer::learn_merges(const BpeTrainOptions& options) const {
  require(options.vocab_size >= 257, "BPE vocab_size must be at least 257 (256 bytes + <|endoftext|>), got " +
                                         std::to_string(options.vocab_size));
  const std::int32_t max_merges = options.vocab_size - 257;
  const std::int64_t min_count = std::max<std::int64_t>(1, options.min_pair_count);

  PairStats st;
  // Sorted words make the run independent of hash-map iteration order (the result is already
  // order-independent thanks to the total tie-break; this also makes the timing reproducible).
  std::vector<std::pair<std::string_view, std::int64_t>> sorted(word_counts_.begin(), word_counts_.end());
  std::sort(sorted.begin(), sorted.end());
  st.words.reserve(sorted.size());
  st.freq.reserve(sorted.size());
  for (const auto& [word, c] : sorted) {
    if (word.size() < 2) continue;  // a single byte never takes part in a merge
    const auto w = static_cast<std::int32_t>(st.words.size());
    st.words.emplace_back(word.begin(), word.end());
    for (auto& x : st.words.back()) x = static_cast<unsigned char>(x);
    st.freq.push_back(c);
    const auto& s = st.words.back();
    for (std::size_t i = 0; i + 1 < s.size(); ++i) {
      const PairKey p = pair_key(s[i], s[i + 1]);
      st.add(p, c);
      auto& list = st.where[p];
      if (list.empty() || list.back() != w) list.push_back(w);
    }
  }
  for (const auto& [p, c] : st.count) st.heap.push({c, p});

  std::vector<ByteLevelBpe::Merge> merges;
  std::vector<std::int32_t> seen(st.words.size(), -1);  // last merge that visited each word
  std::vector<PairKey> created;
  while (static_cast<std::int32_t>(merges.size()) < max_merges && !st.heap.empty()) {
    const HeapEntry top = st.heap.top();
    st.heap.pop();
    auto it = st.count.find(top.pair);
    const std::int64_t current = it == st.count.end() ? 0 : it->second;
    if (current != top.count) {  // stale entry: counts only fall, so re-queue the true value
      if (current >= min_count) st.heap.push({current, top.pair});
      continue;
    }
    if (current < min_count) break;

    const std::int32_t a = left_of(top.pair), b = right_of(top.pair);
    const auto id = static_cast<std::int32_t>(256 + merges.size());
    const auto merge_index = static_cast<std::int32_t>(merges.size());
    merges.emplace_back(a, b);
    std::vector<std::int32_t> affected = std::move(st.where[top.pair]);
    st.where.erase(top.pair);
    created.clear();
    for (std::int32_t w : affected) {
      if (seen[w] == merge_index) continue;
      seen[w] = merge_index;
      st.merge_word(w, a, b, id, created);
    }
    st.count.erase(top.pair);
    std::sort(created.begin(), created.end());
    created.erase(std::unique(created.begin(), created.end()), created.end());
    for (PairKey p : created) {
      auto& list = st.where[p];  // the same word may have been appended more than once
      list.erase(std::unique(list.begin(), list.end()), list.end());
      const std::int64_t c = st.count[p];
      if (c >= min_count) st.heap.push({c, p});
    }
  }
  return merges;
}

ByteLevelBpe train_byte_level_bpe(const std::vector<std::string>& texts, std::int32_t vocab_size) {
  BpeTrainer trainer;
  for (const auto& t : texts) trainer.add_text(t);
  return trainer.train(vocab_size);
}

ByteLevelBpe train_byte_level_bpe(const std::function<bool(std::string&)>& next_text, std::int32_t vocab_size) {
  BpeTrainer trainer;
  std::string text;
  while (next_text(text)) trainer.add_text(text);
  return trainer.train(vocab_size);
}

}  // namespace moxlab
