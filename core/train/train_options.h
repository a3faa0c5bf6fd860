// Options of the trainer (plain struct, torch-free; bound to TOML keys "train.*").
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace moxlab {

struct TrainOptions {
  std::int64_t seed = 1;     // model init and data order
  int batch_size = 16;       // sequences per micro-batch
  int seq_len = 256;         // tokens per sequence (<= model.max_seq_len)
  int grad_accum = 1;        // micro-batches per optimiser step
  int max_steps = 1000;      // optimiser steps
  double lr = 3e-3;          // peak learning rate
  double min_lr_ratio = 0.1; // cosine floor as a fraction of lr
  int warmup_steps = 50;     // linear warmup from 0
  double weight_decay = 0.1; // AdamW decoupled decay on matrices only
  double beta1 = 0.9;
  double beta2 = 0.95;
  double adam_eps = 1e-8;
  double grad_clip = 1.0;    // max global L2 norm; 0 disables
  int eval_every = 100;      // steps between validation passes (0: only at the end)
  int eval_tokens = 16384;   // validation tokens per domain for the periodic pass
  int checkpoint_every = 100;
  int log_every = 10;        // steps between metric rows in the store
  int threads = 0;           // LibTorch intra-op threads; 0: all cores
  std::string device = "cpu";
  // Checkpoint whose weights start the model (continue-tuning, e.g. dense -> MoH): a path, or
  // "sweep:NAME/VARIANT/SEED" (experiments/runner/checkpoint_ref.h); "" = none. Validated at step 0 too.
  std::string init_from;
  // Training-split domains the batches are drawn from (empty: all); validation still covers every domain.
  // ToMoE Fig. 6: calibration on one domain against the mixed default.
  std::vector<std::string> domains;
  // Which parameters train: "all", or "routing" (only the routing modules a method adds, everything
  // else frozen: ToMoE trains its hypernetwork, masks and routers on a frozen dense model).
  std::string trainable = "all";
  // Main loss: "lm" (next-token cross-entropy) or "distill" (ToMoE Eq. 10: KL(dense teacher || gated
  // student) over the vocabulary at every position, the teacher being the same model with its gates off).
  std::string loss = "lm";
  double distill_scale = 2.0;  // the official ToMoE code's factor on the KL (the paper's alpha = 16 is tuned with it)
  // Distillation from another model: a checkpoint (path or sweep reference, as init_from) whose logits
  // teach this one under loss = distill, e.g. the dense parent of a statically pruned student (ToMoE's
  // same-budget baseline). "" = ToMoE's own teacher, the model with its gates off.
  std::string teacher;
  // Weights that are exactly zero when training starts stay zero after every optimiser step: a statically
  // pruned start (core/prune zeroes what it removes) keeps its structure while it is tuned.
  bool keep_pruned = false;
};

}  // namespace moxlab
