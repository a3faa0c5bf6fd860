#include "experiments/runner/image_eval.h"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "core/common/sha256.h"
#include "core/eval/classification.h"
#include "core/capture/image_capture.h"
#include "core/store/run_store.h"
#include "core/train/checkpoint.h"
#include "experiments/runner/route_run.h"

namespace moxlab {

ImageSet read_image_split(const DataOptions& data, const std::string& split) {
  require(data.images == "fashion_mnist", "unknown data.images '" + data.images + "'");
  return read_fashion_mnist(split);
}

std::string image_data_digest(const ImageSet& train, const ImageSet& test) {
  Sha256 h;
  for (const ImageSet* s : {&train, &test}) {
    h.update(s->pixels.data(), s->pixels.size());
    h.update(s->labels.data(), s->labels.size());
  }
  return h.hex_digest();
}

void evaluate_image_run(VisionTransformer& model, const Config& cfg, const ImageSet& test, std::int64_t run_id,
                        const std::string& run_dir, const std::function<void(const std::string&)>& log) {
  auto [pixels, labels] = image_tensors(test, 0, test.count);
  const int batch = 4 * cfg.train.batch_size;
  const ClassificationResult r = evaluate_classifier(model, pixels, labels, batch);
  RunStore store(cfg.run.store);
  const std::string split = cfg.data.images + " test split (" + std::to_string(r.images) + " images)";
  auto put = [&](const std::string& key, double value, const std::string& definition, std::int64_t images) {
    store.put_result(run_id, key, value,
                     nlohmann::json{{"split", "test"}, {"images", images}, {"definition", definition + " on the " + split}}.dump());
  };
  put("top1/test", r.accuracy(), "top-1 accuracy (argmax of the logits equals the label)", r.images);
  put("loss/test", r.loss(), "mean cross-entropy of the label (nats)", r.images);
  const auto& names = fashion_mnist_classes();
  for (std::size_t c = 0; c < r.class_images.size(); ++c)
    if (r.class_images[c] > 0)
      put("top1/test/" + result_key_segment(c < names.size() ? names[c] : std::to_string(c)),
          static_cast<double>(r.class_correct[c]) / r.class_images[c],
          "top-1 accuracy over the images of this class", r.class_images[c]);
  if (log) log("run " + std::to_string(run_id) + ": test top-1 " + std::to_string(r.accuracy()) + " over " +
               std::to_string(r.images) + " images");

  const auto& o = model.options();
  if (!has_routers(o.attention, o.ffn)) return;
  const std::string capture = run_dir + "/capture-routing-test.h5";
  {
    TensorLogWriter w(capture);
    w.set_attr_int("/", "run_id", run_id);
    w.set_attr("/", "config", cfg.to_json());
    const std::int64_t rows = capture_image_taps(model, pixels, labels, names, "blocks.*.router.probs,blocks.*.router.topk",
                                                 batch, w);
    w.finish();
    if (log) log("run " + std::to_string(run_id) + ": captured the router taps of " + std::to_string(rows) +
                 " patch tokens -> " + capture);
  }
  store.add_artifact(run_id, "capture", std::filesystem::absolute(capture).string(),
                     nlohmann::json{{"taps", "blocks.*.router.*"}, {"images", r.images}, {"domains", "classes"}}.dump());
  route_capture(capture, cfg.run.store, log);
}

bool is_image_checkpoint(const std::string& path) {
  const auto cfg = nlohmann::json::parse(read_checkpoint_meta(path).config_json);
  return !cfg.value("data.images", std::string()).empty();
}

void evaluate_image_checkpoint(const std::string& path, std::int64_t run_id, const std::string& store,
                               const std::function<void(const std::string&)>& log) {
  Config cfg = config_from_json(read_checkpoint_meta(path).config_json);
  cfg.run.store = store;
  const ImageSet test = read_image_split(cfg.data, "test");
  VisionTransformer model(cfg.model, ImageGeometry{test.rows, test.cols, 1, test.classes()});
  load_checkpoint_weights(path, model);
  model.eval();
  evaluate_image_run(model, cfg, test, run_id, std::filesystem::path(path).parent_path().string(), log);
}

}  // namespace moxlab
