// Activation capture of a ViT over labelled images, in the capture layout of core/capture/capture.h so
// the same observers read it (router statistics per class = per "domain", MoH Fig. 3 for images):
//   /probes/<tap>   float32 [N, features]  one row per patch token
//   /domain         int32   [N]            the image's label, index into /domain_names (class names)
//   /domain_names   strings [classes]
//   /window         int32   [N]            image index in the captured set
//   /position, /tokens int32 [N]           patch index (row-major) inside the image
//   attributes on "/": taps, patches, split ("test"), layout_version (2; no /text: images have none)
#pragma once
#include <string>
#include <vector>

#include <torch/torch.h>

#include "core/model/vision_transformer.h"
#include "core/store/tensor_log_writer.h"

namespace moxlab {

// pixels [N, rows, cols] uint8, labels [N] int64; returns the patch tokens captured.
std::int64_t capture_image_taps(VisionTransformer& model, const torch::Tensor& pixels, const torch::Tensor& labels,
                                const std::vector<std::string>& class_names, const std::string& taps, int batch_size,
                                TensorLogWriter& out);

}  // namespace moxlab
