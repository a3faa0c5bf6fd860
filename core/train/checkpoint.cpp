#include "core/train/checkpoint.h"

#include <mutex>

#include <ATen/CPUGeneratorImpl.h>

#include "core/common/atomic_file.h"
#include "core/common/error.h"

namespace moxlab {

namespace {

constexpr std::int64_t kFormatVersion = 1;

std::string first_line(const std::string& s) {
  auto nl = s.find('\n');
  return nl == std::string::npos ? s : s.substr(0, nl);
}

// "[4, 16]"
std::string shape_text(const torch::Tensor& t) {
  std::string out = "[";
  for (std::int64_t i = 0; i < t.dim(); ++i) out += (i ? ", " : "") + std::to_string(t.size(i));
  return out + "]";
}

void write_meta(torch::serialize::OutputArchive& ar, const CheckpointMeta& m) {
  ar.write("moxlab.format_version", c10::IValue(kFormatVersion));
  ar.write("moxlab.config_json", c10::IValue(m.config_json));
  ar.write("moxlab.tokenizer_spec", c10::IValue(m.tokenizer_spec));
  ar.write("moxlab.step", c10::IValue(m.step));
  ar.write("moxlab.tokens_seen", c10::IValue(m.tokens_seen));
  ar.write("moxlab.run_id", c10::IValue(m.run_id));
  ar.write("moxlab.source", c10::IValue(m.source));
}

CheckpointMeta read_meta(torch::serialize::InputArchive& ar, const std::string& path) {
  c10::IValue v;
  if (!ar.try_read("moxlab.format_version", v))
    throw Error("not a moxlab checkpoint: " + path + " (no format version)");
  if (v.toInt() != kFormatVersion)
    throw Error("checkpoint " + path + " has format version " + std::to_string(v.toInt()) + ", expected " +
                std::to_string(kFormatVersion));
  CheckpointMeta m;
  ar.read("moxlab.config_json", v); m.config_json = v.toStringRef();
  ar.read("moxlab.tokenizer_spec", v); m.tokenizer_spec = v.toStringRef();
  ar.read("moxlab.step", v); m.step = v.toInt();
  ar.read("moxlab.tokens_seen", v); m.tokens_seen = v.toInt();
  ar.read("moxlab.run_id", v); m.run_id = v.toInt();
  ar.read("moxlab.source", v); m.source = v.toStringRef();
  return m;
}

void open_archive(torch::serialize::InputArchive& ar, const std::string& path) {
  if (!file_exists(path)) throw Error("no such checkpoint: " + path);
  try {
    ar.load_from(path);
  } catch (const c10::Error& e) {
    throw Error("cannot read checkpoint " + path + " (truncated or not a LibTorch archive): " +
                first_line(e.what_without_backtrace()));
  }
}

}  // namespace

void save_checkpoint(const std::string& path, torch::nn::Module& model, torch::optim::Optimizer* optimizer,
                     const CheckpointMeta& meta) {
  torch::serialize::OutputArchive ar;
  write_meta(ar, meta);
  torch::serialize::OutputArchive model_ar;
  model.save(model_ar);
  ar.write("model", model_ar);
  if (optimizer) {
    torch::serialize::OutputArchive opt_ar;
    optimizer->save(opt_ar);
    ar.write("optimizer", opt_ar);
    // The default generator feeds ToMoE's Gumbel noise: a resumed run must go on drawing where this one stopped.
    at::Generator gen = at::detail::getDefaultCPUGenerator();  // a handle on the shared generator
    std::lock_guard<std::mutex> lock(gen.mutex());
    ar.write("generator", gen.get_state());
  }
  write_file_atomically(path, [&](const std::string& tmp) { ar.save_to(tmp); });
}

CheckpointMeta read_checkpoint_meta(const std::string& path) {
  torch::serialize::InputArchive ar;
  open_archive(ar, path);
  try {
    return read_meta(ar, path);
  } catch (const c10::Error& e) {
    throw Error("corrupt checkpoint " + path + ": " + first_line(e.what_without_backtrace()));
  }
}

CheckpointMeta load_checkpoint_weights(const std::string& path, torch::nn::Module& model) {
  torch::serialize::InputArchive ar;
  open_archive(ar, path);
  try {
    CheckpointMeta meta = read_meta(ar, path);
    torch::serialize::InputArchive model_ar;
    if (!ar.try_read("model", model_ar)) throw Error("checkpoint " + path + " has no model weights");
    model.load(model_ar);
    return meta;
  } catch (const c10::Error& e) {
    throw Error("corrupt checkpoint " + path + ": " + first_line(e.what_without_backtrace()));
  }
}

LoadedCheckpoint load_checkpoint(const std::string& path) {
  LoadedCheckpoint out;
  const CheckpointMeta meta = read_checkpoint_meta(path);
  out.config = config_from_json(meta.config_json);
  require(out.config.data.images.empty(), "checkpoint " + path + " holds an image classifier, not a language model");
  out.model = std::make_shared<Transformer>(out.config.model);
  out.meta = load_checkpoint_weights(path, *out.model);
  return out;
}

InitFromReport init_from_checkpoint(Transformer& model, const std::string& path) {
  const LoadedCheckpoint src = load_checkpoint(path);
  const ModelOptions &a = src.config.model, &b = model.options();
  auto same = [&](bool equal, const std::string& what) {
    require(equal, "train.init_from " + path + ": " + what + " differs from this model's");
  };
  same(a.n_heads == b.n_heads, "model.n_heads");
  same(a.n_kv_heads == b.n_kv_heads, "model.n_kv_heads");
  same(a.head_dim() == b.head_dim(), "the head width");
  same(a.rope_theta == b.rope_theta, "model.rope_theta");
  same(a.norm_eps == b.norm_eps, "model.norm_eps");
  auto dst_params = model.named_parameters(true);
  auto dst_buffers = model.named_buffers(true);
  InitFromReport rep;
  torch::NoGradGuard ng;
  auto copy = [&](const std::string& name, const torch::Tensor& from, torch::OrderedDict<std::string, torch::Tensor>& to) {
    torch::Tensor* t = to.find(name);
    require(t != nullptr, "train.init_from " + path + ": the model has no tensor '" + name + "' (different architecture?)");
    require(t->sizes() == from.sizes(), "train.init_from " + path + ": '" + name + "' has shape " + shape_text(from) +
                                            " there but " + shape_text(*t) + " here (different vocabulary or width?)");
    t->copy_(from);
    ++rep.copied;
  };
  for (const auto& p : src.model->named_parameters(true)) copy(p.key(), p.value(), dst_params);
  for (const auto& b : src.model->named_buffers(true)) copy(b.key(), b.value(), dst_buffers);
  rep.kept = static_cast<int>(dst_params.size() + dst_buffers.size()) - rep.copied;
  rep.tokenizer_spec = src.meta.tokenizer_spec;
  return rep;
}

bool load_training_state(const std::string& path, torch::optim::Optimizer& optimizer) {
  torch::serialize::InputArchive ar;
  open_archive(ar, path);
  try {
    torch::serialize::InputArchive opt_ar;
    if (!ar.try_read("optimizer", opt_ar)) throw Error("checkpoint " + path + " has no optimiser state to resume from");
    optimizer.load(opt_ar);
    torch::Tensor state;
    if (!ar.try_read("generator", state)) return false;
    at::Generator gen = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(gen.mutex());
    gen.set_state(state);
    return true;
  } catch (const c10::Error& e) {
    throw Error("corrupt training state in " + path + ": " + first_line(e.what_without_backtrace()));
  }
}

}  // namespace moxlab
