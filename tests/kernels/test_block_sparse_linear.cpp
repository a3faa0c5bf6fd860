// MoHD's block-sparse products (kernels/sparse/block_sparse_linear.h): only the active blocks read and
// written, by hand; a selection in token order passes tensors through.
#include "kernels/sparse/block_sparse_linear.h"
#include "kernels/sparse/monarch_mix.h"
#include "tests/torch_catch.h"

using namespace moxlab;

TEST_CASE("Block-sparse input and output maps read and write only active blocks (hand-computed)", "[kernels]") {
  // d = 4 in N = 2 blocks of 2; token 0 uses block 0, token 1 block 1; nothing shared.
  const auto x = torch::tensor({{1.0f, 2.0f, 3.0f, 4.0f}, {5.0f, 6.0f, 7.0f, 8.0f}});
  const auto active = torch::tensor({{true, false}, {false, true}});
  const auto s = BlockSelection::from_mask(active, 0);
  // x_s W^T with W = (1, 1, 1, 1): token 0 reads dims 0-1 (1 + 2), token 1 dims 2-3 (7 + 8).
  CHECK(block_sparse_input_linear(x, torch::ones({1, 4}), s).equal(torch::tensor({{3.0f}, {15.0f}})));
  CHECK(block_sparse_input_linear(x, torch::ones({1, 4}), s, torch::tensor({0.5f})).equal(torch::tensor({{3.5f}, {15.5f}})));
  // Output map W = (1, 2, 3, 4)^T on h = (1), (2), block weights (0.5, 9) and (9, 2): token 0 writes
  // 0.5 * (1, 2) into block 0, token 1 writes 2 * 2 * (3, 4) into block 1; the weight of an unused block is ignored.
  const auto y = block_sparse_output_linear(torch::tensor({{1.0f}, {2.0f}}), torch::tensor({{1.0f}, {2.0f}, {3.0f}, {4.0f}}), s,
                                            torch::tensor({{0.5f, 9.0f}, {9.0f, 2.0f}}));
  CHECK(y.equal(torch::tensor({{0.5f, 1.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 12.0f, 16.0f}})));
  // The one-pass inference form (grouped: the sets {0} and {1}, rows in token order here) gives the same,
  // and with Monarch's second factor b2[c] = ((1, 1), (0, 2)) for both columns c (groups of 2):
  // y[0, c] = x[0, c] + x[1, c], y[1, c] = 2 x[1, c] -> token 0 (0.5, 1, 0, 0), token 1 (12, 16, 24, 32).
  REQUIRE(s.grouped);
  torch::NoGradGuard ng;
  const auto h = torch::tensor({{1.0f}, {2.0f}}), w = torch::tensor({{1.0f}, {2.0f}, {3.0f}, {4.0f}});
  const auto scale = torch::tensor({{0.5f, 9.0f}, {9.0f, 2.0f}});
  CHECK(block_sparse_output_to_tokens(h, pack_weight_blocks(w, 2), 4, s, scale).equal(y));
  const auto b2 = torch::tensor({{1.0f, 1.0f}, {0.0f, 2.0f}}).expand({2, 2, 2}).contiguous();
  CHECK(block_sparse_output_to_tokens(h, pack_weight_blocks(w, 2), 4, s, scale, monarch_mix_weights(b2)).equal(torch::tensor({{0.5f, 1.0f, 0.0f, 0.0f}, {12.0f, 16.0f, 24.0f, 32.0f}})));
  // A shared block must be active for every token.
  CHECK_THROWS(BlockSelection::from_mask(active, 1));
}

TEST_CASE("A grouped selection whose rows are its tokens in order passes tensors through to_rows and from_rows", "[kernels]") {
  const auto x = torch::arange(12, torch::kFloat).view({3, 4});
  // One token (a decode step), and tokens whose sets of blocks are already in sorted order: identity.
  const auto one = BlockSelection::from_mask(torch::tensor({true, false, true}).view({1, 3}), 1, "grouped");
  CHECK(one.identity);
  CHECK(one.to_rows(x.narrow(0, 0, 1)).data_ptr() == x.data_ptr());
  const auto sorted = BlockSelection::from_mask(torch::tensor({true, true, false, true, true, false, true, false, true}).view({3, 3}), 1, "grouped");
  CHECK(sorted.identity);  // keys 1, 1, 2 (bit i: routed block i)
  CHECK(sorted.from_rows(x).data_ptr() == x.data_ptr());
  // Out of order: rows are a permutation, and from_rows undoes to_rows.
  const auto mixed = BlockSelection::from_mask(torch::tensor({true, false, true, true, true, false, true, true, false}).view({3, 3}), 1, "grouped");
  CHECK_FALSE(mixed.identity);
  CHECK(torch::equal(mixed.to_rows(x), x.index_select(0, torch::tensor({1, 2, 0}))));
  CHECK(torch::equal(mixed.from_rows(mixed.to_rows(x)), x));
}

