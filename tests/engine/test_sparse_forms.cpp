// The engine's sparse forms (core/engine/mohd_sparse.h, moh_plan.h and the kernels/sparse they run)
// against the model's math they replace: hand-computed block-sparse maps, the Monarch fold, head-gathered
// attention, and whole MoHD / MoH models whose engine forward in every form (and, with the training forms,
// training gradients) equals the model's forward on random and real inputs (stories260K's weights on
// Shakespeare text).
#include "tests/torch_catch.h"

#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "core/data/tokenizers/tokenizer.h"
#include "core/io/llama2c_import.h"
#include "core/engine/inference_plan.h"
#include "core/engine/kv_cache.h"
#include "core/engine/training_forms.h"
#include "core/model/mohd/monarch.h"
#include "core/model/rope.h"
#include "core/model/transformer.h"
#include "core/config/config.h"
#include "kernels/fused/attention.h"
#include "kernels/sparse/block_sparse_linear.h"
#include "kernels/sparse/head_gathered_attention.h"
#include "kernels/sparse/monarch_mix.h"
#include "tests/model/mohd_support.h"
#include "tests/model/tiny_model.h"

using namespace moxlab;
using moxlab::testing::mohd;

namespace {

bool close(const torch::Tensor& a, const torch::Tensor& b, double rtol = 1e-4, double atol = 1e-5) {
  return torch::allclose(a, b, rtol, atol);
}

ModelOptions small_options() {
  ModelOptions o = test::tiny_model(48);
  o.max_seq_len = 32;
  return o;
}

// The logits of the model's math (core/model), which every engine form must equal.
torch::Tensor math_logits(Transformer& m, const torch::Tensor& tokens) {
  torch::NoGradGuard ng;
  return m.forward(tokens);
}

// The engine's logits in form k.
torch::Tensor logits_with(InferencePlan& plan, const torch::Tensor& tokens, Form k) {
  ExecOptions e;
  e.form = k;
  return plan.forward(tokens, e);
}

// Inference of o (weights from seed, then random biases if asked): the sparse and the automatic forms give
// the reference logits.
void check_inference_forms(const ModelOptions& o, std::uint64_t seed, const torch::Tensor& tokens, bool random_biases = false) {
  Transformer m(o);
  m.init_weights(seed);
  m.eval();
  torch::NoGradGuard ng;
  if (random_biases)  // the initialisation zeroes them
    for (auto& p : m.named_parameters())
      if (p.key().size() > 5 && p.key().compare(p.key().size() - 5, 5, ".bias") == 0) p.value().uniform_(-0.5, 0.5);
  InferencePlan plan(m);
  const auto ref = math_logits(m, tokens);
  CHECK(close(logits_with(plan, tokens, Form::reference), ref));
  CHECK(close(logits_with(plan, tokens, Form::sparse), ref));
  CHECK(close(logits_with(plan, tokens, Form::automatic), ref));  // MoHD: sparse where grouped; MoH: fused
  {  // Two threads over 96 rows: the row-parallel regions split them (grad mode is thread-local: the
     // worker must not record the parameters' graph).
    const auto many = torch::randint(0, o.vocab_size, {4, 24}, torch::kLong);
    const int before = at::get_num_threads();
    at::set_num_threads(2);
    const auto sparse2 = logits_with(plan, many, Form::sparse);
    at::set_num_threads(before);
    CHECK(close(sparse2, math_logits(m, many)));
  }
  const auto one = tokens.narrow(0, 0, 1).narrow(1, 0, 1);      // a single token
  CHECK(close(logits_with(plan, one, Form::sparse), math_logits(m, one)));
}

// Parameter gradients of one LM-loss backward pass computed in the training forms of form k.
std::map<std::string, torch::Tensor> gradients(Transformer& m, const torch::Tensor& tokens, Form k) {
  m.zero_grad();
  Analysis an;
  const TrainingForms forms = training_forms(m.blocks, m.options(), k);
  auto logits = m.forward(tokens, an, forms.pass());
  (Transformer::lm_loss(logits.narrow(1, 0, tokens.size(1) - 1), tokens.narrow(1, 1, tokens.size(1) - 1)) +
   an.total_aux_loss())
      .backward();
  std::map<std::string, torch::Tensor> g;
  for (const auto& p : m.named_parameters())
    if (p.value().grad().defined()) g[p.key()] = p.value().grad().clone();
  return g;
}

}  // namespace

TEST_CASE("Block-sparse maps equal the masked dense matrices on random selections", "[kernels]") {
  torch::manual_seed(3);
  const int M = 37, N = 6, shared = 2, d = 48, b = d / N;
  auto active = torch::rand({M, N}) < 0.4;
  active.narrow(1, 0, shared).fill_(true);
  active[5].fill_(true);                    // a token using every block
  active[6].narrow(0, shared, N - shared).fill_(false);  // and one using only the shared blocks
  const auto mask = active.to(torch::kFloat).repeat_interleave(b, 1);
  const auto x = torch::randn({M, d}), w_in = torch::randn({20, d}), bias = torch::randn({20});
  const auto h = torch::randn({M, 20}), w_out = torch::randn({d, 20}), scale = torch::rand({M, N});
  const auto reference = torch::matmul(h, w_out.t()) * (scale * active.to(torch::kFloat)).repeat_interleave(b, 1);
  for (const std::string layout : {"grouped", "per_block"}) {
    INFO(layout);
    const auto s = BlockSelection::from_mask(active, shared, layout);
    CHECK(s.grouped == (layout == "grouped"));
    CHECK(close(s.from_rows(block_sparse_input_linear(s.to_rows(x), w_in, s, bias)), torch::matmul(x * mask, w_in.t()) + bias));
    CHECK(close(s.from_rows(block_sparse_output_linear(s.to_rows(h), w_out, s, s.to_rows(scale))), reference));
    if (s.grouped) {  // the inference forms: packed input side (plain and SwiGLU), one-pass output side
      torch::NoGradGuard ng;
      CHECK(close(s.from_rows(block_sparse_input_packed(x, packed_weight(pack_weight(w_in), 20), s, bias)),
                  torch::matmul(x * mask, w_in.t()) + bias));
      const auto up = torch::randn({20, d});
      const auto gate_x = torch::matmul(x * mask, w_in.t()), up_x = torch::matmul(x * mask, up.t());
      CHECK(close(s.from_rows(block_sparse_input_packed(x, packed_weight(pack_swiglu_weight(w_in, up), 20, true), s)),
                  torch::silu(gate_x) * up_x));
      CHECK(close(block_sparse_output_to_tokens(s.to_rows(h), pack_weight_blocks(w_out, b), d, s, s.to_rows(scale)), reference));
      Monarch fusion(d, 2 * N);
      const auto mixed = [&] { torch::AutoGradMode on(true); return fusion->second_factor(reference).detach(); }();  // einsum form
      CHECK(close(block_sparse_output_to_tokens(s.to_rows(h), pack_weight_blocks(w_out, b), d, s, s.to_rows(scale), monarch_mix_weights(fusion->b2)), mixed));
    }
    // No shared blocks at all.
    auto free = torch::rand({M, N}) < 0.5;
    const auto s0 = BlockSelection::from_mask(free, 0, layout);
    const auto mask0 = free.to(torch::kFloat).repeat_interleave(b, 1);
    CHECK(close(s0.from_rows(block_sparse_input_linear(s0.to_rows(x), w_in, s0)), torch::matmul(x * mask0, w_in.t())));
    if (s0.grouped) {  // and a token using no block at all (an empty input run: its product is the bias)
      free[0].fill_(false);
      const auto s1 = BlockSelection::from_mask(free, 0, layout);
      const auto mask1 = free.to(torch::kFloat).repeat_interleave(b, 1);
      torch::NoGradGuard ng;
      CHECK(close(s1.from_rows(block_sparse_input_packed(x, packed_weight(pack_weight(w_in), 20), s1, bias)),
                  torch::matmul(x * mask1, w_in.t()) + bias));
    }
  }
  {  // Three parts grouped each on its own (the threads' shares at inference): the same products, and no
     // run of rows crosses a part (ceil(37 / 3) = 13 rows each).
    torch::NoGradGuard ng;
    const auto s3 = BlockSelection::from_mask(active, shared, "grouped", 3);
    REQUIRE(s3.grouped);
    CHECK(close(s3.from_rows(block_sparse_input_packed(x, packed_weight(pack_weight(w_in), 20), s3, bias)),
                torch::matmul(x * mask, w_in.t()) + bias));
    CHECK(close(block_sparse_output_to_tokens(s3.to_rows(h), pack_weight_blocks(w_out, b), d, s3, s3.to_rows(scale)), reference));
    for (const auto& g : s3.groups) CHECK(g.start / 13 == (g.start + g.count - 1) / 13);
    CHECK_THROWS(BlockSelection::from_mask(active, shared, "grouped", 0));
  }
  // Automatic layout: one routed block per token (few sets) is grouped, many sets are not.
  auto one = torch::zeros({M, N}, torch::kBool);
  one.narrow(1, 0, shared).fill_(true);
  one.scatter_(1, torch::randint(shared, N, {M, 1}, torch::kLong), true);
  CHECK(BlockSelection::from_mask(one, shared).grouped);
  CHECK(!BlockSelection::from_mask(active, shared).grouped);
  {  // The packed input and output sides both ways: few sets over many tokens (runs of 32 rows and more: a
     // product per run) and many short runs (input: the rows' blocks masked, each register tile over its
     // rows' union; output: each block's product over all the rows using it).
    torch::NoGradGuard ng;
    auto few = torch::zeros({300, N}, torch::kBool);
    few.narrow(1, 0, shared).fill_(true);
    few.scatter_(1, torch::randint(shared, N, {300, 1}, torch::kLong), true);
    const auto x300 = torch::randn({300, d});
    for (const auto& m : {few, active}) {
      const auto& xs = m.size(0) == 300 ? x300 : x;
      const auto sel = BlockSelection::from_mask(m, shared, "grouped", 2);
      INFO(sel.groups.size() << " runs over " << m.size(0) << " rows");
      CHECK(close(sel.from_rows(block_sparse_input_packed(xs, packed_weight(pack_weight(w_in), 20), sel, bias)),
                  torch::matmul(xs * m.to(torch::kFloat).repeat_interleave(b, 1), w_in.t()) + bias));
      // The output side likewise: compact per-run blocks, or each block over all its rows.
      const auto hs = torch::randn({m.size(0), 20}), ss = torch::rand({m.size(0), N});
      const auto expected = torch::matmul(hs, w_out.t()) * (ss * m.to(torch::kFloat)).repeat_interleave(b, 1);
      CHECK(close(block_sparse_output_to_tokens(sel.to_rows(hs), pack_weight_blocks(w_out, b), d, sel, sel.to_rows(ss)), expected));
    }
  }
  CHECK_THROWS(BlockSelection::from_mask(active, shared, "fast"));
  // The grouped order: tokens sorted by their set of routed blocks, in token order within a set, whether
  // counted (up to 16 routed blocks) or sorted (more); with parts, so within each part's rows, which hold
  // that part's tokens only (parts of ceil(37 / 2) = 19 and ceil(37 / 4) = 10 tokens).
  for (const int blocks : {6, 20})
    for (const int parts : {1, 2, 4}) {
      INFO(blocks << " blocks, " << parts << " parts");
      auto mask = torch::rand({M, blocks}) < 0.3;
      mask.select(1, 0).fill_(true);
      mask.narrow(0, 0, M / 2).copy_(mask.narrow(0, M / 2, M / 2));  // repeated sets
      const auto s = BlockSelection::from_mask(mask, 1, "grouped", parts);
      REQUIRE(s.grouped);
      const auto rows = mask.index_select(0, s.order).narrow(1, 1, blocks - 1).to(torch::kLong);
      auto key = torch::zeros({M}, torch::kLong);
      for (int i = 0; i < blocks - 1; ++i) key += rows.select(1, i) * (std::int64_t{1} << i);
      const int part = (M + parts - 1) / parts;
      for (int r = 0; r < M; ++r) CHECK(s.order[r].item<std::int64_t>() / part == r / part);  // a part's rows, its tokens
      for (int r = 1; r < M; ++r) {
        if (r % part == 0) continue;  // a new part starts its own order
        const auto k0 = key[r - 1].item<std::int64_t>(), k1 = key[r].item<std::int64_t>();
        CHECK((k0 < k1 || (k0 == k1 && s.order[r - 1].item<std::int64_t>() < s.order[r].item<std::int64_t>())));
      }
      CHECK(std::get<0>(s.order.sort()).equal(torch::arange(M)));
    }
}

TEST_CASE("Monarch's first factor folds into the matrix before it (B1 w)", "[kernels][mohd]") {
  torch::manual_seed(4);
  Monarch m(24, 4);
  const auto w = torch::randn({24, 10}), h = torch::randn({7, 10});
  CHECK(close(m->fold_first_factor(w), m->first_factor(w.t()).t()));
  CHECK(close(m->second_factor(torch::matmul(h, m->fold_first_factor(w).t())), m(torch::matmul(h, w.t()))));
  CHECK(m->can_fold(4));
  CHECK(m->can_fold(2));   // sub-dimension blocks of 12 hold two B1 blocks of 6
  CHECK(!m->can_fold(8));  // blocks of 3 would cut a B1 block
}

TEST_CASE("Head-gathered attention equals the gate-weighted dense heads (MoH Eq. 4)", "[kernels][moh]") {
  torch::manual_seed(5);
  const int B = 3, T = 9, d = 16, H = 4, Hkv = 2, hd = 8;
  const Rope rope(hd, 16, 10000.0);
  const auto x = torch::randn({B, T, d});
  const auto wq = torch::randn({H * hd, d}) * 0.3, bq = torch::randn({H * hd}) * 0.1;
  const auto wk = torch::randn({Hkv * hd, d}) * 0.3, wv = torch::randn({Hkv * hd, d}) * 0.3, wo = torch::randn({d, H * hd}) * 0.3;
  auto gates = torch::rand({B, T, H}) * (torch::rand({B, T, H}) < 0.5).to(torch::kFloat);
  gates[1].select(1, 2).zero_();  // a head nobody in sequence 1 uses
  gates[2].zero_();               // a sequence using no head at all
  for (bool causal : {true, false}) {
    INFO("causal " << causal);
    const auto q_pre = (torch::matmul(x, wq.t()) + bq).view({B, T, H, hd});
    auto q = rope.apply(q_pre), k = rope.apply(torch::matmul(x, wk.t()).view({B, T, Hkv, hd}));
    auto v = torch::matmul(x, wv.t()).view({B, T, Hkv, hd});
    auto heads = dot_product_attention(q.transpose(1, 2), k.repeat_interleave(2, 2).transpose(1, 2),
                                       v.repeat_interleave(2, 2).transpose(1, 2), causal)
                     .transpose(1, 2);
    const auto reference = torch::matmul((heads * gates.unsqueeze(-1)).reshape({B, T, H * hd}), wo.t());
    HeadGatheredAttention a;
    a.x = x;
    a.k = k;
    a.v = v;
    a.wq = wq;
    a.bq = bq;
    a.wo = wo;
    a.gates = gates;
    a.rotate = [&rope](const torch::Tensor& qh, const torch::Tensor& pos) { return rope.apply_at(qh, pos); };
    a.causal = causal;
    CHECK(close(head_gathered_attention(a), reference));
    a.q = q_pre;  // queries already computed (the query-norm router needs them all)
    CHECK(close(head_gathered_attention(a), reference));
  }
}

TEST_CASE("Sparse MoHD models equal the reference forward (50%, 75%, no fusion, unaligned fusion, no shared)", "[kernels][mohd]") {
  struct Case {
    const char* name;
    MohdOptions attn, ffn;
    int dim = 48;  // head_dim 12; 64: head_dim 16, where the fused attention runs on the routed rows
  };
  const std::vector<Case> cases = {{"50%", mohd(8, 4, 3, 8), mohd(8, 4, 3, 8)},
                                   {"50%, head_dim 16", mohd(8, 4, 3, 8), mohd(8, 4, 3, 8), 64},
                                   {"75%", mohd(12, 9, 3, 12), mohd(12, 9, 3, 12)},
                                   {"no fusion", mohd(8, 4, 3, 0), mohd(8, 4, 3, 0)},
                                   {"fusion groups 4 over 8 sub-dims", mohd(8, 4, 3, 4), mohd(8, 4, 3, 4)},
                                   {"fusion groups 16 over 8 sub-dims", mohd(8, 4, 3, 16), mohd(8, 4, 3, 16), 64},
                                   {"no shared, 3 routed", mohd(6, 3, 0, 6), mohd(6, 3, 0, 6)}};
  torch::manual_seed(6);
  const auto tokens = torch::randint(0, 50, {2, 11}, torch::kLong);
  for (const auto& c : cases) {
    INFO(c.name);
    ModelOptions o = small_options();
    o.attention = o.ffn = "mohd";
    o.mohd_attn = c.attn;
    o.mohd_ffn = c.ffn;
    o.dim = c.dim;
    check_inference_forms(o, 2, tokens);
  }
}

TEST_CASE("Cached derived weights (Monarch fold, stacked QKV and gate/up) follow in-place weight updates", "[kernels][mohd]") {
  ModelOptions o = small_options();
  o.attention = o.ffn = "mohd";
  o.mohd_attn = o.mohd_ffn = mohd(8, 4, 3, 8);
  Transformer m(o);
  m.init_weights(9);
  m.eval();
  torch::NoGradGuard ng;
  const auto tokens = torch::randint(0, 50, {2, 9}, torch::kLong);
  InferencePlan plan(m);
  logits_with(plan, tokens, Form::sparse);  // caches B1 W_O, B1 W_down, [W_Q; W_K; W_V] and [W_gate; W_up]
  for (const std::string name : {"w2", "monarch.b1", "wk", "w3"}) {
    INFO(name);
    for (const auto& p : m.named_parameters())
      if (p.key().find(name) != std::string::npos) p.value().mul_(1.5);
    CHECK(close(logits_with(plan, tokens, Form::sparse), math_logits(m, tokens)));
  }
}

TEST_CASE("Sparse MoH attention equals the reference forward (learned, query-norm, code gates, no shared)", "[kernels][moh]") {
  torch::manual_seed(7);
  const auto tokens = torch::randint(0, 50, {3, 13}, torch::kLong);
  // Head width 12: the torch attention and a gate product; 16: the fused kernel skipping unselected heads.
  for (const int dim : {48, 64})
    for (const std::string variant : {"learned", "query_norm", "code", "no_shared", "all heads", "qkv bias"}) {
      INFO(variant << ", dim " << dim);
      ModelOptions o = small_options();
      o.dim = dim;
      o.attention = "moh";
      o.moh.shared = variant == "no_shared" ? 0 : 1;
      o.moh.active = variant == "all heads" ? 4 : 2;
      if (variant == "query_norm") o.moh.router = "query_norm";
      if (variant == "code") o.moh.gate_form = "code";
      o.qkv_bias = variant == "qkv bias";
      check_inference_forms(o, 3, tokens, o.qkv_bias);
    }
}

TEST_CASE("Fused attention with gates skips unselected heads (exactly zero), scales output dims, MoH decoding matches", "[kernels][moh]") {
  torch::manual_seed(9);
  ModelOptions o = small_options();
  o.dim = 64;  // head width 16: the fused kernel
  o.attention = "moh";
  o.moh.shared = 1;
  o.moh.active = 2;
  Transformer m(o);
  m.init_weights(4);
  m.eval();
  torch::NoGradGuard ng;
  // The kernel with gates against the unweighted kernel times the gates: every selected head equal, every
  // unselected one 0 (not computed).
  const auto q = torch::randn({2, 4, 9, 16}), k = torch::randn({2, 2, 9, 16}), v = torch::randn({2, 2, 9, 16});
  auto gates = torch::rand({2, 9, 4});
  gates.masked_fill_(torch::rand({2, 9, 4}) < 0.5, 0.0);
  const auto gated = attention_inference(q, k, v, true, 0.25, gates);
  const auto plain = attention_inference(q, k, v, true, 0.25);
  CHECK(close(gated, plain * gates.transpose(1, 2).unsqueeze(-1)));
  CHECK(gated.masked_select((gates.transpose(1, 2) == 0).unsqueeze(-1).expand_as(gated)).abs().max().item<float>() == 0.0f);
  // Per-position dimension factors (ToMoE's v/o mask, the same in every head), alone and with the gates.
  const auto dims = (torch::rand({2, 9, 16}) < 0.5).to(torch::kFloat) * torch::rand({2, 9, 16});
  CHECK(close(attention_inference(q, k, v, true, 0.25, {}, dims), plain * dims.unsqueeze(1)));
  CHECK(close(attention_inference(q, k, v, true, 0.25, gates, dims), plain * gates.transpose(1, 2).unsqueeze(-1) * dims.unsqueeze(1)));
  // Incremental decoding through the fused form equals the full forward's logits.
  const auto tokens = torch::randint(0, o.vocab_size, {1, 10}, torch::kLong);
  InferencePlan plan(m);
  const auto all = plan.forward(tokens);
  KvCache cache;
  ExecOptions step;
  step.cache = &cache;
  plan.forward(tokens.narrow(1, 0, 7), step);
  for (int t = 7; t < 10; ++t) CHECK(close(plan.forward(tokens.narrow(1, t, 1), step).squeeze(1), all.select(1, t)));
}

TEST_CASE("Training through the sparse kernels gives the reference gradients (MoHD and MoH)", "[kernels]") {
  torch::manual_seed(8);
  const auto tokens = torch::randint(0, 50, {2, 12}, torch::kLong);
  // MoHD's packed block-sparse training products (core/engine/block_sparse_training.h) at d 48 (blocks of
  // 6, each padded to a panel) and d 128 (blocks of 16: whole panels, adjacent blocks one product).
  for (const std::string kind : {"mohd", "mohd_d128", "moh"}) {
    INFO(kind);
    ModelOptions o = small_options();
    if (kind != "moh") {
      o.attention = o.ffn = "mohd";
      o.mohd_attn = o.mohd_ffn = mohd(8, 4, 2, 8);
      if (kind == "mohd_d128") o.dim = 128, o.ffn_hidden = 256;
    } else {
      o.attention = "moh";
      o.moh.shared = 1;
      o.moh.active = 3;
    }
    Transformer m(o);
    m.init_weights(4);
    m.train();
    const auto ref = gradients(m, tokens, Form::reference);
    const auto sparse = gradients(m, tokens, Form::sparse);
    REQUIRE(ref.size() == sparse.size());
    for (const auto& [name, g] : ref) {
      INFO(name);
      REQUIRE(sparse.count(name));
      CHECK(close(sparse.at(name), g, 1e-3, 1e-6));
    }
  }
}

TEST_CASE("Form choice: automatic takes a module's sparse form where its rule says it wins, never with taps", "[kernels]") {
  Analysis an;
  const Rope rope;
  const BlockTapNames taps(0);
  LayerIO io;
  engine::Step step{rope, an, taps, io};
  CHECK(step.sparse(true));  // the module's rule: its sparse form wins
  CHECK(!step.sparse(false));
  TapRecorder rec("blocks.0.attn.q");
  an.tap_recorder = &rec;
  CHECK(!step.sparse(true));  // taps need the reference form's intermediate tensors
  step.form = Form::sparse;
  CHECK(step.sparse(false));  // forced (taps too)
  an.tap_recorder = nullptr;
  step.form = Form::reference;
  CHECK(!step.sparse(true));
  CHECK(form_from_name("reference") == Form::reference);
  CHECK(form_from_name("sparse") == Form::sparse);
  CHECK(form_from_name("automatic") == Form::automatic);
}

TEST_CASE("execution.form sets the plan's default form and leaves the config hash alone", "[kernels]") {
  Config cfg;
  cfg.model = small_options();
  cfg.model.dim = 64;  // MoH's fused form (head width 16) rounds apart from the reference
  cfg.model.attention = "moh";
  cfg.model.moh.shared = 1;
  cfg.model.moh.active = 2;
  const std::string hash = cfg.hash();
  cfg.execution.form = "reference";
  CHECK(cfg.hash() == hash);  // an execution choice: a run resumes whichever form it uses
  const auto tokens = torch::randint(0, 50, {2, 9}, torch::kLong);
  for (const std::string name : {"reference", "sparse"}) {
    INFO(name);
    cfg.execution.form = name;
    Transformer m(cfg.model);
    m.init_weights(2);
    InferencePlan plan(m, form_from_name(cfg.execution.form));
    CHECK(torch::equal(logits_with(plan, tokens, Form::automatic), logits_with(plan, tokens, form_from_name(name))));
  }
}

TEST_CASE("Sparse MoH on stories260K's weights and real text equals the reference", "[kernels][moh][import]") {
  const std::string shared = MOXLAB_SHARED_DATA;
  const std::string model = shared + "/models/stories260K/stories260K.bin", text = shared + "/corpora/books/tiny_shakespeare_input.txt";
  if (!std::filesystem::exists(model) || !std::filesystem::exists(text)) {
    WARN("skipping: ../shared/data not found (stories260K model, tiny Shakespeare)");
    return;
  }
  ImportedModel dense = import_llama2c(model, "llama2c:" + shared + "/models/stories260K/tok512.bin");
  std::ifstream in(text);
  std::stringstream buf;
  buf << in.rdbuf();
  auto ids = load_tokenizer("llama2c:" + shared + "/models/stories260K/tok512.bin")->encode(buf.str().substr(0, 4000));
  ids.resize(4 * 64);
  const auto tokens = torch::tensor(std::vector<std::int64_t>(ids.begin(), ids.end())).view({4, 64});
  // Continue-tuning's parameter-free MoH (section 4.4): the dense weights as they are, 6 of 8 heads per token.
  ModelOptions o = dense.config.model;
  o.attention = "moh";
  o.moh.router = "query_norm";
  o.moh.shared = 2;
  o.moh.active = 6;
  Transformer moh(o);
  torch::NoGradGuard ng;
  for (const auto& p : dense.model->named_parameters()) moh.named_parameters()[p.key()].copy_(p.value());
  moh.eval();
  InferencePlan moh_plan(moh);
  const auto ref = math_logits(moh, tokens);
  CHECK(close(logits_with(moh_plan, tokens, Form::sparse), ref, 1e-4, 1e-4));
  // And MoHD on the same text (random weights: there is no pretrained MoHD model).
  ModelOptions h = dense.config.model;
  h.attention = h.ffn = "mohd";
  h.mohd_attn = h.mohd_ffn = mohd(8, 4, 3, 8);
  Transformer mohd_model(h);
  mohd_model.init_weights(5);
  mohd_model.eval();
  InferencePlan mohd_plan(mohd_model);
  CHECK(close(logits_with(mohd_plan, tokens, Form::sparse), math_logits(mohd_model, tokens)));
}

