// HF-style checkpoint I/O: the safetensors reader/writer, export → import round trips (LLaMA tied and
// untied, Qwen2 with Q/K/V biases) giving bitwise-equal logits, an independent Python forward pass in
// the HF convention (rotate-half RoPE) agreeing with moxlab's logits, and the CLI export/import path.
#include "tests/torch_catch.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "core/common/paths.h"
#include "core/io/hf_checkpoint.h"
#include "core/io/safetensors.h"
#include "core/train/checkpoint.h"
#include "tests/cli/cli_support.h"
#include "tests/model/tiny_model.h"

using namespace moxlab;
using namespace moxlab::testing;

namespace {

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// A safetensors file built by hand (independent of the writer): header length, JSON, data.
std::string hand_made_safetensors(const std::string& json, const std::string& data) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((json.size() >> (8 * i)) & 0xff);
  return out + json + data;
}

ModelOptions small_options(bool tied, bool qkv_bias) {
  ModelOptions o = test::tiny_model();
  o.ffn_hidden = 0;  // the LLaMA rule: multiple_of * ceil(8/3 dim / multiple_of)
  o.max_seq_len = 32;
  o.tie_embeddings = tied;
  o.qkv_bias = qkv_bias;
  return o;
}

// Random weights, with norms and biases randomised too so that a mis-mapped one changes the logits.
std::shared_ptr<Transformer> random_model(const ModelOptions& o, std::uint64_t seed) {
  auto m = std::make_shared<Transformer>(o);
  m->init_weights(seed);
  torch::NoGradGuard ng;
  for (auto& p : m->named_parameters()) {
    if (p.key().find("norm") != std::string::npos) p.value().uniform_(0.5, 1.5);
    else if (p.key().find(".bias") != std::string::npos) p.value().normal_(0, 0.5);
  }
  return m;
}

torch::Tensor logits_of(Transformer& m, const std::vector<std::int64_t>& tokens) {
  torch::NoGradGuard ng;
  return m.forward(torch::tensor(tokens).view({1, -1}))[0];
}

bool reference_python_available() {
  return std::system("/usr/bin/python3 -c 'import torch, numpy' >/dev/null 2>&1") == 0;
}

std::string run_capture(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

}  // namespace

TEST_CASE("safetensors round trip, F16/BF16 reads and truncated files", "[hf]") {
  const std::string dir = scratch_dir("safetensors");
  std::map<std::string, torch::Tensor> t;
  t["a.weight"] = torch::randn({3, 5});
  t["b"] = torch::arange(7, torch::kFloat32);
  t["scalar_like"] = torch::tensor({42.5f});
  t["empty"] = torch::zeros({0, 4});
  write_safetensors(dir + "/x.safetensors", t, {{"format", "pt"}});
  SafeTensors r = read_safetensors(dir + "/x.safetensors");
  REQUIRE(r.tensors.size() == 4);
  for (const auto& [name, v] : t) {
    INFO(name);
    CHECK(r.tensors.at(name).sizes() == v.sizes());
    CHECK(torch::equal(r.tensors.at(name), v));
  }
  CHECK(r.metadata.at("format") == "pt");

  // BF16 1.0 = 0x3F80, -2.5 = 0xC020; F16 1.0 = 0x3C00, 0.5 = 0x3800 (little-endian bytes).
  const std::string json =
      R"({"h":{"dtype":"F16","shape":[2],"data_offsets":[4,8]},"g":{"dtype":"BF16","shape":[1,2],"data_offsets":[0,4]}})";
  write_bytes(dir + "/hand.safetensors", hand_made_safetensors(json, std::string("\x80\x3f\x20\xc0\x00\x3c\x00\x38", 8)));
  SafeTensors h = read_safetensors(dir + "/hand.safetensors");
  CHECK(h.tensors.at("g").sizes() == std::vector<std::int64_t>{1, 2});
  CHECK(h.tensors.at("g").dtype() == torch::kFloat32);
  CHECK(h.tensors.at("g")[0][0].item<float>() == 1.0f);
  CHECK(h.tensors.at("g")[0][1].item<float>() == -2.5f);
  CHECK(h.tensors.at("h")[0].item<float>() == 1.0f);
  CHECK(h.tensors.at("h")[1].item<float>() == 0.5f);

  // Truncated data, truncated header, garbage header, unsupported dtype: one Error naming the file.
  const std::string full = hand_made_safetensors(json, std::string("\x80\x3f\x20\xc0\x00\x3c\x00\x38", 8));
  auto fails_naming = [&](const std::string& bytes, const std::string& needle) {
    const std::string path = dir + "/bad.safetensors";
    write_bytes(path, bytes);
    try {
      read_safetensors(path);
    } catch (const Error& e) {
      const std::string what = e.what();
      INFO(what);
      CHECK(what.find(path) != std::string::npos);
      CHECK(what.find(needle) != std::string::npos);
      CHECK(what.find('\n') == std::string::npos);
      return;
    }
    FAIL("no Error for " + needle);
  };
  fails_naming(full.substr(0, full.size() - 1), "truncated");
  fails_naming(full.substr(0, 20), "truncated");
  fails_naming(full.substr(0, 5), "truncated");
  fails_naming(hand_made_safetensors("{not json", ""), "malformed");
  fails_naming(hand_made_safetensors(R"({"x":{"dtype":"I8","shape":[1],"data_offsets":[0,1]}})", "a"), "I8");
}

TEST_CASE("HF export then import reproduces the logits bit for bit", "[hf]") {
  const std::vector<std::int64_t> tokens{1, 7, 3, 49, 0, 12, 25, 8, 8, 30};
  struct Case {
    const char* arch;
    bool tied, bias;
  };
  for (const Case c : {Case{"llama", true, false}, Case{"llama", false, false}, Case{"qwen2", false, true}, Case{"qwen2", true, true}}) {
    DYNAMIC_SECTION(c.arch << (c.tied ? " tied" : " untied")) {
      const std::string dir = scratch_dir(std::string("hf_") + c.arch + (c.tied ? "_tied" : "_untied"));
      auto model = random_model(small_options(c.tied, c.bias), 7);
      export_hf(*model, dir, c.arch);
      auto cfg = nlohmann::json::parse(std::ifstream(dir + "/config.json"));
      CHECK(cfg["architectures"][0] == (c.bias ? "Qwen2ForCausalLM" : "LlamaForCausalLM"));
      CHECK(cfg["tie_word_embeddings"] == c.tied);
      CHECK(cfg["intermediate_size"] == model->options().resolved_ffn_hidden());
      SafeTensors st = read_safetensors(dir + "/model.safetensors");
      CHECK(st.tensors.count("lm_head.weight") == (c.tied ? 0u : 1u));
      CHECK(st.tensors.count("model.layers.1.self_attn.k_proj.bias") == (c.bias ? 1u : 0u));

      ImportedModel back = import_hf(dir, "bpe:unused.json");
      CHECK(back.config.model.qkv_bias == c.bias);
      CHECK(back.config.model.tie_embeddings == c.tied);
      CHECK(torch::equal(logits_of(*model, tokens), logits_of(*back.model, tokens)));
    }
  }
}

TEST_CASE("HF export and import refuse mismatched architectures and broken checkpoints", "[hf]") {
  const std::string dir = scratch_dir("hf_errors");
  auto plain = random_model(small_options(true, false), 1);
  auto biased = random_model(small_options(true, true), 1);
  CHECK_THROWS_AS(export_hf(*plain, dir + "/q", "qwen2"), Error);
  CHECK_THROWS_AS(export_hf(*biased, dir + "/l", "llama"), Error);
  CHECK_THROWS_WITH(export_hf(*plain, dir + "/x", "mistral"), Catch::Contains("mistral"));

  export_hf(*plain, dir + "/ok", "llama");
  // Unknown architecture in config.json.
  std::filesystem::create_directories(dir + "/arch");
  std::filesystem::copy_file(dir + "/ok/model.safetensors", dir + "/arch/model.safetensors");
  {
    auto cfg = nlohmann::json::parse(std::ifstream(dir + "/ok/config.json"));
    cfg["architectures"] = {"GPT2LMHeadModel"};
    std::ofstream(dir + "/arch/config.json") << cfg.dump();
  }
  CHECK_THROWS_WITH(import_hf(dir + "/arch", "bpe:x.json"), Catch::Contains("GPT2LMHeadModel"));
  // Missing tensor and wrong shape, each named.
  SafeTensors st = read_safetensors(dir + "/ok/model.safetensors");
  std::filesystem::create_directories(dir + "/missing");
  std::filesystem::copy_file(dir + "/ok/config.json", dir + "/missing/config.json");
  auto missing = st.tensors;
  missing.erase("model.layers.1.mlp.up_proj.weight");
  write_safetensors(dir + "/missing/model.safetensors", missing);
  CHECK_THROWS_WITH(import_hf(dir + "/missing", "bpe:x.json"), Catch::Contains("missing tensor model.layers.1.mlp.up_proj.weight"));
  auto wrong = st.tensors;
  wrong["model.norm.weight"] = torch::ones({31});
  write_safetensors(dir + "/missing/model.safetensors", wrong);
  CHECK_THROWS_WITH(import_hf(dir + "/missing", "bpe:x.json"), Catch::Contains("model.norm.weight") && Catch::Contains("[31]"));
}

TEST_CASE("An independent HF-convention forward pass (Python) agrees with moxlab's logits", "[hf][python]") {
  if (!reference_python_available()) {
    WARN("skipping: /usr/bin/python3 cannot import torch and numpy");
    return;
  }
  const std::string script = source_dir() + "/tests/reference/hf_llama_forward.py";
  const std::vector<std::int64_t> tokens{3, 14, 15, 9, 26, 5, 35, 8, 9, 7, 9, 3};
  std::string tok_arg;
  for (auto t : tokens) tok_arg += (tok_arg.empty() ? "" : ",") + std::to_string(t);
  for (const bool bias : {false, true}) {
    DYNAMIC_SECTION((bias ? "qwen2" : "llama")) {
      const std::string dir = scratch_dir(bias ? "hf_py_qwen2" : "hf_py_llama");
      auto o = small_options(/*tied=*/bias, bias);
      o.rope_theta = 500.0;  // a non-default theta, so the config value has to be honoured too
      o.init_std = 0.2;      // logits of order 1, so a wrong layout shows far above the tolerance
      auto model = random_model(o, 11);
      export_hf(*model, dir, bias ? "qwen2" : "llama");
      const std::string out = run_capture("/usr/bin/python3 '" + script + "' '" + dir + "' " + tok_arg);
      INFO(out.substr(0, 300));
      auto j = nlohmann::json::parse(out, nullptr, /*allow_exceptions=*/false);
      REQUIRE(j.is_array());
      REQUIRE(j.size() == tokens.size());
      auto ours = logits_of(*model, tokens);
      double max_diff = 0;
      for (std::size_t t = 0; t < tokens.size(); ++t)
        for (int v = 0; v < o.vocab_size; ++v)
          max_diff = std::max(max_diff, std::abs(j[t][v].get<double>() - ours[t][v].item<double>()));
      INFO("max |logit difference| = " << max_diff);
      CHECK(max_diff < 1e-4);
      // Sanity: the check has teeth — without the RoPE permutation the logits differ clearly.
      if (!bias) {
        torch::NoGradGuard ng;
        auto wq = dynamic_cast<DenseAttention*>(model->blocks->ptr<BlockImpl>(0)->attn.get())->wq->weight;
        wq.copy_(rope_interleaved_to_half(wq.clone(), o.n_heads, o.head_dim()));
        auto wrong = logits_of(*model, tokens);
        CHECK((wrong - ours).abs().max().item<double>() > 1e-2);
      }
    }
  }
}

TEST_CASE("CLI: export hf then import hf generates the same greedy text", "[hf][e2e]") {
  const std::string dir = scratch_dir("hf_cli");
  write_micro_config(dir, 12);  // a few steps: the text only has to be the same, not good
  auto tr = run_cli("train --config micro.toml --set train.warmup_steps=2", dir);
  INFO(tr.err);
  REQUIRE(tr.exit_code == 0);
  const std::string ck = dir + "/runs/1-micro/checkpoint.pt";
  auto ex = run_cli("export hf --checkpoint '" + ck + "' --out hf_out", dir);
  INFO(ex.err);
  REQUIRE(ex.exit_code == 0);
  CHECK(std::filesystem::exists(dir + "/hf_out/model.safetensors"));
  const std::string tok = read_checkpoint_meta(ck).tokenizer_spec;
  auto im = run_cli("import hf --dir hf_out --tokenizer '" + tok + "' --name back", dir);
  INFO(im.err);
  REQUIRE(im.exit_code == 0);
  CHECK(read_checkpoint_meta(dir + "/runs/2-back/checkpoint.pt").source == "import:hf");
  const std::string gen = " --prompt 'The ' --greedy --max-new-tokens 40";
  auto a = run_cli("generate --checkpoint '" + ck + "'" + gen, dir);
  auto b = run_cli("generate --checkpoint runs/2-back/checkpoint.pt" + gen, dir);
  REQUIRE(a.exit_code == 0);
  REQUIRE(b.exit_code == 0);
  CHECK(a.out.size() > 12);  // prompt plus some continuation
  CHECK(a.out == b.out);
  // A mismatched --arch is one clear error line.
  auto bad = run_cli("export hf --checkpoint '" + ck + "' --out q --arch qwen2", dir);
  CHECK(bad.exit_code != 0);
  CHECK(bad.err.find("qwen2") != std::string::npos);
}
