#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>

#include "engine/core/errors.hpp"
#include "engine/data/dataset_finder.hpp"
#include "engine/data/loader.hpp"
#include "engine/data/source.hpp"
#include "tests/test_support.hpp"

using namespace engine;

namespace {

data::Pipeline numbered(int64_t n) {
  auto input = torch::arange(n, torch::kFloat32).view({n, 1});
  auto target = torch::arange(n, torch::kInt64);
  return data::Pipeline(std::make_shared<data::TensorSource>(input, target, "numbered"));
}

std::vector<int64_t> epoch_targets(const data::Pipeline& p, uint64_t seed, int64_t epoch,
                                   int64_t first = 0) {
  data::EpochReader reader(p, seed, epoch, first);
  std::vector<int64_t> out;
  while (auto b = reader.next()) {
    for (int64_t i = 0; i < b->target.numel(); ++i) out.push_back(b->target[i].item<int64_t>());
  }
  return out;
}

}  // namespace

TEST_CASE("batching covers every sample once, with a short last batch unless drop_last") {
  auto p = numbered(10).batch(4);
  CHECK(p.size() == 3);
  CHECK(epoch_targets(p, 0, 0) == std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  CHECK(numbered(10).batch(4, true).size() == 2);
  CHECK(epoch_targets(numbered(10).batch(4, true), 0, 0).size() == 8);
}

TEST_CASE("shuffling depends on seed and epoch only, not on the number of workers") {
  auto p = numbered(100).shuffle().batch(7);
  const auto a = epoch_targets(p.workers(1), 5, 0);
  CHECK(a == epoch_targets(p.workers(3), 5, 0));
  CHECK(a == epoch_targets(p.workers(2).prefetch(1), 5, 0));
  CHECK(a == epoch_targets(p.workers(0), 5, 0));  // made on this thread, as num_workers=0
  CHECK(a != epoch_targets(p, 5, 1));
  CHECK(a != epoch_targets(p, 6, 0));
  auto sorted = a;
  std::sort(sorted.begin(), sorted.end());
  CHECK(sorted == epoch_targets(numbered(100).batch(7), 0, 0));
}

TEST_CASE("an epoch can start at any sample and continues in the same order") {
  auto p = numbered(50).shuffle().batch(8).workers(2);
  const auto all = epoch_targets(p, 3, 2);
  CHECK(epoch_targets(p, 3, 2, 32) == std::vector<int64_t>(all.begin() + 32, all.end()));
  CHECK(epoch_targets(p, 3, 2, 35) == std::vector<int64_t>(all.begin() + 35, all.end()));
  CHECK(epoch_targets(p, 3, 2, 50).empty());
  CHECK(epoch_targets(p.workers(0), 3, 2, 35) == std::vector<int64_t>(all.begin() + 35, all.end()));
  // mid-batch: the rest of that batch first, then the batches an uninterrupted epoch yields
  data::EpochReader reader(p, 3, 2, 35);
  CHECK(reader.next()->size() == 5);
  CHECK(reader.next()->size() == 8);
}

TEST_CASE("a worker's error reaches the consumer") {
  struct Failing : data::Source {
    int64_t size() const override { return 10; }
    data::Batch gather(const torch::Tensor&) const override {
      throw core::DataError("broken sample");
    }
    std::string describe() const override { return "failing"; }
  };
  data::Pipeline p(std::make_shared<Failing>());
  data::EpochReader reader(p.batch(2), 0, 0);
  CHECK_THROWS_WITH_AS(reader.next(), "broken sample", core::DataError);
  data::EpochReader inline_reader(p.batch(2).workers(0), 0, 0);
  CHECK_THROWS_WITH_AS(inline_reader.next(), "broken sample", core::DataError);
  CHECK_THROWS_WITH_AS(p.workers(-1),
                       doctest::Contains(":workers expects a number of threads, or 0"),
                       core::UsageError);
}

TEST_CASE("a reader stopped early joins its workers") {
  auto p = numbered(1000).batch(1).prefetch(2).workers(2);
  for (int i = 0; i < 20; ++i) {
    data::EpochReader reader(p, 0, 0);
    CHECK(reader.next().has_value());
  }
}

TEST_CASE("normalize uses one value or one per channel") {
  data::Batch b{torch::ones({2, 3, 2, 2}), torch::Tensor()};
  std::vector<core::Rng> none;
  data::Normalize({0.5}, {0.25}).apply(b, none);
  CHECK(b.input.max().item<float>() == doctest::Approx(2.0));
  data::Batch c{torch::ones({2, 3, 2, 2}), torch::Tensor()};
  data::Normalize({0, 1, 2}, {1, 1, 1}).apply(c, none);
  CHECK(c.input[0][2][0][0].item<float>() == doctest::Approx(-1.0));
  CHECK_THROWS_AS(data::Normalize({0, 1}, {1, 1}).apply(c, none), core::DataError);
  CHECK_THROWS_AS(data::Normalize({0}, {0}), core::UsageError);
}

TEST_CASE("datasets are found by name, and a miss lists every folder looked at") {
  const auto dir = test::scratch_dir("finder");
  std::filesystem::create_directories(dir + "/fashion-mnist");
  test::write_bytes(dir + "/fashion-mnist/x", {1});
  CHECK(data::find_dataset("fashion_mnist", {dir}) == dir + "/fashion-mnist");
  try {
    data::find_dataset("mnist", {dir});
    FAIL("expected DataError");
  } catch (const core::DataError& e) {
    CHECK(std::string(e.what()).find(dir + "/mnist") != std::string::npos);
    CHECK(std::string(e.what()).find("datasets/fetch mnist") != std::string::npos);
  }
}

TEST_CASE("a rank's training share splits the global batch; together the ranks read it") {
  const auto p = numbered(40).shuffle().batch(8);
  std::vector<std::vector<int64_t>> batches[2];
  for (int rank = 0; rank < 2; ++rank) {
    const auto share = p.training_share(rank, 2);
    CHECK(share.batch_size() == 4);
    CHECK(share.size() == p.size());  // every rank takes as many steps as one process would
    data::EpochReader reader(share, 5, 1);
    while (auto b = reader.next()) {
      std::vector<int64_t> t(b->target.data_ptr<int64_t>(),
                             b->target.data_ptr<int64_t>() + b->target.numel());
      batches[rank].push_back(t);
    }
  }
  data::EpochReader whole(p, 5, 1);
  for (size_t k = 0; k < batches[0].size(); ++k) {
    auto b = whole.next();
    REQUIRE(b);
    std::vector<int64_t> expected(b->target.data_ptr<int64_t>(),
                                  b->target.data_ptr<int64_t>() + b->target.numel());
    std::vector<int64_t> joined = batches[0][k];
    joined.insert(joined.end(), batches[1][k].begin(), batches[1][k].end());
    std::sort(joined.begin(), joined.end());
    std::sort(expected.begin(), expected.end());
    CHECK(joined == expected);
  }
  CHECK_THROWS_AS(numbered(40).batch(6).training_share(0, 4), core::UsageError);
  CHECK_THROWS_AS(numbered(40).shard(0, 2).batch(8).training_share(0, 2), core::UsageError);
}

TEST_CASE("evaluation shares count each sample once, without padding") {
  const auto p = numbered(11).batch(4);
  std::vector<int64_t> seen;
  for (int rank = 0; rank < 3; ++rank) {
    const auto share = p.evaluation_share(rank, 3);
    CHECK(share.batch_size() == 4);
    const auto t = epoch_targets(share, 1, 0);
    CHECK(static_cast<int64_t>(t.size()) == share.num_samples());
    seen.insert(seen.end(), t.begin(), t.end());
  }
  std::sort(seen.begin(), seen.end());
  std::vector<int64_t> all(11);
  std::iota(all.begin(), all.end(), 0);
  CHECK(seen == all);
}
