// data::CaffeLmdbSource: Caffe LMDB image datasets, built here with liblmdb; a record written
// byte by byte as Caffe's Datum encodes it reads as the one written through the .proto.
#include <doctest/doctest.h>

#include <lmdb.h>

#include "engine/core/errors.hpp"
#include "engine/data/caffe_lmdb.hpp"
#include "tests/test_support.hpp"

using namespace engine;

namespace {

// A 3 x 2 x 2 image whose pixels say their channel (10, 20, 30) and place (0..3).
torch::Tensor small_image(int offset) {
  auto image = torch::empty({3, 2, 2}, torch::kUInt8);
  for (int c = 0; c < 3; ++c) {
    for (int p = 0; p < 4; ++p) image[c][p / 2][p % 2] = 10 * (c + 1) + p + offset;
  }
  return image;
}

// Puts a record of raw bytes under `key` (a database another program wrote).
void put_raw(const std::string& root, const std::string& key, const std::string& bytes) {
  MDB_env* env = nullptr;
  REQUIRE(mdb_env_create(&env) == 0);
  REQUIRE(mdb_env_set_mapsize(env, size_t{1} << 30) == 0);
  REQUIRE(mdb_env_open(env, root.c_str(), 0, 0664) == 0);
  MDB_txn* txn = nullptr;
  REQUIRE(mdb_txn_begin(env, nullptr, 0, &txn) == 0);
  MDB_dbi dbi = 0;
  REQUIRE(mdb_dbi_open(txn, nullptr, 0, &dbi) == 0);
  MDB_val k{key.size(), const_cast<char*>(key.data())};
  MDB_val v{bytes.size(), const_cast<char*>(bytes.data())};
  REQUIRE(mdb_put(txn, dbi, &k, &v, 0) == 0);
  REQUIRE(mdb_txn_commit(txn) == 0);
  mdb_env_close(env);
}

}  // namespace

TEST_CASE("caffe_lmdb: raw BGR and encoded records read back as RGB images with labels") {
  if (!data::caffe_lmdb_available()) {
    CHECK_THROWS_AS(data::CaffeLmdbSource("/nowhere", data::ColorMode::kRgb), core::UsageError);
    return;
  }
  const auto dir = test::scratch_dir("caffe-lmdb");
  data::write_caffe_lmdb(dir + "/raw", {small_image(0), small_image(1)}, {3, 7});
  data::write_caffe_lmdb(dir + "/png", {small_image(0)}, {5}, /*encode_png=*/true);

  data::CaffeLmdbSource raw(dir + "/raw", data::ColorMode::kRgb);
  CHECK(raw.size() == 2);
  CHECK(raw.describe() == "caffe_lmdb(" + dir + "/raw, 2 records)");
  auto batch = raw.gather(torch::tensor({1, 0}, torch::kInt64));
  REQUIRE(batch.samples.size() == 2);
  CHECK(torch::equal(batch.samples[0], small_image(1)));
  CHECK(torch::equal(batch.samples[1], small_image(0)));
  CHECK(batch.target.equal(torch::tensor({7, 3}, torch::kInt64)));

  data::CaffeLmdbSource png(dir + "/png", data::ColorMode::kRgb);
  CHECK(torch::equal(png.gather(torch::tensor({0}, torch::kInt64)).samples[0], small_image(0)));
  // gray: the luminance of each pixel
  data::CaffeLmdbSource gray(dir + "/raw", data::ColorMode::kGray);
  const auto g = gray.gather(torch::tensor({0}, torch::kInt64)).samples[0];
  CHECK(g.sizes() == torch::IntArrayRef({1, 2, 2}));
  CHECK(g[0][0][0].item<int>() == 18);  // 0.299 * 10 + 0.587 * 20 + 0.114 * 30 = 18.15
}

TEST_CASE("caffe_lmdb: Caffe's bytes, and records that are not images, named by key") {
  if (!data::caffe_lmdb_available()) return;
  const auto dir = test::scratch_dir("caffe-lmdb-bytes");
  data::write_caffe_lmdb(dir + "/db", {small_image(0)}, {1});
  // channels 1, height 1, width 2, data "\x05\x06", label 4: Datum's fields 1, 2, 3, 4, 5
  put_raw(dir + "/db", "k1", std::string("\x08\x01\x10\x01\x18\x02\x22\x02\x05\x06\x28\x04", 12));
  put_raw(dir + "/db", "k2", std::string("\x08\x03\x10\x02\x18\x02\x22\x01\x00", 9));
  put_raw(dir + "/db", "k3", "\xff\xff\xff");
  data::CaffeLmdbSource source(dir + "/db", data::ColorMode::kGray);
  REQUIRE(source.size() == 4);  // key order: 00000000, k1, k2, k3
  const auto batch = source.gather(torch::tensor({1}, torch::kInt64));
  CHECK(torch::equal(batch.samples[0], torch::tensor({5, 6}, torch::kUInt8).view({1, 1, 2})));
  CHECK(batch.target.item<int64_t>() == 4);
  CHECK_THROWS_WITH_AS(source.gather(torch::tensor({2}, torch::kInt64)),
                       doctest::Contains("record 'k2': 1 pixel bytes for a 3 x 2 x 2 image"),
                       core::DataError);
  CHECK_THROWS_WITH_AS(source.gather(torch::tensor({3}, torch::kInt64)),
                       doctest::Contains("record 'k3' is not a Caffe Datum"), core::DataError);
  CHECK_THROWS_WITH_AS(data::CaffeLmdbSource(dir, data::ColorMode::kRgb),
                       doctest::Contains("is not an LMDB database (a folder holding data.mdb)"),
                       core::IoError);
}
