// Ranks of one machine averaging through a shared-memory segment (threads of this process, each
// a rank with its own group): the same bits as Gloo's all-reduce, the sum's order, who uses
// it, and a rank that does not come.
#include <doctest/doctest.h>

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "engine/distributed/gradient_sync.hpp"
#include "engine/distributed/group.hpp"
#include "engine/distributed/launcher.hpp"
#include "engine/distributed/shared_memory_sum.hpp"
#include "tests/distributed/on_ranks.hpp"

using namespace engine;

namespace {

distributed::World local_world(int rank, int size, int port, int local_size) {
  distributed::World w;
  w.rank = rank;
  w.size = size;
  w.local_rank = local_size == size ? rank : 0;
  w.local_size = local_size;
  w.master_port = port;
  w.timeout = std::chrono::milliseconds(3000);
  return w;
}

// Three steps of a two-layer model on each of two ranks; the gradients each rank holds at the
// end, and whether the shared segment carried them.
std::vector<torch::Tensor> train_two_ranks(bool shared_memory, bool* used) {
  const int port = distributed::free_port();
  std::vector<torch::Tensor> grads(4);
  const auto errors = test::on_ranks(2, [&](int r) {
    distributed::Group group(local_world(r, 2, port, 2), torch::kCPU);
    auto same_start = at::make_generator<at::CPUGeneratorImpl>(7);  // one per thread
    auto w1 = torch::randn({16, 8}, same_start).requires_grad_();
    auto w2 = torch::randn({3, 16}, same_start).requires_grad_();
    distributed::GradientSyncOptions options;
    options.shared_memory = shared_memory;
    distributed::GradientSync sync(group, {w1, w2}, {}, options);
    if (r == 0) *used = sync.local_sum() != nullptr;
    auto gen = at::make_generator<at::CPUGeneratorImpl>(100 + r);
    for (int step = 0; step < 3; ++step) {
      w1.mutable_grad() = torch::Tensor();
      w2.mutable_grad() = torch::Tensor();
      sync.before_forward();
      const auto x = torch::randn({5, 8}, gen);
      const auto loss = torch::tanh(x.matmul(w1.t())).matmul(w2.t()).pow(2).sum();
      sync.before_backward(loss);
      loss.backward();
    }
    grads[static_cast<size_t>(2 * r)] = w1.grad().clone();
    grads[static_cast<size_t>(2 * r + 1)] = w2.grad().clone();
  });
  CHECK(errors[0] == "");
  CHECK(errors[1] == "");
  return grads;
}

}  // namespace

TEST_CASE("two ranks of one machine average through shared memory, to Gloo's bits") {
  bool shared = false, gloo_shared = true;
  const auto through_memory = train_two_ranks(true, &shared);
  const auto through_gloo = train_two_ranks(false, &gloo_shared);
  CHECK(shared);
  CHECK_FALSE(gloo_shared);
  for (size_t i = 0; i < through_memory.size(); ++i) {
    CHECK(torch::equal(through_memory[i], through_gloo[i]));
  }
  CHECK(torch::equal(through_memory[0], through_memory[2]));  // both ranks hold the same
  CHECK_FALSE(torch::equal(through_memory[0], torch::zeros_like(through_memory[0])));
}

TEST_CASE(
    "three ranks: each rank's tensor divided by three, then summed in rank order; or summed") {
  const int port = distributed::free_port();
  std::vector<torch::Tensor> inputs, outputs(3);
  for (int r = 0; r < 3; ++r) {
    inputs.push_back(torch::randn({1001}, at::make_generator<at::CPUGeneratorImpl>(r)));
  }
  const auto errors = test::on_ranks(3, [&](int r) {
    distributed::Group group(local_world(r, 3, port, 3), torch::kCPU);
    auto sum = distributed::SharedMemorySum::open(group, 1001 * sizeof(float));
    REQUIRE(sum);
    auto flat = inputs[static_cast<size_t>(r)].clone();
    sum->average(flat);
    auto again = flat.clone();  // a second round through the same segment
    sum->average(again);
    auto total = inputs[static_cast<size_t>(r)].to(torch::kFloat64).narrow(0, 0, 10);
    REQUIRE(sum->fits(total));
    sum->sum(total);  // SyncBatchNorm's sum: no division, any float type that fits
    CHECK_FALSE(sum->fits(torch::ones({2000})));
    CHECK_FALSE(sum->fits(torch::ones({4, 4}).t()));
    outputs[static_cast<size_t>(r)] = torch::cat({flat, again, total.to(torch::kFloat32)});
  });
  for (const auto& e : errors) CHECK(e == "");
  const auto mean = inputs[0] / 3 + inputs[1] / 3 + inputs[2] / 3;
  const auto mean_again = mean / 3 + mean / 3 + mean / 3;
  const auto head = [&](int r) { return inputs[r].to(torch::kFloat64).narrow(0, 0, 10); };
  const auto total = (head(0) + head(1) + head(2)).to(torch::kFloat32);
  for (int r = 0; r < 3; ++r) {
    CHECK(torch::equal(outputs[r], torch::cat({mean, mean_again, total})));
  }
}

TEST_CASE("ranks on two machines keep Gloo") {
  const int port = distributed::free_port();
  std::atomic<int> opened{0};
  const auto errors = test::on_ranks(2, [&](int r) {
    distributed::Group group(local_world(r, 2, port, 1), torch::kCPU);  // one rank per machine
    if (distributed::SharedMemorySum::open(group, 64)) ++opened;
  });
  CHECK(errors[0] == "");
  CHECK(errors[1] == "");
  CHECK(opened == 0);
}

TEST_CASE("a rank that does not come is named when the timeout passes, and the others end") {
  const int port = distributed::free_port();
  std::atomic<bool> rank0_gave_up{false};
  const auto errors = test::on_ranks(2, [&](int r) {
    distributed::Group group(local_world(r, 2, port, 2), torch::kCPU);
    auto sum = distributed::SharedMemorySum::open(group, 64);
    REQUIRE(sum);
    auto flat = torch::ones({4});
    if (r == 0) {
      try {
        sum->average(flat);
      } catch (...) {
        rank0_gave_up = true;
        throw;
      }
    } else {
      while (!rank0_gave_up) std::this_thread::yield();  // comes only after rank 0 gave up
      sum->average(flat);
    }
  });
  CHECK(errors[0] ==
        "rank 0 waited 3 s (--dist_timeout) for its gradients from rank 1 in the shared-memory "
        "gradient all-reduce");
  CHECK(errors[1] == "rank 0 stopped the shared-memory gradient all-reduce (it failed)");
}
