// The image path of MoH Table 1: the ViT's patch layout against a hand-built image, bidirectional
// attention (a later patch changes the first token's output; the decoder stays causal), parameter
// accounting, a MoH-ViT's router capture per class, a short real training run on Fashion-MNIST, and the
// classification metric against an independent computation.
#include "tests/torch_catch.h"

#include <filesystem>

#include "core/data/corpora/idx_images.h"
#include "core/eval/classification.h"
#include "core/model/transformer.h"
#include "core/model/vision_transformer.h"
#include "core/observe/router_domains.h"
#include "core/capture/image_capture.h"
#include "core/train/image_objective.h"
#include "core/train/trainer.h"
#include "tests/cli/cli_support.h"

using namespace moxlab;

namespace {
ModelOptions vit_options(const std::string& attention = "dense") {
  ModelOptions o;
  o.dim = 32;
  o.n_layers = 2;
  o.n_heads = 4;
  o.n_kv_heads = 2;
  o.patch_size = 2;
  o.attention = attention;
  o.moh.shared = 1;
  o.moh.active = 3;
  return o;
}

bool have_fashion_mnist() {
  if (std::filesystem::exists(fashion_mnist_dir())) return true;
  WARN("skipped: Fashion-MNIST not installed at " + fashion_mnist_dir() + " (Debian package dataset-fashion-mnist)");
  return false;
}
}  // namespace

TEST_CASE("ViT patchify: row-major patches, row-major pixels inside each", "[vit]") {
  VisionTransformer vit(vit_options(), ImageGeometry{4, 4, 1, 10});
  // Pixel (r, c) = 4r + c; patch (1, 0) covers rows 2-3, cols 0-1 → 8, 9, 12, 13.
  auto img = torch::arange(16, torch::kFloat32).reshape({1, 4, 4});
  auto p = vit.patchify(img);
  REQUIRE(p.sizes() == std::vector<std::int64_t>({1, 4, 4}));
  const float want[4][4] = {{0, 1, 4, 5}, {2, 3, 6, 7}, {8, 9, 12, 13}, {10, 11, 14, 15}};
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) CHECK(p[0][i][j].item<float>() == want[i][j]);
  CHECK_THROWS_AS(VisionTransformer(vit_options(), ImageGeometry{5, 4, 1, 10}), Error);  // 2 does not divide 5
}

TEST_CASE("ViT attention is bidirectional, the decoder's stays causal", "[vit]") {
  VisionTransformer vit(vit_options(), ImageGeometry{4, 4, 1, 10});
  vit.init_weights(3);
  auto x = torch::rand({1, 4, 4});
  auto y = x.clone();
  y[0][3][3] = 1.0f - y[0][3][3].item<float>();  // a pixel of the last patch
  TapRecorder ra("blocks.0.attn.out"), rb("blocks.0.attn.out");
  Analysis ca, cb;
  ca.tap_recorder = &ra;
  cb.tap_recorder = &rb;
  vit.forward(x, ca);
  vit.forward(y, cb);
  auto first_a = ra.take().at("blocks.0.attn.out")[0][0], first_b = rb.take().at("blocks.0.attn.out")[0][0];
  CHECK((first_a - first_b).abs().max().item<float>() > 1e-6f);  // patch 0 sees patch 3

  ModelOptions lm = vit_options();
  lm.vocab_size = 16;
  Transformer dec(lm);
  dec.init_weights(3);
  auto t = torch::tensor({{1, 2, 3, 4}}, torch::kLong), u = torch::tensor({{1, 2, 3, 9}}, torch::kLong);
  CHECK(torch::allclose(dec.forward(t)[0][0], dec.forward(u)[0][0]));  // token 0 does not see token 3
}

TEST_CASE("ViT parameter count: blocks and final norm, embeddings and classifier excluded", "[vit]") {
  VisionTransformer vit(vit_options(), ImageGeometry{4, 4, 1, 10});
  // Per block: wq 32x32 + wk, wv 32x16 each + wo 32x32 = 3072; SwiGLU hidden 96: 3 x 32 x 96 = 9216; 2 norms 64.
  CHECK(count_parameters(vit).total == 2 * (3072 + 9216 + 64) + 32);
  CHECK(count_parameters(vit).active == count_parameters(vit).total);
  VisionTransformer moh(vit_options("moh"), ImageGeometry{4, 4, 1, 10});
  CHECK(count_parameters(moh).active < count_parameters(moh).total);
}

TEST_CASE("MoH-ViT router capture per class: every patch token selects the active heads", "[vit][moh]") {
  VisionTransformer vit(vit_options("moh"), ImageGeometry{4, 4, 1, 3});
  vit.init_weights(5);
  auto pixels = torch::randint(0, 256, {6, 4, 4}, torch::kLong).to(torch::kUInt8);
  auto labels = torch::tensor({0, 1, 2, 0, 1, 2}, torch::kLong);
  const std::string dir = testing::scratch_dir("vit_capture");
  const std::string path = dir + "/cap.h5";
  {
    TensorLogWriter w(path);
    CHECK(capture_image_taps(vit, pixels, labels, {"a", "b", "c"}, "blocks.*.router.probs,blocks.*.router.topk", 4, w) == 24);
    w.finish();
  }
  const RoutingReport rep = observe_routing(path, dir + "/cap.routing.h5");
  REQUIRE(rep.routers.size() == 2);
  const RouterDomainStats& s = rep.routers[1];
  REQUIRE(s.domains == std::vector<std::string>{"a", "b", "c"});
  for (std::size_t d = 0; d < 3; ++d) {
    CHECK(s.tokens[d] == 8);  // 2 images x 4 patches
    double sum = 0;
    for (int h = 0; h < 4; ++h) sum += s.selected[d * 4 + h];
    CHECK(sum == Approx(3.0));           // 3 active heads per token
    CHECK(s.selected[d * 4] == 1.0);     // head 0 is shared
  }
}

TEST_CASE("ViT trains on Fashion-MNIST and the classifier metric matches an independent count", "[vit][data]") {
  if (!have_fashion_mnist()) return;
  const ImageSet train = read_fashion_mnist("train");
  Config cfg;
  cfg.model = vit_options();
  cfg.model.patch_size = 7;
  cfg.data.images = "fashion_mnist";
  cfg.data.image_val = 500;
  cfg.train.batch_size = 32;
  cfg.train.max_steps = 100;
  cfg.train.warmup_steps = 5;
  cfg.train.eval_every = 0;
  cfg.train.checkpoint_every = 1000;
  cfg.train.lr = 3e-3;
  auto vit = std::make_shared<VisionTransformer>(cfg.model, ImageGeometry{28, 28, 1, 10});
  vit->init_weights(1);
  ImageObjective objective(cfg, vit, train);
  CHECK(objective.train_images() == 59500);
  // Batches are a pure function of (seed, step, micro).
  Analysis c1, c2;
  CHECK(objective.micro_loss(7, 0, c1).item<float>() == objective.micro_loss(7, 0, c2).item<float>());
  const double before = objective.validate()[1].second;
  const std::string dir = testing::scratch_dir("vit_train");
  Trainer trainer(cfg, objective, dir + "/ck.pt", CheckpointMeta{});
  const TrainResult r = trainer.run({});
  REQUIRE(r.final_val.size() == 2);
  CHECK(r.final_val[1].first == "val/acc");
  CHECK(r.tokens_seen == 100 * 32);
  INFO("val acc before " << before << ", after " << r.final_val[1].second);
  CHECK(r.final_val[1].second > 0.4);  // 10 classes: chance is 0.1 (measured: 0.35 after 60 steps)
  CHECK(r.final_val[1].second > before + 0.25);

  const ImageSet test = read_fashion_mnist("test");
  auto [px, y] = image_tensors(test, 0, 300);
  const ClassificationResult m = evaluate_classifier(*vit, px, y, 64);
  torch::NoGradGuard ng;
  Analysis an;
  auto logits = vit->forward(px, an);
  const auto correct = (logits.argmax(1) == y).sum().item<std::int64_t>();
  CHECK(m.images == 300);
  CHECK(m.correct == correct);
  CHECK(m.loss() == Approx(torch::nn::functional::cross_entropy(logits, y).item<double>()).epsilon(1e-5));
  std::int64_t per_class = 0;
  for (auto c : m.class_correct) per_class += c;
  CHECK(per_class == correct);
}
