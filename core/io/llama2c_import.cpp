#include "core/io/llama2c_import.h"

#include <cstdint>
#include <cstring>
#include <vector>

#include "core/common/atomic_file.h"
#include "core/common/error.h"

namespace moxlab {

namespace {

class FloatReader {
 public:
  FloatReader(const std::string& data, std::size_t offset, const std::string& path)
      : data_(data), pos_(offset), path_(path) {}
  torch::Tensor take(std::vector<std::int64_t> shape) {
    std::int64_t n = 1;
    for (auto s : shape) n *= s;
    const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(float);
    require(pos_ + bytes <= data_.size(), "llama2.c file " + path_ + " is truncated (needs more weights than it holds)");
    auto t = torch::empty(shape, torch::kFloat32);
    std::memcpy(t.data_ptr<float>(), data_.data() + pos_, bytes);
    pos_ += bytes;
    return t;
  }
  void skip(std::int64_t floats) { pos_ += static_cast<std::size_t>(floats) * sizeof(float); }
  std::size_t pos() const { return pos_; }

 private:
  const std::string& data_;
  std::size_t pos_;
  const std::string& path_;
};

}  // namespace

ImportedModel import_llama2c(const std::string& model_path, const std::string& tokenizer_spec) {
  const std::string data = read_file(model_path);
  require(data.size() >= 7 * sizeof(std::int32_t), "llama2.c file " + model_path + " is too short for its header");
  std::int32_t h[7];
  std::memcpy(h, data.data(), sizeof(h));
  const int dim = h[0], hidden = h[1], L = h[2], H = h[3], KV = h[4], seq = h[6];
  const bool shared = h[5] > 0;
  const int V = shared ? h[5] : -h[5];
  require(dim > 0 && hidden > 0 && L > 0 && H > 0 && KV > 0 && V > 0 && seq > 0 && dim % H == 0 && H % KV == 0,
          "llama2.c file " + model_path + " has an invalid header");

  Config cfg;
  cfg.run.name = "import-llama2c";
  cfg.run.kind = "import";
  cfg.model.vocab_size = V;
  cfg.model.dim = dim;
  cfg.model.n_layers = L;
  cfg.model.n_heads = H;
  cfg.model.n_kv_heads = KV;
  cfg.model.ffn_hidden = hidden;
  cfg.model.max_seq_len = seq;
  cfg.model.tie_embeddings = shared;
  cfg.model.norm_eps = 1e-5;
  cfg.model.rope_theta = 10000.0;
  cfg.data.tokenizer = tokenizer_spec;
  cfg.train.seq_len = std::min(cfg.train.seq_len, seq);
  validate(cfg);

  auto model = std::make_shared<Transformer>(cfg.model);
  const int hd = dim / H, kv_dim = KV * hd;
  FloatReader r(data, sizeof(h), model_path);
  torch::NoGradGuard ng;
  auto per_layer = [&](std::vector<std::int64_t> shape) { shape.insert(shape.begin(), L); return r.take(shape); };
  auto emb = r.take({V, dim});
  auto rms_att = per_layer({dim});
  auto wq = per_layer({dim, dim});
  auto wk = per_layer({kv_dim, dim});
  auto wv = per_layer({kv_dim, dim});
  auto wo = per_layer({dim, dim});
  auto rms_ffn = per_layer({dim});
  auto w1 = per_layer({hidden, dim});
  auto w2 = per_layer({dim, hidden});
  auto w3 = per_layer({hidden, dim});
  auto rms_final = r.take({dim});
  r.skip(static_cast<std::int64_t>(seq) * hd / 2);  // legacy freq_cis_real [seq, hd/2]
  r.skip(static_cast<std::int64_t>(seq) * hd / 2);  // legacy freq_cis_imag [seq, hd/2]
  torch::Tensor wcls = shared ? emb : r.take({V, dim});
  require(r.pos() == data.size(), "llama2.c file " + model_path + " does not match its header (" +
                                      std::to_string(data.size()) + " bytes, header implies " + std::to_string(r.pos()) + ")");

  model->tok_embeddings->weight.copy_(emb);
  for (int l = 0; l < L; ++l) {
    auto* b = model->blocks->ptr<BlockImpl>(l).get();
    auto* attn = dynamic_cast<DenseAttention*>(b->attn.get());
    auto* ffn = dynamic_cast<SwiGLU*>(b->ffn.get());
    b->attn_norm->weight.copy_(rms_att[l]);
    attn->wq->weight.copy_(wq[l]);
    attn->wk->weight.copy_(wk[l]);
    attn->wv->weight.copy_(wv[l]);
    attn->wo->weight.copy_(wo[l]);
    b->ffn_norm->weight.copy_(rms_ffn[l]);
    ffn->w1->weight.copy_(w1[l]);
    ffn->w2->weight.copy_(w2[l]);
    ffn->w3->weight.copy_(w3[l]);
  }
  model->norm->weight.copy_(rms_final);
  if (!shared) model->output->weight.copy_(wcls);
  return {cfg, model};
}

}  // namespace moxlab
