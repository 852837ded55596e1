// The trainer over a dist::Group of two ranks (one thread each, loopback Gloo) against one
// process: the same global batches, so the same metric series and weights up to rounding.
#include <doctest/doctest.h>

#include <thread>

#include "engine/dist/group.hpp"
#include "engine/dist/launcher.hpp"
#include "engine/train/trainer.hpp"
#include "tests/train/blob_spec.hpp"

using namespace engine;
using engine::test::all_weights;
using engine::test::blob_spec;
using engine::test::Recorder;

namespace {

dist::World rank_of_two(int rank, int port) {
  dist::World w;
  w.rank = w.local_rank = rank;
  w.size = w.local_size = 2;
  w.master_port = port;
  w.timeout = std::chrono::milliseconds(30000);
  return w;
}

void check_close(const Recorder& a, const Recorder& b) {
  const auto x = a.series(), y = b.series();
  REQUIRE(x.size() == y.size());
  for (size_t i = 0; i < x.size(); ++i) {
    CHECK(std::get<0>(x[i]) == std::get<0>(y[i]));
    CHECK(std::get<1>(x[i]) == std::get<1>(y[i]));
    for (const auto& [name, value] : std::get<3>(x[i])) {
      INFO(std::get<0>(x[i]), " step ", std::get<1>(x[i]), " ", name);
      REQUIRE(std::get<3>(y[i]).count(name) == 1);
      CHECK(std::get<3>(y[i]).at(name) == doctest::Approx(value).epsilon(1e-5));
    }
  }
}

}  // namespace

TEST_CASE("two ranks with half of each batch train as one process does") {
  for (const int64_t accumulate : {1, 3}) {
    CAPTURE(accumulate);
    auto whole = blob_spec(7);
    whole.options.accumulate = accumulate;
    Recorder one;
    train::Trainer(whole, {&one}).run();

    train::TrainSpec specs[2] = {blob_spec(7), blob_spec(7)};
    Recorder ranks[2];
    std::string errors[2];
    const int port = dist::free_port();
    std::vector<std::thread> threads;
    for (int r = 0; r < 2; ++r) {
      specs[r].options.accumulate = accumulate;
      threads.emplace_back([&, r] {
        try {
          dist::Group group(rank_of_two(r, port), torch::kCPU);
          train::Trainer(specs[r], {&ranks[r]}, {}, &group).run();
        } catch (const std::exception& e) {
          errors[r] = e.what();
        }
      });
    }
    for (auto& t : threads) t.join();
    CHECK(errors[0] == "");
    CHECK(errors[1] == "");
    CHECK(specs[0].train_data->batch_size() == 16);  // the global batch of 32, halved
    check_close(one, ranks[0]);
    check_close(one, ranks[1]);
    CHECK(torch::equal(all_weights(specs[0]), all_weights(specs[1])));
    CHECK(torch::allclose(all_weights(whole), all_weights(specs[0]), 1e-4, 1e-5));
  }
}
