// data.caffe_lmdb / --data_backend caffe_lmdb: a Caffe LMDB image dataset (a folder holding
// data.mdb and lock.mdb, as Caffe's convert_imageset writes it; DLBS's default data backend).
// Each record is a Caffe Datum: raw C x H x W pixels (BGR, as Caffe stores colour, turned to
// RGB here) or an encoded JPEG/PNG, and a label. Records are read in key order; sample i is the
// i-th key. Built only where liblmdb and protobuf are (Debian's liblmdb-dev, libprotobuf-dev,
// protobuf-compiler); elsewhere opening one is a UsageError saying so.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/data/image_codec.hpp"
#include "engine/data/source.hpp"

namespace engine::data {

class CaffeLmdbSource : public Source {
 public:
  // Opens the database read-only and lists its keys. IoError for a folder that is not an LMDB
  // database, naming it; DataError for an empty one.
  CaffeLmdbSource(std::string root, ColorMode mode);
  ~CaffeLmdbSource() override;
  int64_t size() const override { return static_cast<int64_t>(keys_.size()); }
  // Samples unstacked (batch.samples), C x H x W uint8: records may differ in size. A record
  // that is not a Datum, or whose pixels do not fill its shape, is a DataError naming its key.
  Batch gather(const torch::Tensor& indices) const override;
  std::string describe() const override;

 private:
  struct Database;
  std::string root_;
  ColorMode mode_;
  std::unique_ptr<Database> database_;
  std::vector<std::string> keys_;
};

// Whether this engine was built with liblmdb and protobuf.
bool caffe_lmdb_available();

// Writes a Caffe LMDB database at `root` (a new folder) of these records: each image C x H x W
// uint8 (stored raw, BGR, or, with `encode_png`, as an encoded PNG) with its label, under keys
// 00000000, 00000001, ... (test fixtures, tools).
void write_caffe_lmdb(const std::string& root, const std::vector<torch::Tensor>& images,
                      const std::vector<int64_t>& labels, bool encode_png = false);

}  // namespace engine::data
