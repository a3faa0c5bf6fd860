#include "core/capture/image_capture.h"

#include "core/common/error.h"
#include "core/engine/vit_plan.h"
#include "core/model/tap_recorder.h"
#include "core/observe/layout_check.h"

namespace moxlab {

std::int64_t capture_image_taps(VisionTransformer& model, const torch::Tensor& pixels, const torch::Tensor& labels,
                                const std::vector<std::string>& class_names, const std::string& taps, int batch_size,
                                TensorLogWriter& out) {
  require(pixels.size(0) == labels.size(0), "image and label counts differ");
  require(batch_size >= 1, "capture batch size must be positive");
  out.write_strings("/domain_names", class_names);
  torch::NoGradGuard ng;
  model.eval();
  const int P = model.patches();
  VitPlan plan(model);
  std::int64_t rows = 0;
  for (std::int64_t s = 0; s < pixels.size(0); s += batch_size) {
    const std::int64_t n = std::min<std::int64_t>(batch_size, pixels.size(0) - s);
    TapRecorder rec(taps);
    Analysis an;
    an.tap_recorder = &rec;
    plan.forward(pixels.narrow(0, s, n), &an);
    auto recorded = rec.take();
    require(!recorded.empty(), "no tap matches '" + taps + "'");
    for (const auto& [name, t] : recorded) {
      auto flat = t.reshape({n * P, t.size(-1)}).contiguous();
      out.append_rows("/probes/" + name, flat.data_ptr<float>(), flat.size(0), flat.size(1));
    }
    auto y = labels.narrow(0, s, n).contiguous();
    std::vector<std::int32_t> dom, window, pos;
    for (std::int64_t i = 0; i < n; ++i)
      for (int p = 0; p < P; ++p) {
        const std::int64_t label = y.data_ptr<std::int64_t>()[i];
        require(label >= 0 && label < static_cast<std::int64_t>(class_names.size()), "label outside the class names");
        dom.push_back(static_cast<std::int32_t>(label));
        window.push_back(static_cast<std::int32_t>(s + i));
        pos.push_back(p);
      }
    out.append("/domain", dom);
    out.append("/window", window);
    out.append("/position", pos);
    out.append("/tokens", pos);
    rows += n * P;
  }
  out.set_attr("/", "taps", taps);
  out.set_attr_int("/", "patches", P);
  out.set_attr("/", "split", "test");
  out.set_attr_int("/", "layout_version", kTensorLogLayoutVersion);
  return rows;
}

}  // namespace moxlab
