// Two ranks of a process group in one test process (one thread each), over loopback: the
// rendezvous, the collectives the trainer uses, c10d's Reducer averaging gradients, and the
// errors of a world that does not agree with itself.
#include <doctest/doctest.h>

#include <torch/nn/functional/linear.h>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "engine/core/errors.hpp"
#include "engine/distributed/distributed_error.hpp"
#include "engine/distributed/gradient_sync.hpp"
#include "engine/distributed/group.hpp"
#include "engine/distributed/launcher.hpp"
#include "tests/distributed/on_ranks.hpp"

using namespace engine;

namespace {

distributed::World world_of(int rank, int size, int port) {
  distributed::World w;
  w.rank = rank;
  w.size = size;
  w.local_rank = rank;
  w.local_size = size;
  w.master_port = port;
  w.timeout = std::chrono::milliseconds(20000);
  return w;
}

std::vector<std::string> on_two_ranks(const std::function<void(int)>& body) {
  return test::on_ranks(2, body);
}

}  // namespace

TEST_CASE("two ranks sum, take the maximum, broadcast and share") {
  const int port = distributed::free_port();
  std::vector<double> sums[2], maxima[2];
  torch::Tensor broadcast[2];
  std::string shared[2];
  const auto errors = on_two_ranks([&](int r) {
    distributed::Group group(world_of(r, 2, port), torch::kCPU);
    sums[r] = group.sum({r + 1.0, 10.0});
    maxima[r] = group.max({static_cast<double>(r), -static_cast<double>(r)});
    broadcast[r] = r == 0 ? torch::tensor({1.0f, 2.0f, 3.0f}) : torch::zeros({3});
    group.broadcast({broadcast[r]});
    shared[r] = group.share(r == 0 ? "runs/a.h5" : "");
    group.barrier();
  });
  CHECK(errors[0] == "");
  CHECK(errors[1] == "");
  for (int r = 0; r < 2; ++r) {
    CHECK(sums[r] == std::vector<double>{3.0, 20.0});
    CHECK(maxima[r] == std::vector<double>{1.0, 0.0});
    CHECK(torch::equal(broadcast[r], torch::tensor({1.0f, 2.0f, 3.0f})));
    CHECK(shared[r] == "runs/a.h5");
  }
}

TEST_CASE("c10d's Reducer averages the ranks' gradients during backward") {
  const int port = distributed::free_port();
  torch::Tensor weight_grad[2], bias_grad[2];
  const auto errors = on_two_ranks([&](int r) {
    distributed::Group group(world_of(r, 2, port), torch::kCPU);
    auto weight = torch::ones({2, 3}).requires_grad_();
    auto bias = torch::zeros({2}).requires_grad_();
    distributed::GradientSync sync(group, {weight, bias}, {});
    for (int step = 0; step < 2; ++step) {  // the second step runs on rebuilt buckets
      weight.mutable_grad() = torch::Tensor();
      bias.mutable_grad() = torch::Tensor();
      sync.before_forward();
      const auto x = torch::full({1, 3}, r + 1.0);
      const auto loss = torch::nn::functional::linear(x, weight, bias).sum();
      sync.before_backward(loss);
      loss.backward();
    }
    weight_grad[r] = weight.grad().clone();
    bias_grad[r] = bias.grad().clone();
  });
  CHECK(errors[0] == "");
  CHECK(errors[1] == "");
  for (int r = 0; r < 2; ++r) {
    // rank 0's gradient is 1 everywhere, rank 1's 2: each rank holds their mean
    CHECK(torch::allclose(weight_grad[r], torch::full({2, 3}, 1.5)));
    CHECK(torch::allclose(bias_grad[r], torch::ones({2})));
  }
}

TEST_CASE("ranks started with different world sizes fail at once, naming both sizes") {
  const int port = distributed::free_port();
  const auto errors = on_two_ranks([&](int r) {
    auto world = world_of(r, r == 0 ? 2 : 3, port);
    distributed::Group group(world, torch::kCPU);
  });
  for (int r = 0; r < 2; ++r) {
    INFO("rank ", r, ": ", errors[r]);
    CHECK(errors[r].find("was started with a world of") != std::string::npos);
  }
}

TEST_CASE("a rank that never comes is named when the timeout passes") {
  auto world = world_of(0, 2, distributed::free_port());
  world.timeout = std::chrono::milliseconds(500);
  try {
    distributed::Group group(world, torch::kCPU);
    FAIL("joined a world whose rank 1 never came");
  } catch (const distributed::DistributedError& e) {
    INFO(std::string(e.what()));
    CHECK(std::string(e.what()).find("rank(s) 1 of 2 did not join") != std::string::npos);
  }
}

TEST_CASE("a rendezvous store nobody serves is reported with its address") {
  auto world = world_of(1, 2, distributed::free_port());
  world.timeout = std::chrono::milliseconds(1000);
  try {
    distributed::Group group(world, torch::kCPU);
    FAIL("joined without a rank 0");
  } catch (const distributed::DistributedError& e) {
    CHECK(std::string(e.what()).find("cannot reach rank 0's rendezvous store at 127.0.0.1:") !=
          std::string::npos);
  }
}

TEST_CASE("a collective that fails names the rank that is gone, or says that all are running") {
  const auto error_of = [](const std::vector<std::string>& errors, int rank) {
    INFO("rank ", rank, ": ", errors[static_cast<size_t>(rank)]);
    return errors[static_cast<size_t>(rank)];
  };
  SUBCASE("rank 1 leaves: rank 0 sees its heartbeat stop") {
    const int port = distributed::free_port();
    const auto errors = on_two_ranks([&](int r) {
      distributed::Group group(world_of(r, 2, port), torch::kCPU);
      group.barrier();
      if (r == 1) return;  // gone, as a killed process is
      auto t = torch::ones({4});
      group.all_reduce(t);
    });
    CHECK(error_of(errors, 0).find("rank 0 of 2: all-reduce failed") != std::string::npos);
    CHECK(error_of(errors, 0).find("; rank 1 stopped answering: it died, was killed") !=
          std::string::npos);
    CHECK(error_of(errors, 0).find("or the network between it and this machine is down") !=
          std::string::npos);
    CHECK(error_of(errors, 1) == "");
  }
  SUBCASE("rank 0 leaves: its store is gone with it") {
    const int port = distributed::free_port();
    const auto errors = on_two_ranks([&](int r) {
      distributed::Group group(world_of(r, 2, port), torch::kCPU);
      group.barrier();
      if (r == 0) return;
      auto t = torch::ones({4});
      group.all_reduce(t);
    });
    CHECK(error_of(errors, 1).find(
              "rank 0, which serves the rendezvous store at 127.0.0.1:" + std::to_string(port) +
              ", cannot be reached") != std::string::npos);
  }
  SUBCASE("rank 1 is alive but never comes to the all-reduce: the timeout, and no one named") {
    const int port = distributed::free_port();
    const auto errors = on_two_ranks([&](int r) {
      auto world = world_of(r, 2, port);
      world.timeout = std::chrono::milliseconds(2000);
      distributed::Group group(world, torch::kCPU);
      group.barrier();
      if (r == 1) {
        std::this_thread::sleep_for(std::chrono::seconds(7));
        return;
      }
      auto t = torch::ones({4});
      group.all_reduce(t);
    });
    CHECK(error_of(errors, 0).find("every rank is still running, so one of them did not come to "
                                   "this operation within 2 s") != std::string::npos);
  }
}
