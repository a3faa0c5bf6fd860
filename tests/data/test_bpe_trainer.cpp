// BPE trainer: hand-computed merges on tiny corpora, determinism, agreement with a naive
// full-recount trainer on real text, and (hidden, [.benchmark]) training speed on ~10 MB.
#include <catch2/catch.hpp>

#include <chrono>
#include <map>

#include "core/common/error.h"
#include "core/data/tokenizers/bpe_trainer.h"
#include "core/data/tokenizers/pretokenizer.h"
#include "tests/data/tokenizer_test_support.h"

using moxlab::BpeTrainer;
using moxlab::BpeTrainOptions;
using moxlab::ByteLevelBpe;
using Merges = std::vector<ByteLevelBpe::Merge>;

namespace {

// Reference trainer written the obvious way: recount every pair of every word after each merge.
// Quadratic, but simple enough to trust; the fast trainer must produce the same merge list.
Merges naive_merges(const std::vector<std::string>& texts, int n_merges, std::int64_t min_count) {
  std::map<std::string, std::int64_t> counts;
  for (const auto& t : texts)
    for (auto c : moxlab::gpt2_pretokenizer().split(t)) ++counts[std::string(c)];
  std::vector<std::pair<std::vector<int>, std::int64_t>> words;
  for (const auto& [w, c] : counts) words.push_back({std::vector<int>(w.begin(), w.end()), c});
  for (auto& w : words)
    for (auto& x : w.first) x = static_cast<unsigned char>(x);
  Merges merges;
  for (int m = 0; m < n_merges; ++m) {
    std::map<std::pair<int, int>, std::int64_t> pairs;  // ordered: ties go to the smallest pair
    for (const auto& [s, c] : words)
      for (std::size_t i = 0; i + 1 < s.size(); ++i) pairs[{s[i], s[i + 1]}] += c;
    std::pair<int, int> best{-1, -1};
    std::int64_t best_count = 0;
    for (const auto& [p, c] : pairs)
      if (c > best_count) best = p, best_count = c;
    if (best_count < min_count) break;
    const int id = 256 + m;
    merges.emplace_back(best.first, best.second);
    for (auto& [s, c] : words) {
      std::vector<int> out;
      for (std::size_t i = 0; i < s.size(); ++i) {
        if (i + 1 < s.size() && s[i] == best.first && s[i + 1] == best.second) {
          out.push_back(id);
          ++i;
        } else {
          out.push_back(s[i]);
        }
      }
      s = out;
    }
  }
  return merges;
}

Merges learn(const std::vector<std::string>& texts, std::int32_t vocab_size, std::int64_t min_count) {
  BpeTrainer t;
  for (const auto& s : texts) t.add_text(s);
  BpeTrainOptions o;
  o.vocab_size = vocab_size;
  o.min_pair_count = min_count;
  return t.learn_merges(o);
}

}  // namespace

TEST_CASE("BPE trainer: the classic aaabdaaabac example, merges computed by hand", "[tokenizer][bpe][trainer]") {
  // a=97 b=98 c=99 d=100. One word. Pair counts (overlaps count): aa 4, ab 2, bd/da/ba/ac 1.
  //  1. (97,97)->256:  256 a b d 256 a b a c     (256,97) 2 and (97,98) 2 tie -> smaller pair (97,98)
  //  2. (97,98)->257:  256 257 d 256 257 a c     (256,257) 2
  //  3. (256,257)->258: 258 d 258 a c            all pairs 1 -> smallest is (97,99)
  //  4. (97,99)->259:  258 d 258 259             smallest of (258,100) (100,258) (258,259)
  //  5. (100,258)->260: 258 260 259              (258,260) < (260,259)
  //  6. (258,260)->261: 261 259
  //  7. (261,259)->262: one symbol, nothing left to merge.
  const std::vector<std::string> corpus{"aaabdaaabac"};
  CHECK(learn(corpus, 1000, 2) == Merges{{97, 97}, {97, 98}, {256, 257}});
  CHECK(learn(corpus, 1000, 1) ==
        Merges{{97, 97}, {97, 98}, {256, 257}, {97, 99}, {100, 258}, {258, 260}, {261, 259}});
  CHECK(learn(corpus, 256 + 2 + 1, 1) == Merges{{97, 97}, {97, 98}});

  BpeTrainer t;
  t.add_text("aaabdaaabac");
  const ByteLevelBpe bpe = t.train(256 + 3 + 1);
  CHECK(bpe.vocab_size() == 260);
  CHECK(bpe.eos_id() == 259);
  CHECK(bpe.token_bytes(258, -1) == "aaab");
  CHECK(bpe.encode("aaabdaaabac") == std::vector<std::int32_t>{258, 100, 258, 97, 99});
  CHECK(bpe.encode(" aaab") == std::vector<std::int32_t>{32, 258});  // " aaab" is one chunk; no merge with space
}

TEST_CASE("BPE trainer: counts are weighted by word frequency across texts", "[tokenizer][bpe][trainer]") {
  // Chunks: "ab" x2, " ab", " cd", "cd" -> pair counts ab 3, cd 2, " a" 1, " c" 1.
  const std::vector<std::string> corpus{"ab ab", "ab cd", "cd"};
  CHECK(learn(corpus, 1000, 2) == Merges{{97, 98}, {99, 100}});
  CHECK(learn(corpus, 1000, 1) == Merges{{97, 98}, {99, 100}, {32, 256}, {32, 257}});
  // The same texts in another order give the same merges.
  CHECK(learn({"cd", "ab cd", "ab ab"}, 1000, 1) == learn(corpus, 1000, 1));
}

TEST_CASE("BPE trainer: overlapping runs are merged left to right", "[tokenizer][bpe][trainer]") {
  // "aaaaa": aa counted 4 times; merging gives 256 256 a, then (256,256) and (256,97) both count 1:
  // the smaller pair (256,97) wins -> 256 257 -> (256,257).
  CHECK(learn({"aaaaa"}, 1000, 1) == Merges{{97, 97}, {256, 97}, {256, 257}});
  CHECK(learn({"aaaaa"}, 1000, 2) == Merges{{97, 97}});
}

TEST_CASE("BPE trainer matches a naive full-recount trainer on real text", "[tokenizer][bpe][trainer]") {
  std::vector<std::string> texts;
  for (const auto& [name, text] : moxlab::test::real_texts(30000)) texts.push_back(text);
  REQUIRE(!texts.empty());
  const int n_merges = 300;
  const Merges fast = learn(texts, 257 + n_merges, 2);
  const Merges naive = naive_merges(texts, n_merges, 2);
  REQUIRE(fast.size() == naive.size());
  for (std::size_t i = 0; i < fast.size(); ++i) {
    INFO("merge " << i);
    REQUIRE(fast[i] == naive[i]);
  }
}

TEST_CASE("BPE trainer: streaming API, limits and errors", "[tokenizer][bpe][trainer]") {
  const std::vector<std::string> texts{"the cat sat on the mat", "the dog sat on the log"};
  std::size_t i = 0;
  const ByteLevelBpe a = moxlab::train_byte_level_bpe(
      [&](std::string& out) {
        if (i == texts.size()) return false;
        out = texts[i++];
        return true;
      },
      300);
  const ByteLevelBpe b = moxlab::train_byte_level_bpe(texts, 300);
  CHECK(a.merges() == b.merges());
  CHECK(a.identity() == b.identity());
  CHECK(!a.merges().empty());
  CHECK(a.vocab_size() <= 300);
  CHECK_THROWS_AS(BpeTrainer().train(256), moxlab::Error);
  CHECK(BpeTrainer().train(4096).vocab_size() == 257);  // nothing to learn from no text
}

TEST_CASE("BPE trainer speed: ~10 MB of English to vocab 4096", "[.benchmark][tokenizer][bpe][trainer]") {
  // Real English prose from the shared corpora, repeated books/brown files up to ~10 MB.
  std::vector<std::string> texts;
  std::size_t total = 0;
  for (const char* rel : {"corpora/books/moby_dick.txt", "corpora/books/tiny_shakespeare_input.txt",
                          "corpora/brown/news.txt", "corpora/brown/fiction.txt", "corpora/brown/learned.txt",
                          "corpora/brown/government.txt", "corpora/brown/belles_lettres.txt",
                          "corpora/brown/lore.txt", "corpora/brown/religion.txt", "corpora/brown/hobbies.txt",
                          "corpora/brown/editorial.txt", "corpora/brown/reviews.txt", "corpora/brown/adventure.txt",
                          "corpora/brown/mystery.txt", "corpora/brown/romance.txt", "corpora/brown/humor.txt",
                          "corpora/brown/science_fiction.txt", "corpora/instructions/dolly_hhrlhf_train_small.jsonl",
                          "corpora/stackexchange/beer.stackexchange.Posts.xml"}) {
    const std::string path = moxlab::test::shared_file(rel);
    if (path.empty()) return;
    texts.push_back(moxlab::test::read_prefix(path));
    total += texts.back().size();
  }
  const auto t0 = std::chrono::steady_clock::now();
  BpeTrainer trainer;
  for (const auto& t : texts) trainer.add_text(t);
  const auto t1 = std::chrono::steady_clock::now();
  const ByteLevelBpe bpe = trainer.train(4096);
  const auto t2 = std::chrono::steady_clock::now();
  const double count_s = std::chrono::duration<double>(t1 - t0).count();
  const double merge_s = std::chrono::duration<double>(t2 - t1).count();
  WARN("BPE training on " << total / 1e6 << " MB (" << trainer.unique_words() << " unique words): counting "
                          << count_s << " s, " << bpe.merges().size() << " merges " << merge_s << " s");
  CHECK(bpe.vocab_size() == 4096);
  CHECK(count_s + merge_s < 60);

  const auto t3 = std::chrono::steady_clock::now();
  std::size_t n_ids = 0;
  for (int rep = 0; rep < 2; ++rep)
    for (const auto& t : texts) n_ids += bpe.encode(t).size();
  const double enc_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t3).count();
  WARN("ByteLevelBpe encode of " << 2 * total / 1e6 << " MB: " << enc_s << " s, " << n_ids << " ids ("
                                 << 2 * total / 1e6 / enc_s << " MB/s)");
  CHECK(enc_s < 60);
}
