#include "core/io/llama2c_import.h"

#include "core/common/atomic_file.h"
#include "core/formats/llama2c_format.h"

namespace moxlab {

ImportedModel import_llama2c(const std::string& model_path, const std::string& tokenizer_spec) {
  const std::string data = read_file(model_path);
  const Llama2cModel file = parse_llama2c(data, model_path);
  Config cfg = file.config;
  cfg.data.tokenizer = tokenizer_spec;

  auto model = std::make_shared<Transformer>(cfg.model);
  // A view of the checked bytes; copy_ reads it before `data` goes out of scope.
  auto weights = [&](const std::string& name) {
    const Llama2cTensor& t = file.tensor(name);
    return torch::from_blob(const_cast<char*>(data.data()) + t.offset, t.shape, torch::kFloat32);
  };
  torch::NoGradGuard ng;
  model->tok_embeddings->weight.copy_(weights("token_embedding_table"));
  const auto rms_att = weights("rms_att_weight"), wq = weights("wq"), wk = weights("wk"), wv = weights("wv"),
             wo = weights("wo"), rms_ffn = weights("rms_ffn_weight"), w1 = weights("w1"), w2 = weights("w2"),
             w3 = weights("w3");
  for (int l = 0; l < cfg.model.n_layers; ++l) {
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
  model->norm->weight.copy_(weights("rms_final_weight"));
  if (!cfg.model.tie_embeddings) model->output->weight.copy_(weights("wcls"));
  return {cfg, model};
}

}  // namespace moxlab
