// Checkpoints: one LibTorch archive holding the model weights, the resolved config, the tokenizer spec
// and, for training checkpoints, the optimiser state and step. Written atomically (temp file + rename),
// so a kill during a save leaves the previous checkpoint intact. A truncated or foreign file fails with
// a one-line Error naming the path.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include <torch/torch.h>

#include "core/config/config.h"
#include "core/model/transformer.h"

namespace moxlab {

struct CheckpointMeta {
  std::string config_json;     // Config::to_json() of the model's run
  std::string tokenizer_spec;  // load_tokenizer() spec, absolute paths
  std::int64_t step = 0;       // optimiser steps done
  std::int64_t tokens_seen = 0;
  std::int64_t run_id = -1;    // run store id (-1: none)
  std::string source;          // "train", "import:llama2c", "import:hf", ...
};

// Saves model (+ optimiser when given) and meta to path atomically. Any model kind (decoder, ViT).
void save_checkpoint(const std::string& path, torch::nn::Module& model, torch::optim::Optimizer* optimizer,
                     const CheckpointMeta& meta);

// Loads the weights of a checkpoint into an already built model of the same architecture (resume, or
// a ViT from its stored config); returns the meta. Missing or mis-shaped tensors are an Error.
CheckpointMeta load_checkpoint_weights(const std::string& path, torch::nn::Module& model);

struct LoadedCheckpoint {
  Config config;
  CheckpointMeta meta;
  std::shared_ptr<Transformer> model;
};

// Builds the decoder from the stored config and loads its weights (CPU).
LoadedCheckpoint load_checkpoint(const std::string& path);

// Continue-tuning (MoH section 4.4): copies every parameter and buffer of the checkpoint's model into
// `model` by name. Each must exist in `model` with the same shape (else an Error naming it, e.g. a
// different vocabulary or width), and the attention geometry that shapes do not show (heads, KV heads,
// head width, RoPE base, norm epsilon) must agree; parameters only `model` has (new routers) keep
// their values. Returns how many tensors were copied and kept, and the checkpoint's tokenizer spec
// (the caller checks it is the one its data uses).
struct InitFromReport {
  int copied = 0, kept = 0;
  std::string tokenizer_spec;
};
InitFromReport init_from_checkpoint(Transformer& model, const std::string& path);

// Restores what a training checkpoint keeps beside the weights: the optimiser state (the optimiser must
// have been built over the loaded model's parameters, in the same order) and the default CPU generator
// (ToMoE's gate noise), so a resumed run draws what an uninterrupted one would. False when the checkpoint
// predates the generator's state (the optimiser is restored all the same).
bool load_training_state(const std::string& path, torch::optim::Optimizer& optimizer);

// Only the meta (no weights): for listing and resume decisions.
CheckpointMeta read_checkpoint_meta(const std::string& path);

}  // namespace moxlab
