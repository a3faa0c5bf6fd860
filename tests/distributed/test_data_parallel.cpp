// Gloo collectives of the data-parallel group (core/distributed/data_parallel.h) between two real
// processes on this machine: rank 0's tensors broadcast, gradients averaged (a gradient one rank never
// produced taking part as zeros), global sums. Each rank checks its own results and exits non-zero on a
// mismatch, with the reason in a file the test prints.
#include "tests/torch_catch.h"

#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "core/distributed/data_parallel.h"
#include "tests/scratch_dir.h"

using namespace moxlab;

namespace {

// What rank `rank` of 2 checks; "" when all holds.
std::string rank_checks(int rank, const std::string& rendezvous) {
  torch::set_num_threads(1);
  RankEnv env;
  env.rank = rank;
  env.world = 2;
  env.rendezvous = rendezvous;
  DataParallelGroup group(env);
  std::ostringstream bad;

  auto w = torch::full({6}, 10.0f * rank);
  auto b = torch::full({2, 2}, 1.0 + rank, torch::kDouble);  // another dtype: its own bucket
  group.broadcast({w, b});
  if (!torch::equal(w, torch::zeros({6})) || !torch::equal(b, torch::ones({2, 2}, torch::kDouble))) bad << "broadcast; ";

  auto flag = torch::tensor({rank == 0}, torch::kBool);  // Gloo has no bool: sent as bytes
  group.broadcast({flag});
  if (!flag.item<bool>()) bad << "bool broadcast; ";

  auto p = torch::zeros({3, 4}, torch::requires_grad());
  auto q = torch::zeros({5}, torch::requires_grad());  // rank 1 never computes its gradient
  auto frozen = torch::zeros({2});                     // not trained: not reduced
  p.mutable_grad() = torch::arange(12, torch::kFloat).reshape({3, 4}) * (rank + 1);
  if (rank == 0) q.mutable_grad() = torch::full({5}, 4.0f);
  group.average_gradients({p, q, frozen});
  if (!torch::allclose(p.grad(), torch::arange(12, torch::kFloat).reshape({3, 4}) * 1.5)) bad << "mean gradient; ";
  if (!q.grad().defined() || !torch::allclose(q.grad(), torch::full({5}, 2.0f))) bad << "missing gradient as zeros; ";
  if (frozen.grad().defined()) bad << "frozen tensor reduced; ";

  std::vector<double> counts{1.0 + rank, 2.0};
  group.sum(counts);
  if (counts != std::vector<double>{3.0, 4.0}) bad << "sum; ";
  if (group.communication_seconds() <= 0) bad << "no communication time; ";

  // The batch statistics' collectives (BatchReducer) and rank 0's bytes.
  if (!torch::equal(group.sum(torch::tensor({1.0f, 2.0f}) * (rank + 1)), torch::tensor({3.0f, 6.0f}))) bad << "tensor sum; ";
  if (!torch::equal(group.max(torch::tensor(rank == 0 ? 7.0f : 2.0f)), torch::tensor(7.0f))) bad << "tensor max; ";
  if (!torch::equal(group.gather(torch::full({2}, 1.0f + rank)), torch::tensor({{1.0f, 1.0f}, {2.0f, 2.0f}}))) bad << "gather; ";
  std::string bytes = rank == 0 ? std::string("rank 0's\0bytes", 14) : "something else";
  group.broadcast(bytes);
  if (bytes != std::string("rank 0's\0bytes", 14)) bad << "bytes; ";
  std::string none = rank == 0 ? "" : "stale";
  group.broadcast(none);
  if (!none.empty()) bad << "empty bytes; ";
  return bad.str();
}

}  // namespace

TEST_CASE("Two Gloo ranks broadcast, average gradients (a missing one as zeros) and sum", "[distributed]") {
  testing::ScratchDir dir("dp");
  const std::string rendezvous = "file://" + dir.file("rendezvous");
  pid_t pids[2];
  for (int rank = 0; rank < 2; ++rank) {
    pids[rank] = fork();
    REQUIRE(pids[rank] >= 0);
    if (pids[rank] == 0) {
      std::string problems;
      try {
        problems = rank_checks(rank, rendezvous);
      } catch (const std::exception& e) {
        problems = e.what();
      }
      std::ofstream(dir.file("rank" + std::to_string(rank))) << problems;
      _exit(problems.empty() ? 0 : 1);
    }
  }
  for (int rank = 0; rank < 2; ++rank) {
    int status = 0;
    waitpid(pids[rank], &status, 0);
    std::ifstream in(dir.file("rank" + std::to_string(rank)));
    const std::string problems((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    INFO("rank " << rank << ": " << problems);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
}

TEST_CASE("Asking for NCCL on a LibTorch without it is a one-line error", "[distributed]") {
  RankEnv env;
  env.world = 2;
  env.rendezvous = "file:///nonexistent/rendezvous";
#ifndef USE_C10D_NCCL
  CHECK_THROWS_WITH(DataParallelGroup(env, "nccl"), Catch::Matchers::Contains("built without it"));
#endif
  CHECK_THROWS_WITH(DataParallelGroup(env, "mpi"), Catch::Matchers::Contains("unknown data-parallel backend 'mpi'"));
}
