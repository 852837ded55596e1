#include <doctest/doctest.h>

#include "engine/core/errors.hpp"
#include "engine/data/idx_reader.hpp"
#include "engine/data/mnist.hpp"
#include "tests/test_support.hpp"

using namespace engine;

namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const core::DataError& e) {
    return e.what();
  }
  return "(no DataError)";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("IDX files read plain and gzipped, any rank") {
  const auto dir = test::scratch_dir("idx");
  const std::vector<uint8_t> data = {1, 2, 3, 4, 5, 6};
  test::write_bytes(dir + "/a.idx", test::idx_bytes({2, 3}, data));
  test::write_bytes(dir + "/a.idx.gz", test::idx_bytes({2, 3}, data), true);
  for (const char* name : {"/a.idx", "/a.idx.gz"}) {
    auto t = data::read_idx(dir + name);
    CHECK((t.scalar_type() == torch::kUInt8));
    CHECK(t.sizes().vec() == std::vector<int64_t>{2, 3});
    CHECK(t[1][2].item<int>() == 6);
  }
}

TEST_CASE("big-endian multi-byte IDX elements come out in host order") {
  const auto dir = test::scratch_dir("idx-int32");
  std::vector<uint8_t> bytes = {0, 0, 0x0C, 1, 0, 0, 0, 2, 0, 0, 1, 0, 0xFF, 0xFF, 0xFF, 0xFE};
  test::write_bytes(dir + "/b.idx", bytes);
  auto t = data::read_idx(dir + "/b.idx");
  CHECK((t.scalar_type() == torch::kInt32));
  CHECK(t[0].item<int>() == 256);
  CHECK(t[1].item<int>() == -2);
}

TEST_CASE("bad IDX files stop with a message naming the file") {
  const auto dir = test::scratch_dir("idx-bad");
  auto good = test::idx_bytes({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8});

  auto truncated = good;
  truncated.resize(truncated.size() - 3);
  test::write_bytes(dir + "/truncated.idx", truncated);
  auto msg = error_of([&] { data::read_idx(dir + "/truncated.idx"); });
  CHECK(contains(msg, "truncated.idx"));
  CHECK(contains(msg, "truncated"));

  test::write_bytes(dir + "/truncated.idx.gz", truncated, true);
  CHECK(contains(error_of([&] { data::read_idx(dir + "/truncated.idx.gz"); }), "truncated.idx.gz"));

  auto magic = good;
  magic[0] = 0x1F;
  test::write_bytes(dir + "/magic.idx", magic);
  msg = error_of([&] { data::read_idx(dir + "/magic.idx"); });
  CHECK(contains(msg, "magic.idx"));
  CHECK(contains(msg, "magic number"));

  auto type = good;
  type[2] = 0x07;
  test::write_bytes(dir + "/type.idx", type);
  CHECK(contains(error_of([&] { data::read_idx(dir + "/type.idx"); }), "element type 0x07"));

  auto longer = good;
  longer.push_back(9);
  test::write_bytes(dir + "/long.idx", longer);
  CHECK(contains(error_of([&] { data::read_idx(dir + "/long.idx"); }), "longer than its header"));

  // A corrupt header declaring enormous sizes: refused before allocating, plain or gzipped.
  const std::vector<uint8_t> huge = {0,    0,    0x08, 2,    0xFF, 0xFF, 0xFF,
                                     0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 1,    2};
  test::write_bytes(dir + "/huge.idx", huge);
  msg = error_of([&] { data::read_idx(dir + "/huge.idx"); });
  CHECK(contains(msg, "huge.idx"));
  CHECK(contains(msg, "truncated"));
  test::write_bytes(dir + "/huge.idx.gz", huge, true);
  CHECK(contains(error_of([&] { data::read_idx(dir + "/huge.idx.gz"); }), "huge.idx.gz"));
  const std::vector<uint8_t> impossible = {0,    0,    0x0E, 3,    0xFF, 0xFF, 0xFF, 0xFF,
                                           0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
  test::write_bytes(dir + "/impossible.idx.gz", impossible, true);
  CHECK(
      contains(error_of([&] { data::read_idx(dir + "/impossible.idx.gz"); }), "impossible shape"));

  test::write_bytes(dir + "/empty.idx", {});
  CHECK(contains(error_of([&] { data::read_idx(dir + "/empty.idx"); }), "empty.idx"));

  CHECK(contains(error_of([&] { data::read_idx(dir + "/absent.idx"); }), "absent.idx"));
}

TEST_CASE("MNIST folders load as 1x28x28 images and int64 labels") {
  const auto dir = test::scratch_dir("mnist");
  test::write_mnist(dir, "train", 12);
  test::write_mnist(dir, "t10k", 5, /*gzip=*/false);
  auto train = data::load_mnist(dir, "train");
  CHECK(train->size() == 12);
  CHECK(train->input().sizes().vec() == std::vector<int64_t>{12, 1, 28, 28});
  CHECK((train->target().scalar_type() == torch::kInt64));
  CHECK(train->target()[11].item<int64_t>() == 1);
  auto batch = train->gather(torch::tensor({3, 0}, torch::kInt64));
  CHECK((batch.input.scalar_type() == torch::kFloat32));
  CHECK(batch.input.max().item<float>() <= 1.0f);
  CHECK(batch.target[0].item<int64_t>() == 3);
  CHECK(data::load_mnist(dir, "test")->size() == 5);
}

TEST_CASE("an MNIST folder whose label count differs from its image count is refused") {
  const auto dir = test::scratch_dir("mnist-mismatch");
  test::write_mnist(dir, "train", 6);
  test::write_bytes(dir + "/train-labels-idx1-ubyte.gz", test::idx_bytes({5}, {1, 2, 3, 4, 5}),
                    true);
  auto msg = error_of([&] { data::load_mnist(dir, "train"); });
  CHECK(contains(msg, "train-labels-idx1-ubyte.gz"));
  CHECK(contains(msg, "5 labels"));
  CHECK(contains(msg, "6 images"));
}

TEST_CASE("a missing MNIST file names the folder and how to get the data") {
  const auto dir = test::scratch_dir("mnist-missing");
  auto msg = error_of([&] { data::load_mnist(dir, "train"); });
  CHECK(contains(msg, dir));
  CHECK(contains(msg, "datasets/fetch mnist"));
}
