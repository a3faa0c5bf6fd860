#include "experiments/runner/capture_run.h"

#include <algorithm>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/data/shards/dataset.h"
#include "core/data/tokenizers/tokenizer.h"
#include "core/store/run_store.h"

namespace moxlab {

CaptureRunResult capture_run(const ResolvedCheckpoint& ck, const CaptureOptions& opt, const std::string& out,
                             const std::string& store, const std::function<void(const std::string&)>& log) {
  auto tok = load_tokenizer(ck.loaded.meta.tokenizer_spec);
  DataOptions data = ck.loaded.config.data;
  data.tokenizer = ck.loaded.meta.tokenizer_spec;
  PreparedData prepared = prepare_data(data, log);
  ShardTokenSource val(prepared.shards_dir, Split::Val);
  TensorLogWriter writer(out);
  writer.set_attr_int("/", "run_id", ck.run_id);
  writer.set_attr("/", "config", ck.loaded.config.to_json());
  writer.set_attr("/", "tokenizer", ck.loaded.meta.tokenizer_spec);
  writer.set_attr("/", "checkpoint", ck.path);
  CaptureRunResult r;
  r.summary = capture_activations(*ck.loaded.model, *tok, val, opt, writer);
  writer.finish();
  r.path = std::filesystem::absolute(out).string();
  RunStore(store).add_artifact(ck.run_id, "capture", r.path,
                               nlohmann::json{{"taps", opt.taps}, {"tokens", r.summary.tokens},
                                              {"tap_names", r.summary.taps}, {"domains", r.summary.domains}}
                                   .dump());
  return r;
}

CaptureRunResult capture_stored_run(const std::string& store, std::int64_t run_id, CaptureOptions opt,
                                    const std::string& file_name, const std::function<void(const std::string&)>& log) {
  std::string dir;
  {
    const RunStore s(store);
    const auto run_dirs = s.artifacts(run_id, "run_dir");
    if (!run_dirs.empty()) dir = run_dirs.back().path;
  }
  CheckpointRef ref;
  ref.run_id = run_id;
  ref.store = store;
  const ResolvedCheckpoint ck = resolve_checkpoint(ref, "capture");
  if (dir.empty()) dir = std::filesystem::path(ck.path).parent_path().string();
  opt.seq_len = std::min(opt.seq_len, ck.loaded.model->options().max_seq_len);  // windows the model can take
  return capture_run(ck, opt, dir + "/" + file_name, store, log);
}

}  // namespace moxlab
