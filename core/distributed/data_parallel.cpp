#ifndef USE_C10D_GLOO
#define USE_C10D_GLOO  // ProcessGroupGloo.hpp compiles to nothing without it
#endif
#include "core/distributed/data_parallel.h"

#include <cstdlib>

#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#ifdef USE_C10D_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include "core/common/error.h"

namespace moxlab {

namespace {

constexpr std::int64_t kBucketBytes = 25 << 20;  // DDP's default bucket size

c10::intrusive_ptr<c10d::Store> make_store(const RankEnv& env, std::chrono::milliseconds timeout) {
  const std::string& r = env.rendezvous;
  if (r.rfind("file://", 0) == 0) return c10::make_intrusive<c10d::FileStore>(r.substr(7), env.world);
  require(r.rfind("tcp://", 0) == 0, "unknown rendezvous '" + r + "' (tcp://HOST:PORT or file:///PATH)");
  const std::string hostport = r.substr(6);
  const auto colon = hostport.rfind(':');
  require(colon != std::string::npos, "rendezvous '" + r + "' has no port");
  c10d::TCPStoreOptions o;
  o.port = static_cast<std::uint16_t>(std::stoi(hostport.substr(colon + 1)));
  o.isServer = env.rank == 0;
  o.numWorkers = static_cast<std::size_t>(env.world);
  o.timeout = timeout;
  return c10::make_intrusive<c10d::TCPStore>(hostport.substr(0, colon), o);
}

// Groups tensors of one dtype, in order, into buckets of at most kBucketBytes (a larger tensor alone).
std::vector<std::vector<torch::Tensor>> buckets_of(const std::vector<torch::Tensor>& tensors) {
  std::vector<std::vector<torch::Tensor>> out;
  std::int64_t bytes = 0;
  for (const auto& t : tensors) {
    const std::int64_t b = t.numel() * static_cast<std::int64_t>(t.element_size());
    if (out.empty() || out.back().front().scalar_type() != t.scalar_type() || bytes + b > kBucketBytes) {
      out.emplace_back();
      bytes = 0;
    }
    out.back().push_back(t);
    bytes += b;
  }
  return out;
}

}  // namespace

struct DataParallelGroup::Impl {
  c10::intrusive_ptr<c10d::ProcessGroup> group;
  torch::Device device = torch::kCPU;  // where the group's own buffers live (NCCL: this rank's GPU)
  int rank = 0, world = 1;
  double comm_seconds = 0;

  // Runs one collective and waits for it, timing it.
  template <class F>
  void timed(F&& f) {
    const auto t0 = std::chrono::steady_clock::now();
    f()->wait();
    comm_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  // One collective over a bucket in place: flattened into one buffer, `collective` run on it (and
  // waited for), copied back.
  template <class F>
  void on_flat_bucket(const std::vector<torch::Tensor>& bucket, F&& collective) {
    std::vector<torch::Tensor> flat;
    for (const auto& t : bucket) flat.push_back(t.detach().reshape(-1));
    torch::Tensor joined = torch::cat(flat);
    if (joined.scalar_type() == torch::kBool) joined = joined.to(torch::kUInt8);  // Gloo has no bool (ToMoE's flags)
    std::vector<torch::Tensor> buffer{joined.to(device)};
    timed([&] { return collective(buffer); });
    std::int64_t offset = 0;
    for (const auto& t : bucket) {
      t.detach().copy_(buffer[0].narrow(0, offset, t.numel()).view(t.sizes()));  // back to its dtype and device
      offset += t.numel();
    }
  }
};

DataParallelGroup::DataParallelGroup(const RankEnv& env, const std::string& backend, std::chrono::milliseconds timeout)
    : impl_(std::make_unique<Impl>()) {
  require(env.distributed(), "a data-parallel group needs WORLD_SIZE > 1");
  require(backend == "gloo" || backend == "nccl", "unknown data-parallel backend '" + backend + "' (gloo or nccl)");
#ifndef USE_C10D_NCCL
  require(backend == "gloo", "data-parallel training on CUDA needs NCCL, and this LibTorch was built without it (a CPU "
                             "build): train on the CPU (Gloo) or build moxlab against a CUDA LibTorch");
#endif
  impl_->rank = env.rank;
  impl_->world = env.world;
  try {
    auto store = make_store(env, timeout);
#ifdef USE_C10D_NCCL
    if (backend == "nccl") {
      impl_->device = torch::Device(torch::kCUDA, env.local_rank);
      auto options = c10d::ProcessGroupNCCL::Options::create();
      options->timeout = timeout;
      impl_->group = c10::make_intrusive<c10d::ProcessGroupNCCL>(store, env.rank, env.world, options);
      return;
    }
#endif
    auto options = c10d::ProcessGroupGloo::Options::create(timeout);
    // As PyTorch: GLOO_SOCKET_IFNAME names the interface (a host whose name does not resolve, or several
    // networks); otherwise the address the host name resolves to.
    const char* interface = std::getenv("GLOO_SOCKET_IFNAME");
    options->devices.push_back(interface != nullptr && *interface != '\0'
                                   ? c10d::ProcessGroupGloo::createDeviceForInterface(interface)
                                   : c10d::ProcessGroupGloo::createDefaultDevice());
    options->threads = 1;
    impl_->group = c10::make_intrusive<c10d::ProcessGroupGloo>(store, env.rank, env.world, options);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error("rank " + std::to_string(env.rank) + " of " + std::to_string(env.world) + ": cannot join " + env.rendezvous +
                ": " + std::string(e.what()).substr(0, 200));
  }
}

DataParallelGroup::~DataParallelGroup() = default;

int DataParallelGroup::rank() const { return impl_->rank; }
int DataParallelGroup::world() const { return impl_->world; }

void DataParallelGroup::broadcast(const std::vector<torch::Tensor>& tensors) {
  torch::NoGradGuard no_grad;
  for (const auto& bucket : buckets_of(tensors))
    impl_->on_flat_bucket(bucket, [&](std::vector<torch::Tensor>& b) { return impl_->group->broadcast(b); });
}

void DataParallelGroup::average_gradients(const std::vector<torch::Tensor>& parameters) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> grads;
  for (auto p : parameters) {
    if (!p.requires_grad()) continue;
    if (!p.mutable_grad().defined()) p.mutable_grad() = torch::zeros_like(p);
    grads.push_back(p.mutable_grad());
  }
  for (const auto& bucket : buckets_of(grads)) {
    impl_->on_flat_bucket(bucket, [&](std::vector<torch::Tensor>& b) { return impl_->group->allreduce(b); });
    for (const auto& g : bucket) g.div_(impl_->world);  // as DDP: the mean gradient of the global batch
  }
}

void DataParallelGroup::sum(std::vector<double>& values) {
  if (values.empty()) return;
  std::vector<torch::Tensor> buffer{torch::tensor(values, torch::kDouble).to(impl_->device)};
  impl_->timed([&] { return impl_->group->allreduce(buffer); });
  const torch::Tensor sums = buffer[0].cpu();
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = sums[static_cast<std::int64_t>(i)].item<double>();
}

void DataParallelGroup::broadcast(std::string& bytes) {
  std::vector<torch::Tensor> size{torch::tensor({static_cast<std::int64_t>(bytes.size())}, torch::kLong).to(impl_->device)};
  impl_->timed([&] { return impl_->group->broadcast(size); });
  const std::int64_t n = size[0].item<std::int64_t>();
  if (n == 0) {
    bytes.clear();
    return;
  }
  std::vector<torch::Tensor> buffer{(impl_->rank == 0 ? torch::from_blob(bytes.data(), {n}, torch::kUInt8).clone()
                                                      : torch::empty({n}, torch::kUInt8))
                                         .to(impl_->device)};
  impl_->timed([&] { return impl_->group->broadcast(buffer); });
  const torch::Tensor received = buffer[0].cpu();
  bytes.assign(static_cast<const char*>(received.data_ptr()), static_cast<std::size_t>(n));
}

torch::Tensor DataParallelGroup::sum(const torch::Tensor& local) {
  std::vector<torch::Tensor> buffer{local.detach().reshape({-1}).clone()};
  impl_->timed([&] { return impl_->group->allreduce(buffer); });
  return buffer[0].view(local.sizes());
}

torch::Tensor DataParallelGroup::max(const torch::Tensor& local) {
  std::vector<torch::Tensor> buffer{local.detach().reshape({-1}).clone()};
  c10d::AllreduceOptions o;
  o.reduceOp = c10d::ReduceOp::MAX;
  impl_->timed([&] { return impl_->group->allreduce(buffer, o); });
  return buffer[0].view(local.sizes());
}

torch::Tensor DataParallelGroup::gather(const torch::Tensor& local) {
  std::vector<torch::Tensor> input{local.detach().reshape({-1}).contiguous()};
  std::vector<std::vector<torch::Tensor>> output(1);
  for (int r = 0; r < impl_->world; ++r) output[0].push_back(torch::empty_like(input[0]));
  impl_->timed([&] { return impl_->group->allgather(output, input); });
  auto shape = local.sizes().vec();
  shape.insert(shape.begin(), impl_->world);
  return torch::stack(output[0]).view(shape);
}

double DataParallelGroup::communication_seconds() const { return impl_->comm_seconds; }

}  // namespace moxlab
