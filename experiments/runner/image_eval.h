// The final evaluation of an image-classification run (MoH Table 1 analog and Fig. 3 for images), run
// by `moxlab train` when training ends: top-1 accuracy and cross-entropy on the whole test split, overall
// and per class, stored as results with their definitions; for models with routers, a capture of the
// router taps over the whole test split (1000 images per class for Fashion-MNIST) and its per-class
// router statistics (core/observe/router_domains.h: classes are the "domains"), recorded like
// `moxlab route` so the viewer's Routing panel shows head load per class.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "core/config/config.h"
#include "core/data/corpora/idx_images.h"
#include "core/model/vision_transformer.h"

namespace moxlab {

// The image set data.images names, split "train" or "test".
ImageSet read_image_split(const DataOptions& data, const std::string& split);
// SHA-256 over the train and test splits' pixels and labels (the run's data digest).
std::string image_data_digest(const ImageSet& train, const ImageSet& test);

void evaluate_image_run(VisionTransformer& model, const Config& cfg, const ImageSet& test, std::int64_t run_id,
                        const std::string& run_dir, const std::function<void(const std::string&)>& log);

// True when the checkpoint at path was trained on images (its stored config sets data.images).
bool is_image_checkpoint(const std::string& path);

// `moxlab eval --run ID` on an image run: rebuilds the ViT from the checkpoint's stored config, loads its
// weights and repeats the end-of-training evaluation above into `store` (results are replaced, the
// router capture rewritten), e.g. after a change to how results are keyed.
void evaluate_image_checkpoint(const std::string& path, std::int64_t run_id, const std::string& store,
                               const std::function<void(const std::string&)>& log);

}  // namespace moxlab
