// The prefetcher on the CPU: one batch read ahead, handed out in order with its own position
// and skipped count; nothing copied (on CUDA the copy goes on a side stream: test_gpu).
#include <doctest/doctest.h>

#include "engine/data/device_prefetcher.hpp"
#include "engine/data/loader.hpp"
#include "engine/data/pipeline.hpp"
#include "engine/data/source.hpp"
#include "engine/data/transform.hpp"

using namespace engine;

TEST_CASE("the prefetcher hands the reader's batches on in order, one read ahead") {
  int reads = 0;
  const int total = 5;
  data::DevicePrefetcher prefetcher(
      [&]() -> std::optional<data::Batch> {
        if (reads == total) return std::nullopt;
        data::Batch batch;
        batch.input = torch::full({2, 3}, static_cast<float>(reads));
        batch.position = 2 * (reads + 1);
        batch.skipped_so_far = reads;
        ++reads;
        return batch;
      },
      torch::Device(torch::kCPU));
  CHECK(reads == 0);  // nothing read before it is asked
  for (int i = 0; i < total; ++i) {
    auto batch = prefetcher.next();
    REQUIRE(batch);
    CHECK(batch->input[0][0].item<float>() == static_cast<float>(i));
    CHECK(batch->position == 2 * (i + 1));  // the batch's own, not the one read ahead
    CHECK(batch->skipped_so_far == i);
    CHECK(reads == std::min(i + 2, total));  // the next one is already read
  }
  CHECK_FALSE(prefetcher.next());
  CHECK_FALSE(prefetcher.next());
}

TEST_CASE("through the prefetcher an epoch's batches are the reader's, also resumed midway") {
  torch::manual_seed(3);
  auto source =
      std::make_shared<data::TensorSource>(torch::randn({37, 4}), torch::arange(37) % 3, "numbers");
  const auto pipeline = data::Pipeline(source).shuffle().batch(5);
  for (const int64_t first_sample : {int64_t{0}, int64_t{12}}) {
    CAPTURE(first_sample);
    data::EpochReader direct(pipeline, 9, 1, first_sample);
    data::EpochReader behind(pipeline, 9, 1, first_sample);
    data::DevicePrefetcher prefetched([&] { return behind.next(); }, torch::Device(torch::kCPU));
    int batches = 0;
    while (auto expected = direct.next()) {
      auto got = prefetched.next();
      REQUIRE(got);
      CHECK(torch::equal(expected->input, got->input));
      CHECK(torch::equal(expected->target, got->target));
      CHECK(expected->position == got->position);
      ++batches;
    }
    CHECK_FALSE(prefetched.next());
    CHECK(batches == (first_sample == 0 ? 8 : 6));
  }
}

TEST_CASE("image bytes go to the device as uint8 and are scaled and normalised there") {
  torch::manual_seed(5);
  auto bytes = torch::randint(0, 256, {40, 1, 6, 6}, torch::kInt64).to(torch::kUInt8);
  auto source = std::make_shared<data::TensorSource>(bytes, torch::arange(40) % 10, "image bytes");
  const auto pipeline = data::Pipeline(source)
                            .map(std::make_shared<data::Normalize>(std::vector<double>{0.286},
                                                                   std::vector<double>{0.353}))
                            .shuffle()
                            .batch(16);
  data::EpochReader as_floats(pipeline, 2, 0);
  data::EpochReader as_bytes(pipeline, 2, 0, 0, false, /*to_device=*/true);
  REQUIRE(as_bytes.device_transforms().size() == 1);
  CHECK(as_floats.device_transforms().empty());
  data::DevicePrefetcher on_device(
      [&] {
        auto batch = as_bytes.next();
        if (batch) CHECK((batch->input.scalar_type() == torch::kUInt8));  // a quarter of the bytes
        return batch;
      },
      torch::Device(torch::kCPU), as_bytes.device_transforms());
  int batches = 0;
  while (auto expected = as_floats.next()) {
    auto got = on_device.next();
    REQUIRE(got);
    CHECK((got->input.scalar_type() == torch::kFloat32));
    CHECK_FALSE(got->scale_bytes);
    // the same values up to the last bit (a division by 255 may round as a multiplication)
    CHECK(torch::allclose(expected->input, got->input, 1e-6, 1e-6));
    CHECK(torch::equal(expected->target, got->target));
    ++batches;
  }
  CHECK(batches == 3);
}

TEST_CASE("a pipeline with a transform the device cannot take is read as before") {
  auto source = std::make_shared<data::TensorSource>(torch::zeros({8, 1, 4, 4}, torch::kUInt8),
                                                     torch::arange(8), "image bytes");
  const auto pipeline = data::Pipeline(source).map(std::make_shared<data::OneHot>(8)).batch(4);
  data::EpochReader reader(pipeline, 1, 0, 0, false, /*to_device=*/true);
  CHECK(reader.device_transforms().empty());
  auto batch = reader.next();
  REQUIRE(batch);
  CHECK((batch->input.scalar_type() == torch::kFloat32));  // the source's own floats
}

TEST_CASE("normalize leaves a batch that is not in host memory to tensor operations") {
  // a batch the prefetcher normalises on a GPU: the host loop over its data would read device
  // memory (the README job crashed so on CUDA); the meta device stands in for one here
  std::vector<core::Rng> no_random;
  for (const auto& mean : {std::vector<double>{0.286}, std::vector<double>{0.4, 0.5, 0.6}}) {
    data::Batch batch;
    batch.input = torch::empty({4, 3, 5, 5}, torch::TensorOptions().device(torch::kMeta));
    data::Normalize(mean, std::vector<double>(mean.size(), 0.35)).apply(batch, no_random);
    CHECK(batch.input.device().is_meta());
    CHECK((batch.input.sizes().vec() == std::vector<int64_t>{4, 3, 5, 5}));
  }
}
